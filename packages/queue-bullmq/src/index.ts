/**
 * `@kyb-webhooks/queue-bullmq`: the BullMQ (Redis) engine of queue mode for `@kyb-webhooks/core`, over your own ioredis
 * connection, with per-stream order kept by this package in Redis (open-source BullMQ has none).
 */
export { createBullMqQueue, type BullMqQueue, type BullMqQueueOptions, type SkipRecord } from './bullmq-queue.js';
export { headJobIdOf } from './scripts.js';
