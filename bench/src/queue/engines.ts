/**
 * The two durable queue engines as a user sets them up, opened the same way by every process of the section: the
 * receiver's server, the worker processes and the bench process that fills the fleet's backlog. Engine options stay
 * at their defaults except `maxBacklog` (a run's backlog must never answer 429) and the names.
 */
import type { EventQueue } from '@kyb-webhooks/core';
import { PG_BOSS_DEFAULT_POLLING_S, type QueueConfig } from './protocol.js';

export interface OpenedQueue {
  queue: EventQueue;
  /** Engine, client and settings that matter, for the report. */
  describe: string;
  /** Closes what this process opened (the pg-boss instance, the Redis connection); the data stays. */
  close(): Promise<void>;
}

/** pg-boss instances' pool size: pg-boss's default (10). */
const PG_BOSS_POOL = 10;

export async function openQueue(config: QueueConfig): Promise<OpenedQueue> {
  if (config.engine === 'pgboss') {
    const [{ PgBoss }, { createPgBossQueue }] = await Promise.all([
      import('pg-boss'),
      import('@kyb-webhooks/queue-pgboss'),
    ]);
    // Maintenance and cron off, as in the engine's tests: a run is minutes long and deletes nothing it needs.
    const boss = new PgBoss({
      connectionString: config.url,
      schema: config.namespace,
      supervise: false,
      schedule: false,
      max: PG_BOSS_POOL,
    });
    boss.on('error', (error: unknown) => console.error('pg-boss:', error));
    await boss.start();
    const polling = config.pollingIntervalSeconds;
    const queue = createPgBossQueue({
      boss,
      name: config.name,
      schema: config.namespace,
      maxBacklog: config.maxBacklog,
      ...(polling === undefined ? {} : { pollingIntervalSeconds: polling }),
    });
    await queue.ensureQueues();
    return {
      queue,
      describe:
        `pg-boss 12 (pool ${PG_BOSS_POOL}, maintenance off), pollingIntervalSeconds ` +
        (polling === undefined
          ? `${PG_BOSS_DEFAULT_POLLING_S} (the engine's default)`
          : `${polling} (KYB_BENCH_PGBOSS_POLLING_S)`) +
        ', on PostgreSQL',
      close: () => boss.stop({ graceful: true, timeout: 10_000 }),
    };
  }
  const [{ Redis }, { createBullMqQueue }] = await Promise.all([
    import('ioredis'),
    import('@kyb-webhooks/queue-bullmq'),
  ]);
  const connection = new Redis(config.url, { maxRetriesPerRequest: null });
  const queue = createBullMqQueue({
    connection,
    name: config.name,
    prefix: config.namespace,
    maxBacklog: config.maxBacklog,
  });
  return {
    queue,
    describe: 'BullMQ 6 over one ioredis connection (its workers duplicate it), on Redis',
    async close() {
      await queue.close();
      await connection.quit();
    },
  };
}
