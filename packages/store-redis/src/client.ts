import { KybWebhookError } from '@kyb-webhooks/core';
import type { Script } from './scripts.js';

/**
 * The part of an ioredis client (`Redis` or `Cluster`) the store uses.
 *
 * @example
 * ```ts
 * const client: IoRedisLike = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
 * ```
 */
export interface IoRedisLike {
  set(key: string, value: string, px: 'PX', milliseconds: number, nx: 'NX', get: 'GET'): Promise<unknown>;
  evalsha(sha: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
}

/**
 * The part of a node-redis v5 client (`createClient` or `createCluster`) the store uses.
 *
 * @example
 * ```ts
 * const client: NodeRedisLike = await createClient({ url: process.env.REDIS_URL }).connect()
 * ```
 */
export interface NodeRedisLike {
  set(
    key: string,
    value: string,
    options: { condition: 'NX'; GET: true; expiration: { type: 'PX'; value: number } },
  ): Promise<unknown>;
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/**
 * A connected ioredis or node-redis client; the store only borrows it and never connects or closes it.
 *
 * @example
 * ```ts
 * const client: RedisClientLike = process.env.USE_IOREDIS ? new Redis(url) : await createClient({ url }).connect()
 * ```
 */
export type RedisClientLike = IoRedisLike | NodeRedisLike;

/** Runs a script in ONE round trip once Redis has it cached; `key` is its one key, or all of them in order. */
export type ScriptRunner = (script: Script, key: string | readonly string[], args: string[]) => Promise<unknown>;

/**
 * `SET key value NX GET PX leaseMs` (Redis 7.0+): sets the key only when it is missing and returns what was there,
 * so a claim is one native command: null means this call took it. Several times cheaper inside Redis than a script.
 */
export type SetNxGet = (key: string, value: string, leaseMs: number) => Promise<string | null>;

export function setNxGet(client: RedisClientLike): SetNxGet {
  if (typeof (client as Partial<NodeRedisLike>).evalSha === 'function') {
    const nodeRedis = client as NodeRedisLike;
    return async (key, value, leaseMs) =>
      asString(
        await nodeRedis.set(key, value, { condition: 'NX', GET: true, expiration: { type: 'PX', value: leaseMs } }),
      );
  }
  const ioredis = client as IoRedisLike;
  return async (key, value, leaseMs) => asString(await ioredis.set(key, value, 'PX', leaseMs, 'NX', 'GET'));
}

function asString(reply: unknown): string | null {
  if (reply === null || reply === undefined) return null;
  return typeof reply === 'string' ? reply : String(reply);
}

/**
 * EVALSHA first, EVAL only when this server has not seen the script yet (NOSCRIPT): after a restart, a failover or
 * on a new cluster node. EVAL also caches the script, so the fallback happens once per server.
 */
export function scriptRunner(client: RedisClientLike): ScriptRunner {
  const candidate = client as Partial<IoRedisLike & NodeRedisLike> | null | undefined;
  if (typeof candidate?.evalSha === 'function' && typeof candidate.eval === 'function') {
    const nodeRedis = client as NodeRedisLike;
    return (script, key, args) => {
      const keys = typeof key === 'string' ? [key] : [...key];
      return withFallback(
        () => nodeRedis.evalSha(script.sha, { keys, arguments: args }),
        () => nodeRedis.eval(script.source, { keys, arguments: args }),
      );
    };
  }
  if (typeof candidate?.evalsha === 'function' && typeof candidate.eval === 'function') {
    const ioredis = client as IoRedisLike;
    return (script, key, args) => {
      const keys = typeof key === 'string' ? [key] : [...key];
      return withFallback(
        () => ioredis.evalsha(script.sha, keys.length, ...keys, ...args),
        () => ioredis.eval(script.source, keys.length, ...keys, ...args),
      );
    };
  }
  throw new KybWebhookError(
    'config_invalid',
    'createRedisStore: `client` must be an ioredis client (new Redis() / new Cluster()) or a node-redis client ' +
      '(createClient() / createCluster()).',
  );
}

async function withFallback(evalsha: () => Promise<unknown>, evaluate: () => Promise<unknown>): Promise<unknown> {
  try {
    return await evalsha();
  } catch (error) {
    if (String((error as Error)?.message).startsWith('NOSCRIPT')) return evaluate();
    throw error;
  }
}
