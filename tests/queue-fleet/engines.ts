/**
 * The two queue engines of the queue-mode fleet test (fleet.test.ts), opened the same way by the test itself, the
 * receiver process (receiver.ts) and the worker processes (worker.ts): pg-boss with the PostgreSQL dedupe store, or
 * BullMQ with the Redis dedupe store, each on the test's own server (see server.ts).
 *
 * Retries and crash detection are shortened so that the scenarios take seconds, and sized against each other:
 *
 * - a worker's claim in the dedupe store lasts 4.5 s (WORKER_RECEIVER.leaseMs);
 * - the queue notices a worker that died holding a job later than that: pg-boss fails an active job after the
 *   queue's `expireInSeconds` (6 s, checked every second by the workers' supervision), BullMQ takes back a job whose
 *   lock (5 s) was not renewed (checked every second). So the rerun of a killed handler finds the dead worker's claim
 *   expired and runs, instead of answering `in_progress` and spending a retry;
 * - retries: RETRY_LIMIT (3: four runs, then dead letter), pg-boss 1 s doubling (its smallest backoff), BullMQ 500 ms
 *   doubling.
 */
import { PgBoss } from 'pg-boss';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { DedupeStore } from '@kyb-webhooks/core';
import type { EventQueue } from '@kyb-webhooks/core/queue';
import { createBullMqQueue, headJobIdOf, type BullMqQueue } from '@kyb-webhooks/queue-bullmq';
import { createPgBossQueue, jobIdOf, type PgBossQueue } from '@kyb-webhooks/queue-pgboss';
import { createRedisStore } from '@kyb-webhooks/store-redis';
import { createPostgresStore } from '@kyb-webhooks/store-sql/postgres';

export type EngineName = 'pg-boss' | 'BullMQ';

/** Retries of a failed job before it is dead-lettered: four runs in all. */
export const RETRY_LIMIT = 3;
/** The queue name, in every engine. */
export const QUEUE_NAME = 'kyb-fleet';
/** pg-boss: how long a job may stay active before the supervision fails it (its worker died). */
export const PGBOSS_EXPIRE_SECONDS = 6;

/**
 * The workers' receiver: the claim of a handler run lasts leaseMs, and its deadlines fit in it as the receiver demands
 * (handlerTimeoutMs + 2 × storeTimeoutMs < leaseMs). The handlers take milliseconds (a hanging one is killed by the
 * test at once); the store gets 1.5 s, as a store call that times out on a loaded machine would spend a retry.
 */
export const WORKER_RECEIVER = { leaseMs: 4_500, handlerTimeoutMs: 1_000, storeTimeoutMs: 1_500 } as const;
/**
 * The HTTP receiver answers 503 when an enqueue takes longer than its storeTimeoutMs; on a loaded machine pg-boss's
 * insert can take a while, so it is given 5 s (the lease is unused there: the receiver process runs no handler).
 */
export const HTTP_RECEIVER = { leaseMs: 20_000, handlerTimeoutMs: 5_000, storeTimeoutMs: 5_000 } as const;

/** What the processes of one engine need to open it: passed to the child processes as environment variables. */
export interface EngineEnv {
  KYB_ENGINE: EngineName;
  /** The engine's server: postgres://… or redis://… */
  KYB_QUEUE_URL: string;
  /** pg-boss schema and store table, or BullMQ prefix and store prefix. */
  KYB_NAMESPACE: string;
}

export interface OpenedEngine {
  queue: EventQueue;
  /** The receiver's dedupe store (workers). */
  store: DedupeStore;
  /** pg-boss only: the instance, for the test's own reads and queue settings. */
  boss?: PgBoss;
  /** Jobs not finished yet: waiting, running, or waiting for a retry (dead-lettered ones not counted). */
  unfinished(): Promise<number>;
  /** The payload of the event with dedupe key `key` as the engine stores it (to see that it is sealed). */
  storedPayload(key: string, streamId: string): Promise<unknown>;
  /** The engine's own view of the job of the event with dedupe key `key`, in one line (for timeout messages). */
  describeJob(key: string, streamId: string): Promise<string>;
  close(): Promise<void>;
}

type Role = 'test' | 'receiver' | 'worker';

/** Opens the engine for `role`; `onError` gets the errors the engine reports asynchronously (server down, …). */
export async function openEngine(env: EngineEnv, role: Role, onError: (error: unknown) => void): Promise<OpenedEngine> {
  return env.KYB_ENGINE === 'pg-boss' ? openPgBoss(env, role, onError) : openBullMq(env, role, onError);
}

async function openPgBoss(env: EngineEnv, role: Role, onError: (error: unknown) => void): Promise<OpenedEngine> {
  const boss = new PgBoss({
    connectionString: env.KYB_QUEUE_URL,
    schema: env.KYB_NAMESPACE,
    // The workers supervise: one of them fails the jobs of a worker that died (expireInSeconds), every second.
    supervise: role === 'worker',
    superviseIntervalSeconds: 1,
    monitorIntervalSeconds: 1,
    schedule: false,
    max: 4,
  });
  boss.on('error', onError);
  await boss.start();
  const queue: PgBossQueue = createPgBossQueue({
    boss,
    name: QUEUE_NAME,
    schema: env.KYB_NAMESPACE,
    retryLimit: RETRY_LIMIT,
    retryDelaySeconds: 1,
    pollingIntervalSeconds: 0.5,
  });
  const pool = new pg.Pool({ connectionString: env.KYB_QUEUE_URL, max: 4, connectionTimeoutMillis: 2_000 });
  pool.on('error', onError);
  const store = createPostgresStore({ pool, table: `${env.KYB_NAMESPACE}_events` });
  return {
    queue,
    store,
    boss,
    async unfinished() {
      const { rows } = await boss
        .getDb()
        .executeSql(
          `SELECT count(*)::int AS n FROM ${env.KYB_NAMESPACE}.job WHERE name = $1 AND state IN ('created', 'retry', 'active')`,
          [QUEUE_NAME],
        );
      return (rows[0] as { n: number }).n;
    },
    async storedPayload(key) {
      const [job] = await boss.findJobs(QUEUE_NAME, { id: await jobIdOf(key) });
      return (job?.data as { event?: { payload?: unknown } } | undefined)?.event?.payload;
    },
    async describeJob(key) {
      const [job] = await boss.findJobs(QUEUE_NAME, { id: await jobIdOf(key) });
      if (!job) return 'no pg-boss job';
      const { state, retryCount, output } = job as { state?: string; retryCount?: number; output?: unknown };
      return `pg-boss job ${state} retryCount ${retryCount} output ${JSON.stringify(output)}`;
    },
    async close() {
      await boss.stop({ graceful: false, close: true, timeout: 2_000 }).catch(() => {});
      await pool.end().catch(() => {});
    },
  };
}

async function openBullMq(env: EngineEnv, role: Role, onError: (error: unknown) => void): Promise<OpenedEngine> {
  // BullMQ's workers need maxRetriesPerRequest: null; the receiver only enqueues and may fail fast instead.
  const connection = new Redis(env.KYB_QUEUE_URL, { maxRetriesPerRequest: role === 'receiver' ? 1 : null });
  connection.on('error', () => {}); // reported by the commands that fail; the 'error' events repeat every reconnect
  const queue: BullMqQueue = createBullMqQueue({
    connection,
    name: QUEUE_NAME,
    prefix: env.KYB_NAMESPACE,
    retryLimit: RETRY_LIMIT,
    retryDelayMs: 500,
    lockDurationMs: 5_000,
    stalledIntervalMs: 1_000,
    recoverIntervalMs: 2_000,
    onError,
  });
  const client = new Redis(env.KYB_QUEUE_URL, { maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  const store = createRedisStore({ client, prefix: `${env.KYB_NAMESPACE}:store:` });
  return {
    queue,
    store,
    // The events in the streams' lists, less those whose head job is dead-lettered (failed).
    unfinished: async () => (await queue.backlog()) - (await queue.blockedStreams()).length,
    async storedPayload(key, streamId) {
      // The events wait in their stream's list; the head job holds only their ids.
      const entries = await client.lrange(`${env.KYB_NAMESPACE}:${QUEUE_NAME}:kyb:stream:${streamId}`, 0, -1);
      const entry = entries
        .map((raw) => JSON.parse(raw) as { key: string; event: { payload: unknown } })
        .find((candidate) => candidate.key === key);
      return entry?.event.payload;
    },
    async describeJob(key, streamId) {
      const base = `${env.KYB_NAMESPACE}:${QUEUE_NAME}`;
      const id = headJobIdOf(key);
      const job = await client.hgetall(`${base}:${id}`);
      const head = await client.get(`${base}:kyb:head:${streamId}`);
      const waiting = await client.llen(`${base}:kyb:stream:${streamId}`);
      const where: string[] = [];
      for (const state of ['active', 'wait', 'failed', 'completed', 'delayed', 'prioritized', 'paused', 'stalled']) {
        const set = `${base}:${state}`;
        const type = await client.type(set);
        if (type === 'list' && (await client.lpos(set, id)) !== null) where.push(state);
        if (type === 'zset' && (await client.zscore(set, id)) !== null) where.push(state);
        if (type === 'set' && (await client.sismember(set, id)) === 1) where.push(state);
      }
      return (
        `BullMQ job ${id} in [${where.join(',')}] ${JSON.stringify({ ...job, data: undefined })}; ` +
        `stream head ${head === id ? 'is this job' : head}, ${waiting} waiting`
      );
    },
    async close() {
      await queue.close().catch(() => {});
      connection.disconnect();
      client.disconnect();
    },
  };
}

/**
 * Prepares an engine before any process uses it: the store's table (PostgreSQL), the queues, and pg-boss's job expiry.
 * createPgBossQueue has no option for it, and pg-boss's default keeps the job of a worker that died active for 15
 * minutes (its stream held all that time), so the test sets it on the queue, which every job inherits.
 */
export async function prepareEngine(opened: OpenedEngine): Promise<void> {
  if (!opened.boss) return;
  await (opened.store as unknown as { ensureSchema(): Promise<void> }).ensureSchema();
  await (opened.queue as PgBossQueue).ensureQueues();
  await opened.boss.updateQueue(QUEUE_NAME, { expireInSeconds: PGBOSS_EXPIRE_SECONDS });
}
