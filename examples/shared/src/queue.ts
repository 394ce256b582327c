/*
 * The `--queue` variant of the example apps and of the demo (queue mode, docs/queue-mode.md): the receiver answers
 * `200 queued` once the verified event is in the queue, and a worker in the same process runs the handlers from it.
 *
 *   --queue            the memory queue: works anywhere, but is not durable (jobs waiting in it die with the process)
 *   --queue=pgboss     pg-boss on DATABASE_URL (PostgreSQL), dedupe in the PostgreSQL store
 *   --queue=bullmq     BullMQ on REDIS_URL (Redis), dedupe in the Redis store
 *
 * The engines and their drivers are loaded only when asked for, so the memory variant (and the tests) need no server.
 */
import {
  createMemoryQueue,
  createQueueWorker,
  type DedupeStore,
  type EventQueue,
  type QueueWorker,
  type Receiver,
} from '@kyb-webhooks/core';

/** The queue engines of the `--queue` variant. */
export const QUEUE_ENGINES = ['memory', 'pgboss', 'bullmq'] as const;
export type QueueEngine = (typeof QUEUE_ENGINES)[number];

/** The jobs the example's worker runs at once (different streams; a stream's jobs run one at a time). */
export const EXAMPLE_WORKER_CONCURRENCY = 4;

/**
 * The engine `--queue` asks for among the command-line arguments: `--queue` alone is the memory queue; undefined
 * without the flag (inline mode). Throws, naming the choices, on an engine it does not know.
 *
 * @example
 * ```ts
 * queueFlag(['express', '--queue=pgboss']) // 'pgboss'
 * ```
 */
export function queueFlag(args: readonly string[]): QueueEngine | undefined {
  let engine: QueueEngine | undefined;
  for (const arg of args) {
    if (arg === '--queue') engine = 'memory';
    else if (arg.startsWith('--queue=')) {
      const value = arg.slice('--queue='.length);
      if (!(QUEUE_ENGINES as readonly string[]).includes(value)) {
        throw new Error(
          `Unknown queue engine "${value}": use --queue (the memory queue, in this process), --queue=pgboss (with DATABASE_URL) or --queue=bullmq (with REDIS_URL).`,
        );
      }
      engine = value as QueueEngine;
    }
  }
  return engine;
}

/** An open queue engine for an example: the queue, the store its fleet shares, and how to close both. */
export interface ExampleQueue {
  engine: QueueEngine;
  queue: EventQueue;
  /** Where the receiver dedupes processed events: the engine's database; undefined with the memory queue (memory store). */
  store: DedupeStore | undefined;
  /** Whether the queued jobs survive the process. */
  durable: boolean;
  /** Which queue, and where: `the memory queue`. */
  description: string;
  /** A sentence for the console on what survives a restart. */
  durability: string;
  close(): Promise<void>;
}

/**
 * Opens the engine of `--queue`. The memory queue needs nothing; pg-boss reads DATABASE_URL and BullMQ REDIS_URL, and
 * each starts its driver, which `close()` stops again. `name` is the engine's queue name (default `kyb-webhooks`).
 *
 * @example
 * ```ts
 * const opened = await openQueue('memory')
 * const receiver = createReceiver({ secrets, queue: opened.queue, store: opened.store })
 * ```
 */
export async function openQueue(
  engine: QueueEngine,
  env: NodeJS.ProcessEnv = process.env,
  name = 'kyb-webhooks',
): Promise<ExampleQueue> {
  if (engine === 'pgboss') return openPgBoss(required(env, 'DATABASE_URL', 'postgres://user:pass@127.0.0.1/app'), name);
  if (engine === 'bullmq') return openBullMq(required(env, 'REDIS_URL', 'redis://127.0.0.1:6379'), name);
  return {
    engine,
    queue: createMemoryQueue(),
    store: undefined,
    durable: false,
    description: 'the memory queue',
    durability:
      'The memory queue is NOT durable: jobs still waiting die with the process. For a durable queue: --queue=pgboss (DATABASE_URL) or --queue=bullmq (REDIS_URL).',
    close: async () => {},
  };
}

function required(env: NodeJS.ProcessEnv, name: string, example: string): string {
  const value = env[name];
  if (!value) throw new Error(`Set ${name} for this queue engine, e.g. ${name}=${example}`);
  return value;
}

async function openPgBoss(url: string, name: string): Promise<ExampleQueue> {
  const [{ PgBoss }, { createPgBossQueue }, { createPostgresStore }, { default: pg }] = await Promise.all([
    import('pg-boss'),
    import('@kyb-webhooks/queue-pgboss'),
    import('@kyb-webhooks/store-sql/postgres'),
    import('pg'),
  ]);
  const boss = new PgBoss(url);
  boss.on('error', (error: Error) => console.error(`pg-boss: ${error.message}`)); // pg-boss needs an 'error' listener
  await boss.start().catch((error: Error) => {
    throw new Error(`PostgreSQL at DATABASE_URL is not reachable: ${error.message}`);
  });
  const pool = new pg.Pool({ connectionString: url });
  try {
    const store = createPostgresStore({ pool });
    await store.ensureSchema();
    const queue = createPgBossQueue({ boss, name, pollingIntervalSeconds: 0.5 });
    await queue.ensureQueues();
    return {
      engine: 'pgboss',
      queue,
      store,
      durable: true,
      description: `the pg-boss queue "${name}" in PostgreSQL (DATABASE_URL)`,
      durability:
        'The jobs are kept in PostgreSQL: they survive a restart, and workers in other processes may run them.',
      close: async () => {
        await boss.stop({ graceful: true });
        await pool.end();
      },
    };
  } catch (error) {
    await boss.stop({ graceful: false });
    await pool.end();
    throw error;
  }
}

async function openBullMq(url: string, name: string): Promise<ExampleQueue> {
  const [{ Redis }, { createBullMqQueue }, { createRedisStore }] = await Promise.all([
    import('ioredis'),
    import('@kyb-webhooks/queue-bullmq'),
    import('@kyb-webhooks/store-redis'),
  ]);
  // BullMQ's workers want maxRetriesPerRequest: null; the queue and the store never close this connection.
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  // Fail at start-up, not on the first delivery: ioredis would otherwise retry an unreachable server for ever.
  await new Promise<void>((resolve, reject) => {
    connection.once('ready', resolve).once('error', (error: Error) => {
      connection.disconnect();
      reject(new Error(`Redis at REDIS_URL is not reachable: ${error.message}`));
    });
  });
  const queue = createBullMqQueue({ connection, name });
  return {
    engine: 'bullmq',
    queue,
    store: createRedisStore({ client: connection }),
    durable: true,
    description: `the BullMQ queue "${name}" in Redis (REDIS_URL)`,
    durability: 'The jobs are kept in Redis: they survive a restart, and workers in other processes may run them.',
    close: async () => {
      await queue.close();
      connection.disconnect();
    },
  };
}

/**
 * Starts a worker that runs `receiver`'s handlers from its queue, in this process.
 *
 * @example
 * ```ts
 * const worker = await startWorker(receiver)
 * process.once('SIGTERM', () => void worker.stop())
 * ```
 */
export async function startWorker(receiver: Receiver): Promise<QueueWorker> {
  const worker = createQueueWorker(receiver, { concurrency: EXAMPLE_WORKER_CONCURRENCY });
  await worker.start();
  return worker;
}

/** A queue whose caller can wait until every job it enqueued has run: {@link trackQueue}. */
export interface TrackedQueue {
  queue: EventQueue;
  /** Resolves once every job enqueued through `queue` has succeeded, or after `timeoutMs` (a job still failing). */
  idle(timeoutMs?: number): Promise<void>;
}

/**
 * Wraps `queue` so the demo can wait for its worker: it counts the events enqueued through it and the jobs that
 * succeeded, engine-agnostic. The demo's own instrument; an app does not need it.
 *
 * @example
 * ```ts
 * const tracked = trackQueue(createMemoryQueue())
 * const receiver = createReceiver({ secrets, queue: tracked.queue })
 * await tracked.idle()
 * ```
 */
export function trackQueue(queue: EventQueue): TrackedQueue {
  const open = new Set<string>();
  let waiters: (() => void)[] = [];
  const finished = (key: string) => {
    open.delete(key);
    if (open.size > 0) return;
    for (const wake of waiters.splice(0)) wake();
  };
  return {
    queue: {
      name: queue.name,
      async enqueue(event) {
        const outcome = await queue.enqueue(event);
        if (outcome === 'enqueued') open.add(event.key);
        return outcome;
      },
      work: (handle, options) =>
        queue.work(async (job) => {
          await handle(job);
          finished(job.event.key);
        }, options),
      blockedStreams: () => queue.blockedStreams(),
      retryStream: (streamId) => queue.retryStream(streamId),
      skipBlocked: (streamId, options) => queue.skipBlocked(streamId, options),
    },
    idle(timeoutMs = 10_000) {
      if (open.size === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(done, timeoutMs);
        function done() {
          clearTimeout(timer);
          waiters = waiters.filter((wake) => wake !== done);
          resolve();
        }
        waiters.push(done);
      });
    },
  };
}
