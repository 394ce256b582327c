import { Cluster, Redis } from 'ioredis';
import { createClient } from 'redis';
import { expectConfigInvalid } from '@kyb-webhooks/testing/store-suite';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisStore } from './index.js';

// Never connected: creating a store must not need a server, and these are the real clients' shapes.
const ioredis = new Redis({ lazyConnect: true });
const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
const nodeRedis = createClient();
afterAll(() => {
  ioredis.disconnect();
  cluster.disconnect();
});
const fn = () => {};

describe('createRedisStore refuses a bad configuration at creation', () => {
  it.each<[string, unknown, string[]]>([
    [
      'no options',
      undefined,
      ['createRedisStore needs an options object', 'createRedisStore({ client: new Redis(process.env.REDIS_URL) })'],
    ],
    ['no client', {}, ['`client` is missing', 'ioredis', 'node-redis']],
    ['a client read from nowhere', { client: undefined, prefix: 'kyb:' }, ['`client` is missing']],
    [
      'a connection URL instead of a client',
      { client: 'redis://127.0.0.1:6379' },
      ['`client` must be a Redis client', 'got a string'],
    ],
    [
      'a connect() promise that was not awaited',
      { client: Promise.resolve(nodeRedis) },
      ['`client` must be a Redis client', 'a Promise (missing await?)'],
    ],
    [
      'an object without script commands',
      { client: { set: fn, get: fn } },
      ['`client` is not a Redis client (it has neither evalsha nor evalSha)'],
    ],
    ['an ioredis-like object without set', { client: { evalsha: fn, eval: fn } }, ['`client` has no set method']],
    ['a node-redis-like object without eval', { client: { set: fn, evalSha: fn } }, ['`client` has no eval method']],
    ['redis instead of client', { redis: ioredis }, ['`redis` is not an option: did you mean `client`?']],
    [
      "ioredis's keyPrefix",
      { client: ioredis, keyPrefix: 'shop:' },
      ['`keyPrefix` is not an option: did you mean `prefix`?'],
    ],
    ['a misspelt prefix', { client: ioredis, prefx: 'shop:' }, ['did you mean `prefix`?']],
    ['an empty prefix', { client: ioredis, prefix: '' }, ['`prefix` must be a non-empty string', "'kyb:dedupe:'"]],
    [
      'a prefix that is not a string',
      { client: ioredis, prefix: 7 },
      ['`prefix` must be a non-empty string', 'got a number'],
    ],
    [
      'a prefix with a hash tag',
      { client: ioredis, prefix: '{kyb}:' },
      ["`prefix` must not contain '{' or '}'", 'hash tag'],
    ],
  ])('%s', (_name, options, words) => {
    const error = expectConfigInvalid(() => createRedisStore(options as never));
    expect(error.code).toBe('config_invalid');
    expect(error.message).toContain('createRedisStore');
    for (const word of words) expect(error.message).toContain(word);
  });

  it.each<[string, object]>([
    ['an ioredis client', { client: ioredis }],
    ['an ioredis cluster', { client: cluster }],
    ['a node-redis client', { client: nodeRedis }],
    ['a prefix', { client: ioredis, prefix: 'shop:kyb:' }],
  ])('accepts %s', (_name, options) => {
    expect(typeof createRedisStore(options as never).claim).toBe('function');
  });
});
