import {
  checkListStreamsOptions,
  checkSkipArguments,
  checkStreamArguments,
  checkStreamId,
  createLeaseToken,
  cursorRetention,
  inOrderCursorRetention,
  describeValue,
  optionRules,
  readStreamPageToken,
  storeDurationMs,
  streamPageToken,
  validateOptions,
  type ClaimResult,
  type CompleteInOrderResult,
  type ExtendOptions,
  type OptionRule,
  type OptionsSpec,
  type SkippedSeq,
  type StreamActivity,
  type StreamCursorStore,
} from '@kyb-webhooks/core/store';
import { scriptRunner, setNxGet, type RedisClientLike } from './client.js';
import {
  ADVANCE_CURSOR,
  CLAIM,
  COMPLETE,
  COMPLETE_IN_ORDER,
  EXTEND,
  GET_CURSOR,
  GET_CURSORS,
  LIST_ACTIVE,
  LIST_SKIPS,
  PRUNE_EXPIRED,
  RELEASE,
  SKIP_SEQ,
} from './scripts.js';

/**
 * Options of {@link createRedisStore}.
 *
 * @example
 * ```ts
 * const options: RedisStoreOptions = { client: new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'), prefix: 'shop:kyb:' }
 * ```
 */
export interface RedisStoreOptions {
  /** A connected ioredis or node-redis v5 client (or cluster). The store never connects, quits or closes it. */
  client: RedisClientLike;
  /** Prepended to every key. Default `'kyb:dedupe:'`. */
  prefix?: string;
}

/**
 * The default key prefix of {@link createRedisStore}: event `01J…` is kept under `kyb:dedupe:{01J…}`.
 *
 * @example
 * ```ts
 * await redis.del(`${DEFAULT_REDIS_PREFIX}{${eventId}}`) // forget one event by hand
 * ```
 */
export const DEFAULT_REDIS_PREFIX = 'kyb:dedupe:';

/**
 * What {@link createRedisStore} returns: a {@link StreamCursorStore} whose optional `extend` is always there, so a
 * handler past `handlerTimeoutMs` keeps its claim while it runs.
 *
 * @example
 * ```ts
 * const store: RedisStore = createRedisStore({ client })
 * await store.extend(eventId, token, { leaseMs: 60_000 }) // false once the token no longer holds the lease
 * ```
 */
export interface RedisStore extends StreamCursorStore {
  extend(eventId: string, token: string, options: ExtendOptions): Promise<boolean>;
}

/**
 * A dedupe store in Redis (standalone, Sentinel or Cluster; Valkey too), for receivers running in several processes.
 * A claim is one native `SET … NX GET PX` (a Lua script on Redis before 7.0); complete, release and extend (a late
 * handler's lease kept, by `PEXPIRE`) are each one Lua script, run by EVALSHA: one round trip per step.
 * Redis's clock decides when a lease or a retention ends (key TTLs). Errors, such as a lost connection, are thrown,
 * and the receiver answers 503 `store_unavailable` so the service retries.
 *
 * Each event is one key, `<prefix>{<eventId>}`: the braces are a Cluster hash tag, so whatever the store keeps about
 * one event lives in one slot and a script never spans nodes.
 *
 * Stream cursors (`StreamCursorStore`, for ordering) are one key per stream, `<prefix>{<streamId>}:cursor`, holding
 * the last seq processed, with the events' retention as its TTL. `completeInOrder` is one Lua script over the event's
 * key and the cursor's key, so completing and advancing are one atomic step on a standalone server, Sentinel or
 * Valkey. On Redis Cluster the two keys hash to different slots in general (one is tagged by event id, the other by
 * stream id, and a claim does not know the stream), which Cluster refuses with CROSSSLOT rather than run
 * non-atomically: the store then throws an error saying so. Use a non-cluster Redis for ordering; dedupe alone works
 * on Cluster.
 *
 * `skipSeq` (ordering's recorded way past an event the API can never serve verifiably) is one Lua script that moves
 * the cursor and writes the skip, with its reason and the server's time, into a hash beside it,
 * `<prefix>{<streamId>}:skips`, kept as long as the cursor; `listSkips` reads that hash.
 *
 * `listStreams` reads a sorted set, `<prefix>streams:activity`: each stream id scored by the server's time (ms) of
 * its cursor's last write, updated by the same scripts that write cursors (so it needs Redis 5+, or 3.2+ with
 * effects replication). A second one, `<prefix>streams:expiry`, scores each stream by when its cursor expires;
 * each write drops the streams whose cursor expired from both, and `listStreams` drops those it finds.
 *
 * @example
 * ```ts
 * import Redis from 'ioredis' // or: import { createClient } from 'redis'
 * import { createRedisStore } from '@kyb-webhooks/store-redis'
 *
 * const store = createRedisStore({ client: new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379') })
 * const receiver = createReceiver({ secrets, attestation, store })
 * ```
 */
export function createRedisStore(options: RedisStoreOptions): RedisStore {
  validateOptions(options, OPTIONS_SPEC);
  const run = scriptRunner(options.client);
  const setIfMissing = setNxGet(options.client);
  // Redis before 7.0 rejects NX together with GET; then every claim goes through the script instead.
  let nativeClaim = true;
  const prefix = options.prefix ?? DEFAULT_REDIS_PREFIX;
  const key = (eventId: string): string => `${prefix}{${eventId}}`;
  const held = (token: string): string => `p:${token}`;
  const cursorKey = (streamId: string): string => `${prefix}{${streamId}}:cursor`;
  const skipsKey = (streamId: string): string => `${prefix}{${streamId}}:skips`;
  // No braces: an event key always has them after the prefix, so this name can never be an event's or a cursor's.
  const activityKey = `${prefix}streams:activity`;
  const expiryKey = `${prefix}streams:expiry`;

  return {
    async claim(eventId, { leaseMs }): Promise<ClaimResult> {
      const token = createLeaseToken();
      const lease = milliseconds('leaseMs', leaseMs);
      if (nativeClaim) {
        try {
          const previous = await setIfMissing(key(eventId), held(token), Number(lease));
          if (previous === null) return { status: 'acquired', token };
          return { status: previous === 'c' ? 'completed' : 'in_progress' };
        } catch (error) {
          if (!/syntax error|wrong number of arguments/i.test(String((error as Error)?.message))) throw error;
          nativeClaim = false;
        }
      }
      const status = String(await run(CLAIM, key(eventId), [held(token), lease]));
      if (status === 'acquired') return { status, token };
      if (status === 'in_progress' || status === 'completed') return { status };
      throw new Error(`Unexpected reply from the Redis claim script: ${status.slice(0, 40)}`);
    },
    async complete(eventId, token, { retainMs }): Promise<boolean> {
      return Number(await run(COMPLETE, key(eventId), [held(token), milliseconds('retainMs', retainMs)])) === 1;
    },
    async release(eventId, token): Promise<boolean> {
      return Number(await run(RELEASE, key(eventId), [held(token)])) === 1;
    },
    async extend(eventId, token, { leaseMs }): Promise<boolean> {
      return Number(await run(EXTEND, key(eventId), [held(token), milliseconds('leaseMs', leaseMs)])) === 1;
    },
    async getCursor(streamId): Promise<number | null> {
      checkStreamId(streamId);
      const value = await run(GET_CURSOR, cursorKey(streamId), []);
      return value === null || value === undefined ? null : Number(value);
    },
    async completeInOrder(eventId, token, options): Promise<CompleteInOrderResult> {
      const { retainMs, streamId, seq, firstSeq } = options;
      checkStreamArguments(streamId, seq, firstSeq);
      const args = [held(token), milliseconds('retainMs', retainMs), String(seq), String(firstSeq)];
      args.push(streamId, milliseconds('cursorRetainMs', inOrderCursorRetention(options)));
      const outcome = String(
        await crossSlotExplained(
          run(COMPLETE_IN_ORDER, [key(eventId), cursorKey(streamId), activityKey, expiryKey], args),
        ),
      );
      if (outcome === 'completed' || outcome === 'lease_lost' || outcome === 'cursor_moved') return outcome;
      throw new Error(`Unexpected reply from the Redis completeInOrder script: ${outcome.slice(0, 40)}`);
    },
    async advanceCursor(streamId, seq, advance): Promise<boolean> {
      checkStreamArguments(streamId, seq);
      const args = [String(seq), milliseconds('retainMs', cursorRetention(advance)), streamId];
      return (
        Number(await crossSlotExplained(run(ADVANCE_CURSOR, [cursorKey(streamId), activityKey, expiryKey], args))) === 1
      );
    },
    async skipSeq(streamId, seq, skip): Promise<boolean> {
      const { firstSeq } = checkSkipArguments(streamId, seq, skip);
      const record = JSON.stringify(
        skip.eventId === undefined ? { reason: skip.reason } : { reason: skip.reason, eventId: skip.eventId },
      );
      const args = [String(seq), milliseconds('retainMs', skip.retainMs), streamId, String(firstSeq), record];
      return (
        Number(
          await crossSlotExplained(
            run(SKIP_SEQ, [cursorKey(streamId), skipsKey(streamId), activityKey, expiryKey], args),
          ),
        ) === 1
      );
    },
    async listSkips(streamId): Promise<SkippedSeq[]> {
      checkStreamId(streamId);
      const flat = ((await run(LIST_SKIPS, skipsKey(streamId), [])) ?? []) as unknown[];
      const skips: SkippedSeq[] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) skips.push(readSkip(Number(flat[i]), String(flat[i + 1])));
      return skips.sort((a, b) => a.seq - b.seq);
    },
    async listStreams(options) {
      const { activeSince, limit, after } = checkListStreamsOptions(options);
      const from = after === undefined ? undefined : readStreamPageToken(after);
      // Keyset paging over the index (score, then stream id in byte order, as Redis orders it): each read starts after
      // the last (score, id) seen, the page token's for the first. Entries whose cursor expired are left out (and
      // dropped from the index). One more than a page is looked for, to know whether a next page exists.
      const fromToken = from !== undefined && from.activeAt >= activeSince;
      let min = fromToken ? from.activeAt : activeSince;
      let lastId = fromToken ? from.streamId : '';
      const kept: StreamActivity[] = [];
      while (kept.length <= limit) {
        const flat = (await run(LIST_ACTIVE, activityKey, [String(min), lastId, String(limit + 1)])) as unknown[];
        const batch: { streamId: string; activeAt: number }[] = [];
        for (let i = 0; i + 1 < flat.length; i += 2)
          batch.push({ streamId: String(flat[i]), activeAt: Number(flat[i + 1]) });
        if (batch.length === 0) break;
        const seqs = (await run(
          GET_CURSORS,
          batch.map((entry) => cursorKey(entry.streamId)),
          [],
        )) as unknown[];
        const gone: string[] = [];
        batch.forEach((entry, index) => {
          const seq = seqs[index];
          if (seq !== null && seq !== undefined && seq !== false) kept.push({ ...entry, seq: Number(seq) });
          else gone.push(entry.streamId);
        });
        if (gone.length > 0) await run(PRUNE_EXPIRED, [activityKey, expiryKey, ...gone.map(cursorKey)], gone);
        const last = batch[batch.length - 1]!;
        [min, lastId] = [last.activeAt, last.streamId];
        if (batch.length < limit + 1) break;
      }
      const streams = kept.slice(0, limit);
      const last = streams[streams.length - 1];
      return { streams, next: kept.length > limit && last ? streamPageToken(last.activeAt, last.streamId) : undefined };
    },
  };
}

const CLIENT_FIX =
  'pass a connected ioredis client (new Redis(url) / new Cluster(nodes)) or a node-redis client, v5 (await createClient({ url }).connect())';

/** ioredis names the script command evalsha, node-redis evalSha; either way set and eval are needed too. */
const clientRule: OptionRule = (value) => {
  if (typeof value !== 'object' || value === null || typeof (value as { then?: unknown }).then === 'function') {
    return `must be a Redis client: ${CLIENT_FIX}; got ${describeValue(value)}.`;
  }
  const has = (name: string): boolean => typeof (value as Record<string, unknown>)[name] === 'function';
  const script = has('evalSha') ? 'evalSha' : has('evalsha') ? 'evalsha' : undefined;
  if (script === undefined) return `is not a Redis client (it has neither evalsha nor evalSha): ${CLIENT_FIX}.`;
  const missing = ['set', 'eval'].filter((name) => !has(name));
  return missing.length === 0 ? undefined : `has no ${missing.join(' or ')} method: ${CLIENT_FIX}.`;
};

const OPTIONS_SPEC: OptionsSpec = {
  owner: 'createRedisStore',
  example: 'createRedisStore({ client: new Redis(process.env.REDIS_URL) })',
  options: {
    client: optionRules.required(clientRule, `${CLIENT_FIX}.`),
    prefix: (value) => {
      if (typeof value !== 'string' || value === '') {
        return `must be a non-empty string, so the keys cannot collide with other data, e.g. '${DEFAULT_REDIS_PREFIX}'; got ${describeValue(value)}.`;
      }
      // The store puts the event id in braces, the Cluster hash tag; a brace in the prefix would become the tag.
      return /[{}]/.test(value)
        ? `must not contain '{' or '}': the store wraps each event id in braces (the Redis Cluster hash tag).`
        : undefined;
    },
  },
  aliases: { redis: 'client', connection: 'client', ioredis: 'client', keyPrefix: 'prefix', namespace: 'prefix' },
};

/** A CROSSSLOT refusal (Redis Cluster) becomes an error that says why and what to do instead. */
async function crossSlotExplained(reply: Promise<unknown>): Promise<unknown> {
  try {
    return await reply;
  } catch (error) {
    if (!/CROSSSLOT/i.test(String((error as Error)?.message))) throw error;
    throw new Error(
      "stream cursors need the event, its stream cursor and the streams' activity index in one atomic script, and Redis " +
        'Cluster keeps them in different slots: use a standalone, Sentinel or Valkey server for ordering (dedupe alone ' +
        'works on Cluster).',
      { cause: error },
    );
  }
}

/** A skip as SKIP_SEQ wrote it: `<server ms>:<JSON of reason and event id>`. */
function readSkip(seq: number, value: string): SkippedSeq {
  const colon = value.indexOf(':');
  const { reason, eventId } = JSON.parse(value.slice(colon + 1)) as { reason: string; eventId?: string };
  const skip: SkippedSeq = { seq, reason, skippedAt: Number(value.slice(0, colon)) };
  if (eventId !== undefined) skip.eventId = eventId;
  return skip;
}

/** PX takes whole milliseconds, at least 1; a fraction is rounded up so a lease is never shorter than asked. */
function milliseconds(name: string, value: number): string {
  return String(storeDurationMs(name, value));
}
