/*
 * The pg-boss engine of queue mode (docs/queue-mode.md): verified events become pg-boss jobs in PostgreSQL, and
 * workers of any number of processes run them. Everything the contract asks for maps onto pg-boss 12 itself:
 *
 * - per-stream order: the queue's `key_strict_fifo` policy with `singletonKey = streamId` (a key's next job is fetched
 *   only once no job of that key is active, waiting for its retry, or failed);
 * - dedupe: the job id is derived from the event's key (job-id.ts), and pg-boss inserts nothing for an id it has;
 * - retries: `retryLimit`, `retryDelay`, `retryBackoff`; past the limit the job stays in the queue as `failed` (which
 *   is what holds its stream back) and pg-boss copies it into `<name>-dead-letter`;
 * - retry / skip: pg-boss's `retry`, and `retry` + `complete` with the skip's reason as the job's output.
 *
 * Two reads of its own go to pg-boss's job table through pg-boss's pool: the backlog count (pg-boss's own counts are
 * refreshed once a minute at best) and the failed jobs by state (findJobs has no state filter).
 */
import { KybWebhookError } from '@kyb-webhooks/core';
import {
  QueueFullError,
  optionRules,
  validateOptions,
  type BlockedStream,
  type EventQueue,
  type JobHandler,
  type OptionRule,
  type OptionsSpec,
  type QueuedEvent,
  type QueueJob,
  type QueueSubscription,
} from '@kyb-webhooks/core/queue';
import { startFetchLoop } from './fetch-loop.js';
import { jobIdOf } from './job-id.js';

/**
 * A pg-boss job as `work(…, { includeMetadata: true })` and `findJobs` hand it out: the fields this queue reads.
 *
 * @example
 * ```ts
 * const [job]: PgBossJobLike[] = await boss.findJobs('kyb-webhooks', { id })
 * ```
 */
export interface PgBossJobLike {
  id: string;
  data: unknown;
  state?: string;
  /** Claims after the first: 0 on the first run. */
  retryCount: number;
  /** The job's retry limit (with `includeMetadata`): a run at `retryCount >= retryLimit` is its last. */
  retryLimit?: number;
  createdOn: Date | string;
  completedOn?: Date | string | null;
  output?: unknown;
}

/**
 * What this queue calls on the database handle of a pg-boss instance (`boss.getDb()`).
 *
 * @example
 * ```ts
 * const db: PgBossDbLike = boss.getDb()
 * ```
 */
export interface PgBossDbLike {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
  /** pg-boss's own pool has it (recent 12.x): retryStream and skipBlocked then change a job in one transaction. */
  beginTransaction?(): Promise<{ db: unknown; commit(): Promise<void>; rollback(): Promise<void> }>;
}

/**
 * The methods of a pg-boss 12 instance (`new PgBoss(…)`) that this queue calls: a `PgBoss` fits it as it is.
 *
 * @example
 * ```ts
 * import { PgBoss } from 'pg-boss'
 * const boss: PgBossLike = await new PgBoss(process.env.DATABASE_URL!).start()
 * ```
 */
export interface PgBossLike {
  send(name: string, data: object, options: object): Promise<string | null>;
  /** One job at a time, fetched by the queue's worker slots (fetch-loop.ts). */
  fetch(name: string, options: { batchSize: number; includeMetadata: true }): Promise<PgBossJobLike[] | null>;
  /** Fails a job fenced by the claim it was fetched with (`{ id, retryCount }`). */
  fail(name: string, id: { id: string; retryCount: number }, data: object): Promise<unknown>;
  createQueue(name: string, options: object): Promise<void>;
  getQueue(name: string): Promise<{ policy?: string | null } | null>;
  retry(name: string, id: string, options?: object): Promise<unknown>;
  complete(
    name: string,
    id: string | { id: string; retryCount: number },
    data?: object,
    options?: object,
  ): Promise<unknown>;
  /** pg-boss 12.25+: lets retryStream give the job its full retries again (older: one more run). */
  update?(name: string, data: object, options: object): Promise<unknown>;
  findJobs(name: string, options: object): Promise<PgBossJobLike[]>;
  getDb(): PgBossDbLike;
}

/**
 * Options of {@link createPgBossQueue}.
 *
 * @example
 * ```ts
 * const options: PgBossQueueOptions = { boss, name: 'shop-kyb', retryLimit: 8, retryDelaySeconds: 5, maxBacklog: 50_000 }
 * const queue = createPgBossQueue(options)
 * ```
 */
export interface PgBossQueueOptions {
  /** Your started pg-boss instance (`await new PgBoss(url).start()`). The queue never starts or stops it. */
  boss: PgBossLike;
  /** The pg-boss queue the events go to; its dead letter queue is `<name>-dead-letter`. Default `'kyb-webhooks'`. */
  name?: string;
  /** Retries of a failed job before it is dead-lettered and its stream blocked (runs = retryLimit + 1). Default 5. */
  retryLimit?: number;
  /**
   * Wait before the first retry, in whole seconds; each further retry waits about twice as long (pg-boss's backoff,
   * with jitter). 0 retries at once, without backoff. Default 1.
   */
  retryDelaySeconds?: number;
  /** Jobs waiting, running or blocked past which `enqueue` throws `QueueFullError` (the receiver answers 429). Default 10,000. */
  maxBacklog?: number;
  /** The `Retry-After` of a 429 over the backlog. Default 30 s. */
  retryAfterSeconds?: number;
  /**
   * How long a worker slot whose last fetch found no job waits before it asks again (at least 0.5). A slot that found
   * one asks again at once, so a backlog drains as fast as the handlers run. Default 2.
   */
  pollingIntervalSeconds?: number;
  /**
   * How long pg-boss keeps a finished job (pg-boss's `deleteAfterSeconds`): the dedupe window of `enqueue`, and also
   * how long a dead-lettered job holds its stream before pg-boss's maintenance deletes it (see the README). Default 7
   * days (604,800).
   */
  deleteAfterSeconds?: number;
  /** How long a job may wait to run before pg-boss deletes it unrun (pg-boss's `retentionSeconds`). Default 14 days. */
  retentionSeconds?: number;
  /** The PostgreSQL schema of your pg-boss instance (its `schema` option), for the backlog count. Default `'pgboss'`. */
  schema?: string;
  /** Errors of the worker slots' fetches and settles (PostgreSQL unreachable, …); the slots go on. Default: a line on the console. */
  onError?: (error: unknown) => void;
}

/**
 * The pg-boss queue: an `EventQueue`, plus its setup.
 *
 * @example
 * ```ts
 * const queue: PgBossQueue = createPgBossQueue({ boss })
 * await queue.ensureQueues() // optional: enqueue and work do it once on first use
 * ```
 */
export interface PgBossQueue extends EventQueue {
  /** The pg-boss queue name of the events. */
  readonly queueName: string;
  /** The pg-boss queue the dead-lettered copies go to: `<name>-dead-letter`. */
  readonly deadLetterQueueName: string;
  /**
   * Creates the two pg-boss queues if they do not exist (idempotent, safe from many processes at once) and checks the
   * schema. `enqueue` and `work` call it once on first use; call it at startup to fail there instead.
   */
  ensureQueues(): Promise<void>;
}

/** The job data: the event, and from which claim the attempts count again after a retryStream. */
interface JobData {
  event: QueuedEvent;
  /** retryCount at the first run after the last retryStream; attempt = retryCount + 1 - attemptBase. */
  attemptBase?: number;
}

const DEFAULTS = {
  name: 'kyb-webhooks',
  retryLimit: 5,
  retryDelaySeconds: 1,
  maxBacklog: 10_000,
  retryAfterSeconds: 30,
  pollingIntervalSeconds: 2,
  deleteAfterSeconds: 7 * 24 * 3600,
  retentionSeconds: 14 * 24 * 3600,
  schema: 'pgboss',
} as const;

type Settings = Omit<Required<PgBossQueueOptions>, 'boss'>;

/** How long a backlog count is trusted: about a second, so a burst of deliveries costs one count query, not one each. */
const BACKLOG_TTL_MS = 1_000;
/** The most blocked streams one `blockedStreams()` lists. */
const MAX_BLOCKED_LISTED = 100_000;

/**
 * Creates the pg-boss queue of queue mode: events in PostgreSQL through your pg-boss 12 instance, one job per event
 * key, each stream's jobs one at a time in enqueue order across every worker process (`key_strict_fifo` keyed by the
 * stream id), retries with backoff, and past them a dead letter that blocks the stream until it is retried or skipped.
 * Options are checked at once: a mistake throws `config_invalid` naming the fix.
 *
 * @example
 * ```ts
 * import { PgBoss } from 'pg-boss'
 * import { createQueueWorker, createReceiver } from '@kyb-webhooks/core'
 * import { createPgBossQueue } from '@kyb-webhooks/queue-pgboss'
 *
 * const boss = await new PgBoss(process.env.DATABASE_URL!).start()
 * const queue = createPgBossQueue({ boss })
 * const receiver = createReceiver({ secrets, store, queue }) // answers 200 queued once the job is in PostgreSQL
 * await createQueueWorker(receiver, { concurrency: 4 }).start()
 * ```
 */
export function createPgBossQueue(options: PgBossQueueOptions): PgBossQueue {
  validateOptions(options, OPTIONS_SPEC);
  const settings: Settings = {
    name: options.name ?? DEFAULTS.name,
    retryLimit: options.retryLimit ?? DEFAULTS.retryLimit,
    retryDelaySeconds: options.retryDelaySeconds ?? DEFAULTS.retryDelaySeconds,
    maxBacklog: options.maxBacklog ?? DEFAULTS.maxBacklog,
    retryAfterSeconds: options.retryAfterSeconds ?? DEFAULTS.retryAfterSeconds,
    pollingIntervalSeconds: options.pollingIntervalSeconds ?? DEFAULTS.pollingIntervalSeconds,
    deleteAfterSeconds: options.deleteAfterSeconds ?? DEFAULTS.deleteAfterSeconds,
    retentionSeconds: options.retentionSeconds ?? DEFAULTS.retentionSeconds,
    schema: options.schema ?? DEFAULTS.schema,
    onError: options.onError ?? logWorkerError,
  };
  return new PgBossQueueEngine(options.boss, settings);
}

class PgBossQueueEngine implements PgBossQueue {
  readonly name = 'pg-boss queue';
  readonly queueName: string;
  readonly deadLetterQueueName: string;
  private ready: Promise<void> | undefined;
  private backlog: { count: number; at: number } | undefined;
  private counting: Promise<number> | undefined;
  /** The job options of every send: they travel with the job, so a queue created by an older config cannot differ. */
  private readonly jobOptions: Record<string, unknown>;

  constructor(
    private readonly boss: PgBossLike,
    private readonly settings: Settings,
  ) {
    this.queueName = settings.name;
    this.deadLetterQueueName = `${settings.name}-dead-letter`;
    this.jobOptions = {
      retryLimit: settings.retryLimit,
      // pg-boss's backoff waits at least a second (it raises a 0 delay to 1), so 0 means "at once": no backoff.
      retryDelay: settings.retryDelaySeconds,
      retryBackoff: settings.retryDelaySeconds > 0,
      deadLetter: this.deadLetterQueueName,
      deleteAfterSeconds: settings.deleteAfterSeconds,
      retentionSeconds: settings.retentionSeconds,
    };
  }

  ensureQueues(): Promise<void> {
    // Once per queue object; a failure (the database down at startup) is not remembered, so the next call tries again.
    this.ready ??= this.createQueues().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  async enqueue(event: QueuedEvent): Promise<'enqueued' | 'duplicate'> {
    await this.ensureQueues();
    const id = await jobIdOf(event.key);
    if ((await this.backlogCount()) >= this.settings.maxBacklog) {
      // As the memory queue: a duplicate is answered as such even over the backlog, as it adds nothing.
      const existing = await this.boss.findJobs(this.queueName, { id });
      if (existing.length > 0) return 'duplicate';
      throw new QueueFullError(this.settings.retryAfterSeconds);
    }
    const data: JobData = { event };
    const sent = await this.boss.send(this.queueName, data, { ...this.jobOptions, id, singletonKey: event.streamId });
    if (sent === null) return 'duplicate';
    // Counted locally until the next count, so a burst within the cache's second cannot overshoot it unseen.
    if (this.backlog) this.backlog.count++;
    return 'enqueued';
  }

  async work(handle: JobHandler, options: { concurrency: number }): Promise<QueueSubscription> {
    const concurrency = options?.concurrency;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new KybWebhookError(
        'config_invalid',
        `pg-boss queue work(): \`concurrency\` must be a whole number of at least 1, got ${String(concurrency)}.`,
      );
    }
    await this.ensureQueues();
    // Our own fetch loop (fetch-loop.ts), not pg-boss's work(): a slot that found a job fetches the next at once. One
    // job per fetch: a batch would be settled as a whole, and one stream's head holds only its own stream.
    const loop = startFetchLoop(
      {
        boss: this.boss,
        queueName: this.queueName,
        pollingIntervalMs: this.settings.pollingIntervalSeconds * 1000,
        run: (job) => runOne(handle, job),
        onError: this.settings.onError,
      },
      concurrency,
    );
    // stop() ends this subscription's slots only, never the caller's pg-boss instance, once their jobs are settled.
    return { stop: () => loop.stop() };
  }

  async blockedStreams(): Promise<BlockedStream[]> {
    await this.ensureQueues();
    const blocked: BlockedStream[] = [];
    for (const { id, streamId } of await this.failedJobIds()) {
      const [job] = await this.boss.findJobs(this.queueName, { id });
      if (job?.state === 'failed') blocked.push(blockedStreamOf(streamId, job));
    }
    return blocked;
  }

  async retryStream(streamId: string): Promise<boolean> {
    await this.ensureQueues();
    const job = await this.failedJobOf(streamId);
    if (!job) return false;
    // The next claim raises retryCount by one: from it, attempts count from 1 again and the job gets its full retries.
    const attemptBase = job.retryCount + 1;
    return this.atomically(async (db) => {
      if (affected(await this.boss.retry(this.queueName, job.id, db)) === 0) return false; // retried or skipped meanwhile
      if (typeof this.boss.update === 'function') {
        const data: JobData = { ...(job.data as JobData), attemptBase };
        await this.boss.update(this.queueName, data, {
          ...db,
          id: job.id,
          retryLimit: attemptBase + this.settings.retryLimit,
        });
      }
      return true;
    });
  }

  async skipBlocked(streamId: string, options: { reason: string }): Promise<boolean> {
    if (typeof options?.reason !== 'string' || options.reason.trim() === '') {
      throw new TypeError('skipBlocked needs a reason: who decided to skip the event, and why');
    }
    await this.ensureQueues();
    const job = await this.failedJobOf(streamId);
    if (!job) return false;
    const skipped = {
      skipped: { reason: options.reason, at: new Date().toISOString(), lastOutput: job.output ?? null },
    };
    // pg-boss completes only jobs that are queued or active, so the failed job is put back (retry) and completed in
    // the same transaction: no worker can take it in between, and the completed job keeps its id (so the event is
    // still deduped) with the reason as its output.
    return this.atomically(async (db) => {
      if (affected(await this.boss.retry(this.queueName, job.id, db)) === 0) return false;
      await this.boss.complete(this.queueName, job.id, skipped, { ...db, includeQueued: true });
      return true;
    });
  }

  private async createQueues(): Promise<void> {
    const { boss } = this;
    // The dead letter queue first: pg-boss refuses a deadLetter that does not exist. Nothing works it; it is the log
    // of what was dead-lettered, and its jobs are plain (standard) copies.
    await boss.createQueue(this.deadLetterQueueName, {
      policy: 'standard',
      retentionSeconds: this.settings.retentionSeconds,
    });
    await boss.createQueue(this.queueName, { policy: 'key_strict_fifo', ...this.jobOptions });
    const queue = await boss.getQueue(this.queueName);
    if (queue?.policy !== 'key_strict_fifo') {
      throw new KybWebhookError(
        'config_invalid',
        `createPgBossQueue: the pg-boss queue '${this.queueName}' exists with the '${String(queue?.policy)}' policy; ` +
          "queue mode needs 'key_strict_fifo' (one job per stream at a time, in order), and pg-boss cannot change a " +
          'policy. Pass another `name`, or delete that queue.',
      );
    }
    await this.countBacklog();
  }

  private async backlogCount(): Promise<number> {
    const cached = this.backlog;
    if (cached && Date.now() - cached.at < BACKLOG_TTL_MS) return cached.count;
    // Concurrent deliveries share one count.
    this.counting ??= this.countBacklog().finally(() => {
      this.counting = undefined;
    });
    return this.counting;
  }

  /**
   * Jobs waiting, running or blocked (created, retry, active, failed), counted up to the limit only: past it the
   * exact number does not matter, and the count stays cheap however deep the backlog.
   */
  private async countBacklog(): Promise<number> {
    const rows = await this.query(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM ${this.settings.schema}.job ` +
        `WHERE name = $1 AND state IN ('created', 'retry', 'active', 'failed') LIMIT $2) AS backlog`,
      [this.queueName, this.settings.maxBacklog],
    );
    const count = Number((rows[0] as { n?: unknown } | undefined)?.n ?? 0);
    this.backlog = { count, at: Date.now() };
    return count;
  }

  /**
   * The failed jobs of the queue (of one stream, when given), oldest failure first. Read by state in SQL (job_i8,
   * pg-boss's unique index of key_strict_fifo, serves it): pg-boss's findJobs by key lists the key's jobs oldest first
   * with completed ones among them, so a busy stream's failed job could lie past any page of it.
   */
  private async failedJobIds(streamId?: string): Promise<{ id: string; streamId: string }[]> {
    const byStream = streamId === undefined ? '' : 'AND singleton_key = $2 ';
    const rows = await this.query(
      `SELECT id::text AS id, singleton_key AS "streamId" FROM ${this.settings.schema}.job ` +
        `WHERE name = $1 AND state = 'failed' ${byStream}ORDER BY completed_on LIMIT ${MAX_BLOCKED_LISTED}`,
      streamId === undefined ? [this.queueName] : [this.queueName, streamId],
    );
    return rows as { id: string; streamId: string }[];
  }

  /** One statement of this queue's own through pg-boss's pool; a schema without pg-boss's tables is a config error. */
  private async query(sql: string, values: unknown[]): Promise<unknown[]> {
    try {
      return (await this.boss.getDb().executeSql(sql, values)).rows;
    } catch (error) {
      if ((error as { code?: unknown })?.code === '42P01') {
        throw new KybWebhookError(
          'config_invalid',
          `createPgBossQueue: there is no pg-boss job table in the schema '${this.settings.schema}'. Set \`schema\` ` +
            'to the `schema` option of your PgBoss instance (default pgboss), and start the instance first.',
          { cause: error },
        );
      }
      throw error;
    }
  }

  /** The job that blocks `streamId`: its `failed` job (job_i8 of key_strict_fifo allows one per key). */
  private async failedJobOf(streamId: string): Promise<PgBossJobLike | undefined> {
    if (typeof streamId !== 'string' || streamId === '') return undefined;
    const [failed] = await this.failedJobIds(streamId);
    if (!failed) return undefined;
    const [job] = await this.boss.findJobs(this.queueName, { id: failed.id });
    return job?.state === 'failed' ? job : undefined;
  }

  /** Runs `change` in one transaction when pg-boss's database handle can open one, else statement by statement. */
  private async atomically<T>(change: (db: { db?: unknown }) => Promise<T>): Promise<T> {
    const database = this.boss.getDb();
    if (typeof database.beginTransaction !== 'function') return change({});
    const transaction = await database.beginTransaction();
    try {
      const result = await change({ db: transaction.db });
      await transaction.commit();
      return result;
    } catch (error) {
      await transaction.rollback();
      throw error;
    }
  }
}

/** Runs one pg-boss job through the handler; a rejection goes back to pg-boss, which retries or dead-letters it. */
/** The default `onError`: one line, the error's message only (a job's data is never printed). */
function logWorkerError(error: unknown): void {
  console.error(`kyb-webhooks pg-boss queue: ${error instanceof Error ? error.message : String(error)}`);
}

async function runOne(handle: JobHandler, job: PgBossJobLike): Promise<void> {
  const queueJob = queueJobOf(job);
  try {
    await handle(queueJob);
  } catch (error) {
    // pg-boss stores the serialized error as the job's output: its own properties, so a JobFailedError's `code`
    // (handler_failed, store_unavailable, …) is there for blockedStreams() to report.
    throw error instanceof Error ? error : new Error(String(error));
  }
}

function queueJobOf(job: PgBossJobLike): QueueJob {
  const data = job.data as Partial<JobData> | null;
  if (!data || typeof data !== 'object' || !data.event || typeof data.event.streamId !== 'string') {
    // Someone else's job in this queue: failing it dead-letters it where it can be seen, rather than losing it.
    throw new Error(`pg-boss job ${job.id} carries no kyb-webhooks event; it was not enqueued by createPgBossQueue`);
  }
  return {
    id: job.id,
    event: data.event,
    attempt: job.retryCount + 1 - (data.attemptBase ?? 0),
    enqueuedAt: new Date(job.createdOn).getTime(),
    lastAttempt: job.retryLimit !== undefined && job.retryCount >= job.retryLimit,
  };
}

function blockedStreamOf(streamId: string, job: PgBossJobLike): BlockedStream {
  const data = job.data as Partial<JobData> | null;
  const event = data?.event;
  return {
    streamId,
    eventId: event?.eventId ?? job.id,
    seq: event?.seq ?? -1,
    type: event?.type ?? 'unknown',
    attempts: job.retryCount + 1 - (data?.attemptBase ?? 0),
    error: describeOutput(job.output),
    blockedAt: new Date(job.completedOn ?? job.createdOn).getTime(),
  };
}

/** A failed job's output as blockedStreams() reports it: the error's `code` when it had one, else its message. */
function describeOutput(output: unknown): string {
  if (output && typeof output === 'object') {
    const { code, message } = output as { code?: unknown; message?: unknown };
    if (typeof code === 'string') return code;
    if (typeof message === 'string') return message;
    return JSON.stringify(output);
  }
  return output === undefined || output === null ? 'unknown failure' : String(output);
}

/** `affected` of a pg-boss command response; a response without it (an older or wrapped pg-boss) counts as done. */
function affected(response: unknown): number {
  const count = (response as { affected?: unknown } | null)?.affected;
  return typeof count === 'number' ? count : 1;
}

const BOSS_FIX =
  'pass your pg-boss 12 instance, started: `const boss = await new PgBoss(process.env.DATABASE_URL).start()`';

/** pg-boss's rule for queue names (letters, digits, `_`, `-`, `.`, `/`). */
const queueName: OptionRule = (value) => {
  if (typeof value !== 'string' || !/^[\w.\-/]+$/.test(value)) {
    return "must be a pg-boss queue name: letters, digits, '_', '-', '.' or '/', e.g. 'kyb-webhooks'.";
  }
  return undefined;
};

const schemaName: OptionRule = (value) =>
  typeof value === 'string' && /^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(value)
    ? undefined
    : "must be the `schema` option of your PgBoss instance, an unquoted PostgreSQL name such as 'pgboss'.";

const OPTIONS_SPEC: OptionsSpec = {
  owner: 'createPgBossQueue',
  example: 'createPgBossQueue({ boss: await new PgBoss(process.env.DATABASE_URL).start() })',
  options: {
    boss: optionRules.required(
      optionRules.methods(
        ['send', 'fetch', 'fail', 'createQueue', 'getQueue', 'retry', 'complete', 'findJobs', 'getDb'],
        BOSS_FIX,
      ),
      BOSS_FIX,
    ),
    name: queueName,
    retryLimit: optionRules.wholeNumber(0),
    retryDelaySeconds: optionRules.wholeNumber(0, 'seconds'),
    maxBacklog: optionRules.positiveInteger('jobs'),
    retryAfterSeconds: optionRules.positiveInteger('seconds'),
    pollingIntervalSeconds: optionRules.numberBetween(0.5, 3_600, 'seconds'),
    deleteAfterSeconds: optionRules.wholeNumber(0, 'seconds'),
    retentionSeconds: optionRules.positiveInteger('seconds'),
    schema: schemaName,
    onError: optionRules.func('called with each error of the worker slots (PostgreSQL unreachable, …)'),
  },
  aliases: {
    pgBoss: 'boss',
    pgboss: 'boss',
    client: 'boss',
    queue: 'name',
    queueName: 'name',
    retries: 'retryLimit',
    retryDelay: 'retryDelaySeconds',
    retryDelayMs: 'retryDelaySeconds',
    backlog: 'maxBacklog',
    maxQueueSize: 'maxBacklog',
    pollingInterval: 'pollingIntervalSeconds',
    deleteAfter: 'deleteAfterSeconds',
    retention: 'retentionSeconds',
  },
};
