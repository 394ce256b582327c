import { createHash } from 'node:crypto';

/**
 * The three steps as Lua scripts, because each must read and write the record atomically: Redis runs a script
 * without interleaving other commands, so of many concurrent claims exactly one sees the key missing.
 *
 * A record is one string key: `p:<token>` while a delivery holds the lease, `c` once completed. Its TTL is the lease
 * or the retention, so Redis's own clock decides expiry and an expired lease (crashed holder) simply disappears.
 */
export interface Script {
  readonly source: string;
  /** SHA-1 of the source, the name EVALSHA runs it by. */
  readonly sha: string;
}

function script(source: string): Script {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/** KEYS[1] record, ARGV[1] `p:<token>`, ARGV[2] lease ms → 'acquired' | 'in_progress' | 'completed'. */
export const CLAIM = script(`local current = redis.call('GET', KEYS[1])
if not current then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 'acquired'
end
if current == 'c' then return 'completed' end
return 'in_progress'
`);

/** KEYS[1] record, ARGV[1] `p:<token>`, ARGV[2] retention ms → 1 when the token still held the lease, else 0. */
export const COMPLETE = script(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], 'c', 'PX', ARGV[2])
  return 1
end
return 0
`);

/**
 * KEYS[1] record, ARGV[1] `p:<token>`, ARGV[2] lease ms → 1 when the token still held the lease (it now ends ARGV[2]
 * ms from now), else 0 and nothing changes.
 */
export const EXTEND = script(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`);

/** KEYS[1] record, ARGV[1] `p:<token>` → 1 when the token still held the lease (the record is deleted), else 0. */
export const RELEASE = script(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`);

/**
 * The activity index of stream cursors, as a Lua snippet for the two scripts that write a cursor: the stream (ARGV
 * given as `streamArg`) gets the server's time in ms as its score in the sorted set KEYS[`indexKey`], and the time
 * its cursor expires in the sorted set KEYS[`indexKey` + 1]. Streams whose cursor expired leave both, up to 100 per
 * write. Expiry is each stream's own: trimming by this write's retention dropped the live cursors of streams written
 * with a longer one. Entries an earlier version wrote (no expiry score) are left to `listStreams`, which drops those
 * whose cursor is gone: trimming them by this write's retention could drop a live one. TIME before a write needs
 * effects replication: the default from Redis 5, always on from 7; the call asks for it on 3.2 and 4 too.
 */
function touchActivity(indexKey: number, streamArg: number, retainArg: number): string {
  const expiryKey = indexKey + 1;
  return `redis.replicate_commands()
local time = redis.call('TIME')
local ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZADD', KEYS[${indexKey}], ms, ARGV[${streamArg}])
redis.call('ZADD', KEYS[${expiryKey}], ms + tonumber(ARGV[${retainArg}]), ARGV[${streamArg}])
local expired = redis.call('ZRANGEBYSCORE', KEYS[${expiryKey}], '-inf', ms, 'LIMIT', 0, 100)
if #expired > 0 then
  redis.call('ZREM', KEYS[${indexKey}], unpack(expired))
  redis.call('ZREM', KEYS[${expiryKey}], unpack(expired))
end
`;
}

/**
 * KEYS[1] event record, KEYS[2] stream cursor, KEYS[3] activity index, KEYS[4] expiry index; ARGV[1] `p:<token>`,
 * ARGV[2] the record's retention ms, ARGV[3] seq, ARGV[4] first seq, ARGV[5] stream id, ARGV[6] the cursor's
 * retention ms (at least ARGV[2], so it outlives its stream's records) → 'completed' | 'lease_lost' | 'cursor_moved'.
 * The lease is checked first, so a caller without it learns nothing about the cursor; the keys are written all or
 * none. Seqs are compared as numbers (exact up to 2^53, the safe integers the store accepts).
 */
export const COMPLETE_IN_ORDER = script(`if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'lease_lost' end
local seq = tonumber(ARGV[3])
local cursor = redis.call('GET', KEYS[2])
if cursor then
  if tonumber(cursor) ~= seq - 1 then return 'cursor_moved' end
elseif seq ~= tonumber(ARGV[4]) then
  return 'cursor_moved'
end
redis.call('SET', KEYS[1], 'c', 'PX', ARGV[2])
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[6])
${touchActivity(3, 5, 6)}return 'completed'
`);

/**
 * KEYS[1] stream cursor, KEYS[2] activity index, KEYS[3] expiry index; ARGV[1] seq, ARGV[2] retention ms, ARGV[3]
 * stream id → 1 when the cursor moved forward to seq, else 0.
 */
export const ADVANCE_CURSOR = script(`local cursor = redis.call('GET', KEYS[1])
if cursor and tonumber(cursor) >= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
${touchActivity(2, 3, 2)}return 1
`);

/** KEYS[1] stream cursor → its seq as a string, or nil: a plain GET, through EVALSHA so the client needs no get(). */
export const GET_CURSOR = script(`return redis.call('GET', KEYS[1])
`);

/**
 * KEYS[1] activity index; ARGV[1] lowest score (ms), ARGV[2] the last stream id already read at that score ('' for
 * none), ARGV[3] count → a flat list of stream id and score, from the first entry after (score, id) in the index's own
 * order (score, then stream id in byte order). Keyset paging in one script: how many entries of the boundary score to
 * pass is counted at the moment of the read, so entries other writes remove or move meanwhile cannot make a listing
 * skip a live stream, as an offset kept between reads could. Ids are compared byte by byte (Lua's `<` follows the
 * server's locale).
 */
export const LIST_ACTIVE = script(`local function atOrBefore(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a <= #b
end
local skip = 0
if ARGV[2] ~= '' then
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[1])) do
    if atOrBefore(id, ARGV[2]) then skip = skip + 1 else break end
  end
end
return redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], '+inf', 'WITHSCORES', 'LIMIT', skip, ARGV[3])
`);

/** KEYS stream cursors → their seqs (nil for a cursor that expired), in one MGET. */
export const GET_CURSORS = script(`return redis.call('MGET', unpack(KEYS))
`);

/**
 * KEYS[1] activity index, KEYS[2] expiry index, KEYS[3…] stream cursors; ARGV the stream ids of those cursors →
 * the stream ids it removed. Drops from both indexes the streams whose cursor is gone, checked in the script so a
 * cursor written since the caller looked keeps its entry. It clears what the writes cannot: entries made before the
 * expiry index existed.
 */
export const PRUNE_EXPIRED = script(`local pruned = {}
for i, stream in ipairs(ARGV) do
  if redis.call('EXISTS', KEYS[i + 2]) == 0 then
    redis.call('ZREM', KEYS[1], stream)
    redis.call('ZREM', KEYS[2], stream)
    pruned[#pruned + 1] = stream
  end
end
return pruned
`);

/**
 * KEYS[1] stream cursor, KEYS[2] the stream's skips (a hash: seq → `<server ms>:<JSON of reason and event id>`),
 * KEYS[3] activity index, KEYS[4] expiry index; ARGV[1] seq, ARGV[2] retention ms, ARGV[3] stream id, ARGV[4] first
 * seq, ARGV[5] the JSON record → 1 when the cursor stood at seq - 1 (or was missing and seq is the first seq) and
 * both the skip and the cursor were written, else 0 and nothing written. The skips hash lives as long as its newest
 * skip (PEXPIRE on every write), like the cursor beside it.
 */
export const SKIP_SEQ = script(`local seq = tonumber(ARGV[1])
local cursor = redis.call('GET', KEYS[1])
if cursor then
  if tonumber(cursor) ~= seq - 1 then return 0 end
elseif seq ~= tonumber(ARGV[4]) then
  return 0
end
${touchActivity(3, 3, 2)}redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], tostring(ms) .. ':' .. ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
`);

/** KEYS[1] the stream's skips → a flat list of seq and record, as HGETALL answers. */
export const LIST_SKIPS = script(`return redis.call('HGETALL', KEYS[1])
`);
