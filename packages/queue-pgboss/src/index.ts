/**
 * `@kyb-webhooks/queue-pgboss`: the pg-boss (PostgreSQL) engine of queue mode for `@kyb-webhooks/core`, working with
 * the pg-boss 12 instance you already run.
 */
export {
  createPgBossQueue,
  type PgBossQueue,
  type PgBossQueueOptions,
  type PgBossLike,
  type PgBossDbLike,
  type PgBossJobLike,
} from './pgboss-queue.js';
export { jobIdOf } from './job-id.js';
