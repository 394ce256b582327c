/*
 * The Lua scripts that give BullMQ (which has no per-key order outside BullMQ Pro) one job per stream at a time, in
 * enqueue order. Each runs atomically in Redis, so receivers and workers of any number of processes see a stream's
 * list, its head marker and the backlog counter change together.
 *
 * Invariant: a stream's head marker exists exactly when its list is not empty, and holds the BullMQ job id of the
 * list's first event (`kyb-` + SHA-1 of the event's key). Only that event is ever a BullMQ job.
 */
import { createHash } from 'node:crypto';

/**
 * The BullMQ job id of the event with dedupe key `key` while it is its stream's head: `kyb-` and the SHA-1 of the key
 * (UTF-8), the same in the Lua scripts (`redis.sha1hex`) and here, in every process and every version of this
 * package. No `:` (BullMQ refuses it in custom ids) and never all digits (BullMQ refuses integer-like ids).
 *
 * @example
 * ```ts
 * const job = await bullQueue.getJob(headJobIdOf(event.key)) // the head job of a blocked stream, say
 * ```
 */
export function headJobIdOf(key: string): string {
  return `kyb-${createHash('sha1').update(key, 'utf8').digest('hex')}`;
}

/**
 * Pops the finished head (KEYS[1] list, KEYS[2] head marker, KEYS[3] set of streams with a head, KEYS[4] backlog;
 * ARGV[2] the stream id) and moves the head marker to the next event, whose entry it returns ({1, entry}), or clears
 * it ({1}) when the list is empty.
 */
const POP = `
redis.call('LPOP', KEYS[1])
redis.call('DECR', KEYS[4])
local nxt = redis.call('LINDEX', KEYS[1], 0)
if not nxt then
  redis.call('DEL', KEYS[2])
  redis.call('SREM', KEYS[3], ARGV[2])
  return {1}
end
redis.call('SET', KEYS[2], 'kyb-' .. redis.sha1hex(cjson.decode(nxt)['key']))
return {1, nxt}
`;

/**
 * enqueue: KEYS[1] dedupe marker, KEYS[2] list, KEYS[3] head marker, KEYS[4] heads set, KEYS[5] backlog;
 * ARGV[1] entry, ARGV[2] marker TTL (s), ARGV[3] maxBacklog, ARGV[4] the event's job id, ARGV[5] stream id.
 * Returns 0 duplicate, -1 over the backlog, 1 enqueued behind a head, 2 enqueued as the stream's head (the caller
 * adds its BullMQ job).
 */
export const ENQUEUE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if tonumber(redis.call('GET', KEYS[5]) or '0') >= tonumber(ARGV[3]) then return -1 end
redis.call('SET', KEYS[1], '1', 'EX', ARGV[2])
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('INCR', KEYS[5])
if redis.call('SET', KEYS[3], ARGV[4], 'NX') then
  redis.call('SADD', KEYS[4], ARGV[5])
  return 2
end
return 1
`;

/**
 * After the head job ARGV[1] succeeded (keys as POP): pops it, if it is still the head ({0} when not: a stale
 * rerun of a job whose event was already done or skipped).
 */
export const ADVANCE = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return {0} end
${POP}`;

/**
 * skipBlocked: keys as POP, KEYS[5] the skips list, KEYS[6] BullMQ's failed set; ARGV[1] the head job id, ARGV[3]
 * the skip record, ARGV[4] how many skip records to keep. Skips only a head whose job is failed (the stream is
 * blocked), and takes the job out of BullMQ's failed set, so two skips, or a skip and a `job.retry()` (which BullMQ
 * refuses for a job not in that set), cannot both win. The caller then removes the job itself.
 */
export const SKIP = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return {0} end
if not redis.call('ZSCORE', KEYS[6], ARGV[1]) then return {0} end
redis.call('ZREM', KEYS[6], ARGV[1])
redis.call('LPUSH', KEYS[5], ARGV[3])
redis.call('LTRIM', KEYS[5], 0, tonumber(ARGV[4]) - 1)
${POP}`;

/** The SHA-1 of a script, for EVALSHA. */
export function shaOf(script: string): string {
  return createHash('sha1').update(script, 'utf8').digest('hex');
}
