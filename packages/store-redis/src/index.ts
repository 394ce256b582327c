/**
 * Redis dedupe store for @kyb-webhooks/core, working with the ioredis or node-redis client you already have.
 */
export { createRedisStore, DEFAULT_REDIS_PREFIX, type RedisStore, type RedisStoreOptions } from './redis-store.js';
export type { IoRedisLike, NodeRedisLike, RedisClientLike } from './client.js';
