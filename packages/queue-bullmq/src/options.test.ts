import { expectConfigInvalid } from '@kyb-webhooks/testing/store-suite';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createBullMqQueue, headJobIdOf } from './index.js';

// Never connected: creating a queue must not touch Redis, and this is the real class's shape.
const connection = new Redis('redis://127.0.0.1:1', { lazyConnect: true });
afterAll(() => connection.disconnect());

describe('createBullMqQueue refuses a bad configuration at creation', () => {
  it.each<[string, unknown, string[]]>([
    ['no options', undefined, ['createBullMqQueue needs an options object', 'maxRetriesPerRequest: null']],
    ['no connection', {}, ['`connection` is missing', 'pass your ioredis connection']],
    ['a URL instead of a connection', { connection: 'redis://x' }, ['`connection` must be an object with']],
    ['a client that is not ioredis', { connection: { get() {} } }, ['`connection` has no evalsha']],
    ['a queue name with a colon', { connection, name: 'kyb:webhooks' }, ['`name` must be a BullMQ queue name']],
    ['an empty prefix', { connection, prefix: '' }, ['`prefix` must be a Redis key prefix']],
    ['a negative retry limit', { connection, retryLimit: -1 }, ['`retryLimit` must be a whole number of at least 0']],
    ['a delay in seconds', { connection, retryDelaySeconds: 1 }, ['`retryDelaySeconds` is not an option']],
    ['a fractional delay', { connection, retryDelayMs: 0.5 }, ['`retryDelayMs` must be a whole number']],
    ['a delay past what a timer keeps', { connection, retryDelayMs: 2 ** 31 }, ['`retryDelayMs`', 'to 2147483647']],
    [
      'a recovery interval past what a timer keeps',
      { connection, recoverIntervalMs: 2 ** 31 },
      ['`recoverIntervalMs`'],
    ],
    ['a lock past what a timer keeps', { connection, lockDurationMs: 2 ** 31 }, ['`lockDurationMs`', 'to 2147483647']],
    ['a stall check past what a timer keeps', { connection, stalledIntervalMs: 2 ** 31 }, ['`stalledIntervalMs`']],
    ['a zero recovery interval', { connection, recoverIntervalMs: 0 }, ['`recoverIntervalMs` must be', 'from 1 to']],
    ['a zero backlog', { connection, maxBacklog: 0 }, ['`maxBacklog` must be a positive whole number of events']],
    ['a zero dedupe window', { connection, dedupeRetainSeconds: 0 }, ['`dedupeRetainSeconds` must be a positive']],
    ['a dedupe TTL by another name', { connection, dedupeTtl: 60 }, ['did you mean `dedupeRetainSeconds`?']],
    ['an unknown option', { connection, concurrency: 4 }, ['`concurrency` is not an option']],
  ])('%s', (_, options, words) => {
    expectConfigInvalid(() => createBullMqQueue(options as never), words);
  });

  it('accepts the documented defaults without connecting', () => {
    const queue = createBullMqQueue({ connection });
    expect(queue.name).toBe('BullMQ queue');
    expect(queue.queueName).toBe('kyb-webhooks');
    expect(connection.status).toBe('wait');
  });

  it('refuses a worker concurrency that is not a whole number of at least 1', async () => {
    const queue = createBullMqQueue({ connection });
    await expect(queue.work(async () => {}, { concurrency: 0 })).rejects.toMatchObject({ code: 'config_invalid' });
  });

  it('refuses a connection with an ioredis keyPrefix at creation, naming the `prefix` option', () => {
    const prefixed = new Redis('redis://127.0.0.1:1', { lazyConnect: true, keyPrefix: 'app:' });
    expectConfigInvalid(() => createBullMqQueue({ connection: prefixed }), ["keyPrefix 'app:'", 'as `prefix` instead']);
    prefixed.disconnect();
  });

  it('refuses to work over a connection whose maxRetriesPerRequest is not null, as BullMQ would, with the fix', async () => {
    const queue = createBullMqQueue({ connection }); // ioredis's default: 20
    const error = await queue.work(async () => {}, { concurrency: 1 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'config_invalid' });
    expect((error as Error).message).toContain('`maxRetriesPerRequest: null`');
  });

  it('refuses a skip without a reason', async () => {
    const queue = createBullMqQueue({ connection });
    await expect(queue.skipBlocked('stream', { reason: ' ' })).rejects.toThrow(/needs a reason/);
  });

  it('headJobIdOf has no ":" whatever the key', () => {
    expect(headJobIdOf('a:b')).toMatch(/^kyb-[0-9a-f]{40}$/);
  });
});
