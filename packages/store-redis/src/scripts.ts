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

/** KEYS[1] record, ARGV[1] `p:<token>` → 1 when the token still held the lease (the record is deleted), else 0. */
export const RELEASE = script(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`);
