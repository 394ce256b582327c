import { KybWebhookError } from '@kyb-webhooks/core';
import { ulid } from '@kyb-webhooks/testing';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testService } from '../../../scripts/services/env.js';
import { createRedisStore, DEFAULT_REDIS_PREFIX } from './index.js';
import { GET_CURSORS, PRUNE_EXPIRED } from './scripts.js';

const redis = testService('redis');

describe.skipIf(!redis.url)(`redis store specifics ${redis.skipReason ?? ''}`, () => {
  let client: Redis;
  const prefix = `kyb:test:${crypto.randomUUID()}:`;
  beforeAll(() => {
    client = new Redis(redis.url!);
  });
  afterAll(async () => {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(...keys);
    client.disconnect();
  });

  /** Counts the commands the store sends, to pin down round trips. */
  function counted(): { store: ReturnType<typeof createRedisStore>; calls: string[] } {
    const calls: string[] = [];
    const spy = {
      set: (...args: [string, string, 'PX', number, 'NX', 'GET']) => (calls.push('set'), client.set(...args)),
      evalsha: (...args: Parameters<Redis['evalsha']>) => (calls.push('evalsha'), client.evalsha(...args)),
      eval: (...args: Parameters<Redis['eval']>) => (calls.push('eval'), client.eval(...args)),
    };
    return { store: createRedisStore({ client: spy as unknown as Redis, prefix }), calls };
  }

  it('keeps one key per event, hash-tagged for Redis Cluster, with a server-side TTL', async () => {
    const id = ulid();
    const store = createRedisStore({ client, prefix });
    await store.claim(id, { leaseMs: 5_000 });
    const key = `${prefix}{${id}}`;
    expect(await client.keys(`${prefix}*${id}*`)).toEqual([key]);
    expect(await client.pttl(key)).toBeGreaterThan(4_000);
    expect(DEFAULT_REDIS_PREFIX).toBe('kyb:dedupe:');
  });

  it('uses exactly one round trip per claim (a native SET NX GET) and per complete once the scripts are cached', async () => {
    const { store, calls } = counted();
    const warm = await store.claim(ulid(), { leaseMs: 5_000 });
    if (warm.status === 'acquired') await store.complete(ulid(), warm.token, { retainMs: 5_000 });
    calls.length = 0;
    const id = ulid();
    const claim = await store.claim(id, { leaseMs: 5_000 });
    expect(calls).toEqual(['set']);
    expect(claim.status === 'acquired' && (await store.complete(id, claim.token, { retainMs: 5_000 }))).toBe(true);
    expect(calls).toEqual(['set', 'evalsha']);
    expect(await store.claim(id, { leaseMs: 5_000 })).toEqual({ status: 'completed' });
  });

  it('keeps a stream cursor in its own key, <prefix>{<streamId>}:cursor, with the retention as a server-side TTL', async () => {
    const store = createRedisStore({ client, prefix });
    const [id, streamId] = [ulid(), `req_${ulid()}`];
    const claim = await store.claim(id, { leaseMs: 5_000 });
    const options = { retainMs: 50_000, streamId, seq: 1, firstSeq: 1 } as const;
    expect(claim.status === 'acquired' && (await store.completeInOrder(id, claim.token, options))).toBe('completed');
    const key = `${prefix}{${streamId}}:cursor`;
    expect(await client.keys(`${prefix}*${streamId}*`)).toEqual([key]);
    expect(await client.get(key)).toBe('1');
    expect(await client.pttl(key)).toBeGreaterThan(49_000);
    expect(await client.pttl(`${prefix}{${id}}`)).toBeGreaterThan(49_000);
  });

  it('completes in order in exactly one round trip (one script over the event and cursor keys) once cached', async () => {
    const { store, calls } = counted();
    await store.completeInOrder(ulid(), 'warm-up', { retainMs: 5_000, streamId: 'req_warm', seq: 0, firstSeq: 0 });
    const streamId = `req_${ulid()}`;
    for (const [seq, outcome] of [
      [0, 'completed'],
      [1, 'completed'],
      [5, 'cursor_moved'],
    ] as const) {
      const id = ulid();
      const claim = await store.claim(id, { leaseMs: 5_000 });
      calls.length = 0;
      const options = { retainMs: 5_000, streamId, seq, firstSeq: 0 } as const;
      expect(claim.status === 'acquired' && (await store.completeInOrder(id, claim.token, options))).toBe(outcome);
      expect(calls).toEqual(['evalsha']);
    }
  });

  it('explains a Redis Cluster CROSSSLOT refusal of completeInOrder instead of passing it on bare', async () => {
    const crossSlot = async () => {
      throw new Error("CROSSSLOT Keys in request don't hash to the same slot");
    };
    const cluster = { set: client.set.bind(client), evalsha: crossSlot, eval: crossSlot };
    const store = createRedisStore({ client: cluster as unknown as Redis, prefix });
    const options = { retainMs: 5_000, streamId: 'req_1', seq: 0, firstSeq: 0 } as const;
    const refusal = store.completeInOrder(ulid(), 'a'.repeat(36), options);
    await expect(refusal).rejects.toThrow(
      /Redis Cluster keeps them in different slots: use a standalone, Sentinel or Valkey server/,
    );
    await expect(refusal).rejects.toMatchObject({ cause: { message: expect.stringMatching(/^CROSSSLOT/) } });
  });

  it("keeps stream activity in one sorted set scored by the server's clock, and each stream's cursor expiry in another that trims both", async () => {
    const store = createRedisStore({ client, prefix });
    const [old, recent] = [`req_${ulid()}`, `req_${ulid()}`];
    const [index, expiry] = [`${prefix}streams:activity`, `${prefix}streams:expiry`];
    expect(await store.advanceCursor(old, 1, { retainMs: 200 })).toBe(true);
    const [seconds, micros] = (await client.time()) as [number | string, number | string];
    const serverMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    expect(Math.abs(Number(await client.zscore(index, old)) - serverMs)).toBeLessThan(1_000);
    expect(Number(await client.zscore(expiry, old)) - Number(await client.zscore(index, old))).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await store.advanceCursor(recent, 1, { retainMs: 200 })).toBe(true);
    expect(await client.zscore(index, old)).toBeNull();
    expect(await client.zscore(expiry, old)).toBeNull();
    expect(await client.zscore(index, recent)).not.toBeNull();
  });

  it('drops an entry whose cursor is gone when listing finds it (an index written before the expiry index), and pages past it', async () => {
    const own = `${prefix}prune-${ulid()}:`;
    const store = createRedisStore({ client, prefix: own });
    const [stale, first, second] = [`req_${ulid()}`, `req_${ulid()}`, `req_${ulid()}`];
    // What an earlier version left: an activity entry with no expiry entry and no cursor.
    await client.zadd(`${own}streams:activity`, 1, stale);
    expect(await store.advanceCursor(first, 4)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await store.advanceCursor(second, 9)).toBe(true);
    const listed: string[] = [];
    let after: string | undefined;
    do {
      const page = await store.listStreams!({ activeSince: 0, limit: 1, ...(after === undefined ? {} : { after }) });
      listed.push(...page.streams.map((stream) => stream.streamId));
      after = page.next;
    } while (after !== undefined && listed.length < 10);
    expect(listed).toEqual([first, second]);
    expect(await client.zscore(`${own}streams:activity`, stale)).toBeNull();
  });

  it('lists every live stream while other writes prune expired ones from lower scores during the listing', async () => {
    const own = `${prefix}skip-${ulid()}:`;
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const writer = createRedisStore({ client, prefix: own });
    await writer.advanceCursor('a', 1, { retainMs: 400 }); // live when first listed, expires during the listing
    await sleep(3);
    for (const stream of ['d1', 'd2', 'd3']) {
      await writer.advanceCursor(stream, 1, { retainMs: 100 });
      await sleep(3);
    }
    const live = ['s1', 's2', 's3', 's4'];
    for (const stream of live) {
      await writer.advanceCursor(stream, 1);
      await sleep(3);
    }
    await sleep(150); // d1 … d3 expired, still indexed: no write since
    let hooked = false;
    const slowPrune = new Proxy(client, {
      get(target, name) {
        const value = Reflect.get(target, name) as unknown;
        if (name !== 'evalsha' || typeof value !== 'function')
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        return async (...args: unknown[]) => {
          if (!hooked && args[0] === PRUNE_EXPIRED.sha) {
            hooked = true;
            await sleep(300); // 'a' expires meanwhile,
            await writer.advanceCursor('other', 1); // and a write elsewhere drops it from the index
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const store = createRedisStore({ client: slowPrune as unknown as Redis, prefix: own });
    const listed: string[] = [];
    let after: string | undefined;
    do {
      const page = await store.listStreams!({ activeSince: 0, limit: 3, ...(after === undefined ? {} : { after }) });
      listed.push(...page.streams.map((stream) => stream.streamId));
      after = page.next;
    } while (after !== undefined && listed.length < 20);
    expect(listed).toEqual(expect.arrayContaining(live));
  });

  it('lists every stream once though many share one millisecond, with one of them rewritten during the listing', async () => {
    const own = `${prefix}same-ms-${ulid()}:`;
    const writer = createRedisStore({ client, prefix: own });
    const ids = Array.from({ length: 10 }, (_, i) => `a${String(i).padStart(2, '0')}`);
    for (const id of ids) {
      // Ten streams written in the same millisecond, as the store's own scripts would have left them.
      await client.set(`${own}{${id}}:cursor`, '1');
      await client.zadd(`${own}streams:activity`, 5_000, id);
      await client.zadd(`${own}streams:expiry`, 9e15, id);
    }
    let armed = false;
    const rewriting = new Proxy(client, {
      get(target, name) {
        const value = Reflect.get(target, name) as unknown;
        if (typeof value !== 'function') return value;
        if (name !== 'evalsha') return (value as (...a: unknown[]) => unknown).bind(target);
        return async (...args: unknown[]) => {
          if (armed && args[0] === GET_CURSORS.sha) {
            armed = false;
            await writer.advanceCursor('a00', 2); // a00 gets its next event meanwhile: it moves to a later score
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const store = createRedisStore({ client: rewriting as unknown as Redis, prefix: own });
    const first = await store.listStreams!({ activeSince: 0, limit: 3 });
    expect(first.streams.map((stream) => stream.streamId)).toEqual(['a00', 'a01', 'a02']);
    armed = true;
    const listed = first.streams.map((stream) => stream.streamId);
    let after = first.next;
    while (after !== undefined && listed.length < 30) {
      const page = await store.listStreams!({ activeSince: 0, limit: 3, after });
      listed.push(...page.streams.map((stream) => stream.streamId));
      after = page.next;
    }
    // Every stream, a00 a second time at its new score.
    expect(listed).toEqual([...ids, 'a00']);
  });

  it('falls back to EVAL when the server lost its script cache (restart, failover)', async () => {
    const { store, calls } = counted();
    const id = ulid();
    const claim = await store.claim(id, { leaseMs: 5_000 });
    await client.script('FLUSH');
    calls.length = 0;
    expect(claim.status === 'acquired' && (await store.complete(id, claim.token, { retainMs: 5_000 }))).toBe(true);
    expect(calls).toEqual(['evalsha', 'eval']);
    expect(await store.claim(id, { leaseMs: 5_000 })).toEqual({ status: 'completed' });
  });

  it('claims through the script on servers that reject SET with both NX and GET (Redis before 7.0)', async () => {
    const calls: string[] = [];
    const oldServer = {
      set: async () => {
        calls.push('set');
        throw new Error('ERR syntax error');
      },
      evalsha: (...args: Parameters<Redis['evalsha']>) => (calls.push('evalsha'), client.evalsha(...args)),
      eval: (...args: Parameters<Redis['eval']>) => (calls.push('eval'), client.eval(...args)),
    };
    const store = createRedisStore({ client: oldServer as unknown as Redis, prefix });
    const id = ulid();
    expect((await store.claim(id, { leaseMs: 5_000 })).status).toBe('acquired');
    expect(await store.claim(id, { leaseMs: 5_000 })).toEqual({ status: 'in_progress' });
    expect(calls.filter((call) => call === 'set')).toEqual(['set']);
  });

  it('sees the same records through ioredis and node-redis, and never closes the client it was given', async () => {
    const nodeClient = createClient({ url: redis.url! });
    await nodeClient.connect();
    try {
      const id = ulid();
      const viaIoredis = createRedisStore({ client, prefix });
      const viaNodeRedis = createRedisStore({ client: nodeClient, prefix });
      const claim = await viaIoredis.claim(id, { leaseMs: 5_000 });
      expect(await viaNodeRedis.claim(id, { leaseMs: 5_000 })).toEqual({ status: 'in_progress' });
      expect(claim.status === 'acquired' && (await viaNodeRedis.complete(id, claim.token, { retainMs: 5_000 }))).toBe(
        true,
      );
      expect(await viaIoredis.claim(id, { leaseMs: 5_000 })).toEqual({ status: 'completed' });
      expect(nodeClient.isOpen).toBe(true);
      expect(client.status).toBe('ready');
    } finally {
      await nodeClient.close();
    }
  });

  it('propagates Redis errors as thrown errors (the receiver answers 503 store_unavailable)', async () => {
    const key = `${prefix}{wrong-type}`;
    await client.lpush(key, 'x');
    await expect(createRedisStore({ client, prefix }).claim('wrong-type', { leaseMs: 1_000 })).rejects.toThrow(
      /WRONGTYPE/,
    );
  });

  it('rejects a lease or retention that is not a positive number of milliseconds', async () => {
    const store = createRedisStore({ client, prefix });
    await expect(store.claim(ulid(), { leaseMs: 0 })).rejects.toThrow(RangeError);
    await expect(store.complete(ulid(), 'x', { retainMs: Number.NaN })).rejects.toThrow(RangeError);
  });
});

describe('createRedisStore configuration', () => {
  it('rejects something that is not a Redis client with config_invalid', () => {
    expect(() => createRedisStore({ client: {} as never })).toThrow(KybWebhookError);
    expect(() => createRedisStore({ client: {} as never })).toThrow(/ioredis client .* or a node-redis client/);
  });
});
