/*
 * The BullMQ engine of queue mode (docs/queue-mode.md): verified events wait in Redis and workers of any number of
 * processes run them through BullMQ. Open-source BullMQ has no per-key order (its groups are BullMQ Pro), so the
 * order is this package's own, kept by Lua scripts (scripts.ts):
 *
 * - each stream's events wait in a Redis list, in enqueue order; only the list's first event (the head) is ever a
 *   BullMQ job, so however many workers run, a stream has at most one job in BullMQ, and different streams' heads run
 *   side by side up to each worker's concurrency;
 * - dedupe: a marker per event key, set NX with a TTL in the same script that appends the event;
 * - retries: BullMQ's own `attempts` and exponential `backoff` on the head job; past them BullMQ marks it failed, the
 *   event stays at the head of its list, and nothing else of that stream runs (blocked);
 * - on success the worker pops the head and adds the next head's job; a crash between the two is repaired by
 *   `recover()` (run by every worker at start and every `recoverIntervalMs`), which re-adds the job of any head that
 *   has none. Adding a head job twice is harmless: its id is derived from the event key, and BullMQ adds nothing for
 *   an id it holds; a job whose event is no longer the head does nothing.
 */
import { KybWebhookError } from '@kyb-webhooks/core';
import {
  QueueFullError,
  describeJobFailure,
  optionRules,
  validateOptions,
  type BlockedStream,
  type EventQueue,
  type JobHandler,
  type OptionRule,
  type OptionsSpec,
  type QueuedEvent,
  type QueueSubscription,
} from '@kyb-webhooks/core/queue';
import { Queue, Worker, type Job, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { ADVANCE, ENQUEUE, SKIP, headJobIdOf, shaOf } from './scripts.js';

/**
 * Options of {@link createBullMqQueue}.
 *
 * @example
 * ```ts
 * const options: BullMqQueueOptions = { connection: new Redis(url, { maxRetriesPerRequest: null }), retryLimit: 8 }
 * const queue = createBullMqQueue(options)
 * ```
 */
export interface BullMqQueueOptions {
  /**
   * Your ioredis connection. The queue never closes it; BullMQ duplicates it for its workers' blocking reads. Create
   * it with `maxRetriesPerRequest: null`, as BullMQ asks of the connections its workers use.
   */
  connection: Redis;
  /** The BullMQ queue name. Default `'kyb-webhooks'`. */
  name?: string;
  /** BullMQ's key prefix; this queue's own keys sit under `<prefix>:<name>:kyb:` too. Default `'bull'`. */
  prefix?: string;
  /** Retries of a failed job before it is dead-lettered and its stream blocked (runs = retryLimit + 1). Default 5. */
  retryLimit?: number;
  /** Wait before the first retry; each further retry waits twice as long (BullMQ's exponential backoff). 0 retries at once. Default 1,000 ms. */
  retryDelayMs?: number;
  /** Events waiting, running or blocked past which `enqueue` throws `QueueFullError` (the receiver answers 429). Default 10,000. */
  maxBacklog?: number;
  /** The `Retry-After` of a 429 over the backlog. Default 30 s. */
  retryAfterSeconds?: number;
  /**
   * How long an event key is remembered for dedupe after its enqueue: a redelivery within it is a duplicate. Past it
   * the receiver's store still keeps a processed event from running twice. Default 30 days (2,592,000).
   */
  dedupeRetainSeconds?: number;
  /** How often a running worker repairs heads left without a BullMQ job by a crash (see `recover`). Default 60,000 ms. */
  recoverIntervalMs?: number;
  /**
   * How long a worker's hold on a running job lasts without renewal (BullMQ's `lockDuration`; a live worker renews
   * it, so this is how long a job of a crashed worker waits before another takes it). Default 30,000 ms.
   */
  lockDurationMs?: number;
  /** How often a worker looks for jobs whose holder died (BullMQ's `stalledInterval`). Default 30,000 ms. */
  stalledIntervalMs?: number;
  /**
   * How many times a job may be taken back from a worker that died while running it before BullMQ fails it (BullMQ's
   * `maxStalledCount`, whose own default of 1 dead-lettered a job at its second crash, retries unused). Default
   * `retryLimit + 1`: crashes get as many runs as failures do.
   */
  maxStalledCount?: number;
  /** How many skip records (`skipped()`) are kept, newest first. Default 10,000. */
  maxSkipsKept?: number;
  /** Errors of BullMQ's workers and of the periodic recovery (Redis gone, …). Default: a line on the console. */
  onError?: (error: unknown) => void;
}

/**
 * A skip recorded by `skipBlocked`.
 *
 * @example
 * ```ts
 * const [last]: SkipRecord[] = await queue.skipped(1)
 * ```
 */
export interface SkipRecord {
  streamId: string;
  eventId: string;
  seq: number;
  type: string;
  reason: string;
  /** The failure that had blocked the stream. */
  error: string;
  /** When it was skipped (ms since the epoch). */
  at: number;
}

/**
 * The BullMQ queue: an `EventQueue`, plus recovery, the skip log and `close`.
 *
 * @example
 * ```ts
 * const queue: BullMqQueue = createBullMqQueue({ connection })
 * await queue.recover() // optional: workers run it at start and every recoverIntervalMs
 * ```
 */
export interface BullMqQueue extends EventQueue {
  /** The BullMQ queue name. */
  readonly queueName: string;
  /** Re-adds the BullMQ job of every stream head that has none (left by a crash); resolves how many it re-added. */
  recover(): Promise<number>;
  /** The skips recorded by `skipBlocked`, newest first (at most `limit`, default 100). */
  skipped(limit?: number): Promise<SkipRecord[]>;
  /** Events waiting, running or blocked, as counted for `maxBacklog`. */
  backlog(): Promise<number>;
  /** Stops this queue's workers (waiting for their running jobs) and closes its BullMQ objects; never your connection. */
  close(): Promise<void>;
}

/** One event in its stream's list. */
interface Entry {
  key: string;
  enqueuedAt: number;
  event: QueuedEvent;
}

/** A head job's data: which stream and event it runs (the event itself stays in the list), and its last failure. */
interface HeadJobData {
  streamId: string;
  key: string;
  eventId: string;
  seq: number;
  type: string;
  lastError?: string;
}

const DEFAULTS = {
  name: 'kyb-webhooks',
  prefix: 'bull',
  retryLimit: 5,
  retryDelayMs: 1_000,
  maxBacklog: 10_000,
  retryAfterSeconds: 30,
  dedupeRetainSeconds: 30 * 24 * 3600,
  recoverIntervalMs: 60_000,
  lockDurationMs: 30_000,
  stalledIntervalMs: 30_000,
  maxSkipsKept: 10_000,
} as const;

type Settings = Omit<Required<BullMqQueueOptions>, 'connection'>;

/**
 * Creates the BullMQ queue of queue mode: events in Redis through your ioredis connection, one job per event key,
 * each stream's events one at a time in enqueue order across every worker process, retries with backoff, and past
 * them a failed job that blocks its stream until it is retried or skipped. Options are checked at once: a mistake
 * throws `config_invalid` naming the fix.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis'
 * import { createQueueWorker, createReceiver } from '@kyb-webhooks/core'
 * import { createBullMqQueue } from '@kyb-webhooks/queue-bullmq'
 *
 * const connection = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null })
 * const queue = createBullMqQueue({ connection })
 * const receiver = createReceiver({ secrets, store, queue }) // answers 200 queued once the event is in Redis
 * await createQueueWorker(receiver, { concurrency: 4 }).start()
 * ```
 */
export function createBullMqQueue(options: BullMqQueueOptions): BullMqQueue {
  validateOptions(options, OPTIONS_SPEC);
  if (options.connection.options?.keyPrefix) {
    // BullMQ refuses it too, but only on first use; this queue's own keys would be prefixed twice over.
    throw new KybWebhookError(
      'config_invalid',
      `createBullMqQueue: \`connection\` has ioredis's keyPrefix '${options.connection.options.keyPrefix}', which ` +
        'BullMQ does not support. Make the connection without keyPrefix and pass the prefix as `prefix` instead.',
    );
  }
  const settings: Settings = {
    name: options.name ?? DEFAULTS.name,
    prefix: options.prefix ?? DEFAULTS.prefix,
    retryLimit: options.retryLimit ?? DEFAULTS.retryLimit,
    retryDelayMs: options.retryDelayMs ?? DEFAULTS.retryDelayMs,
    maxBacklog: options.maxBacklog ?? DEFAULTS.maxBacklog,
    retryAfterSeconds: options.retryAfterSeconds ?? DEFAULTS.retryAfterSeconds,
    dedupeRetainSeconds: options.dedupeRetainSeconds ?? DEFAULTS.dedupeRetainSeconds,
    recoverIntervalMs: options.recoverIntervalMs ?? DEFAULTS.recoverIntervalMs,
    lockDurationMs: options.lockDurationMs ?? DEFAULTS.lockDurationMs,
    stalledIntervalMs: options.stalledIntervalMs ?? DEFAULTS.stalledIntervalMs,
    maxStalledCount: options.maxStalledCount ?? (options.retryLimit ?? DEFAULTS.retryLimit) + 1,
    maxSkipsKept: options.maxSkipsKept ?? DEFAULTS.maxSkipsKept,
    onError: options.onError ?? ((error) => console.error('kyb-webhooks BullMQ queue:', error)),
  };
  return new BullMqQueueEngine(options.connection, settings);
}

class BullMqQueueEngine implements BullMqQueue {
  readonly name = 'BullMQ queue';
  readonly queueName: string;
  private queueObject: Queue | undefined;
  private readonly base: string;
  private readonly jobOptions: JobsOptions;
  private readonly subscriptions = new Set<QueueSubscription>();

  constructor(
    private readonly client: Redis,
    private readonly settings: Settings,
  ) {
    this.queueName = settings.name;
    this.base = `${settings.prefix}:${settings.name}:kyb:`;
    this.jobOptions = {
      attempts: settings.retryLimit + 1,
      ...(settings.retryDelayMs > 0 ? { backoff: { type: 'exponential', delay: settings.retryDelayMs } } : {}),
      // A done head is gone from BullMQ (its event from the list); a failed one stays: it is what blocks the stream.
      removeOnComplete: true,
      removeOnFail: false,
    };
  }

  /** The BullMQ Queue object, made on first use over the caller's connection (BullMQ never closes a shared one). */
  private get queue(): Queue {
    if (!this.queueObject) {
      this.queueObject = new Queue(this.settings.name, { connection: this.client, prefix: this.settings.prefix });
      // An 'error' event without a listener would throw out of the connection's event handler.
      this.queueObject.on('error', (error) => this.settings.onError(error));
    }
    return this.queueObject;
  }

  async enqueue(event: QueuedEvent): Promise<'enqueued' | 'duplicate'> {
    const jobId = headJobIdOf(event.key);
    const entry: Entry = { key: event.key, enqueuedAt: Date.now(), event };
    const outcome = await this.run(
      ENQUEUE,
      [this.base + `key:${event.key}`, ...this.streamKeys(event.streamId)],
      [JSON.stringify(entry), this.settings.dedupeRetainSeconds, this.settings.maxBacklog, jobId, event.streamId],
    );
    if (outcome === 0) return 'duplicate';
    if (outcome === -1) throw new QueueFullError(this.settings.retryAfterSeconds);
    // The event is durable from here: if this add fails (or the process dies first), enqueue rejects and the
    // service's redelivery is answered duplicate, and recover() adds the job.
    if (outcome === 2) await this.addHead(entry);
    return 'enqueued';
  }

  async work(handle: JobHandler, options: { concurrency: number }): Promise<QueueSubscription> {
    const concurrency = options?.concurrency;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new KybWebhookError(
        'config_invalid',
        `BullMQ queue work(): \`concurrency\` must be a whole number of at least 1, got ${String(concurrency)}.`,
      );
    }
    // BullMQ would throw a bare Error from its constructor here; say what to change instead.
    if (this.client.options?.maxRetriesPerRequest != null) {
      throw new KybWebhookError(
        'config_invalid',
        "BullMQ queue work(): BullMQ's workers need a connection made with `maxRetriesPerRequest: null` " +
          `(it has ${String(this.client.options.maxRetriesPerRequest)}): ` +
          '`new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: null })`. A process that only enqueues (the ' +
          'receiver) may use any connection.',
      );
    }
    const worker = new Worker<HeadJobData>(this.settings.name, (job) => this.runHead(handle, job), {
      connection: this.client,
      prefix: this.settings.prefix,
      concurrency,
      lockDuration: this.settings.lockDurationMs,
      stalledInterval: this.settings.stalledIntervalMs,
      maxStalledCount: this.settings.maxStalledCount,
    });
    worker.on('error', (error) => this.settings.onError(error));
    // A run at start repairs what a crash of the last process left; one at a time, and awaited by stop(), so no
    // recovery adds a job after the queue closed.
    let recovery: Promise<void> | undefined;
    const recovering = () => {
      recovery ??= this.recover()
        .then(
          () => undefined,
          (error: unknown) => this.settings.onError(error),
        )
        .finally(() => (recovery = undefined));
    };
    recovering();
    const timer = setInterval(recovering, this.settings.recoverIntervalMs);
    timer.unref?.();
    let stopping: Promise<void> | undefined;
    const subscription: QueueSubscription = {
      // close() without force waits for the jobs already running, as the contract's stop() asks.
      stop: () =>
        (stopping ??= (async () => {
          clearInterval(timer);
          await worker.close();
          await recovery;
          this.subscriptions.delete(subscription);
        })()),
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  async blockedStreams(): Promise<BlockedStream[]> {
    const blocked: BlockedStream[] = [];
    const page = 500;
    for (let start = 0; ; start += page) {
      const jobs = (await this.queue.getFailed(start, start + page - 1)) as Job<HeadJobData>[];
      const heads = await Promise.all(jobs.map((job) => this.client.get(this.base + `head:${job.data.streamId}`)));
      // A failed job that is no longer its stream's head (skipped, or a stale rerun) blocks nothing.
      jobs.forEach((job, i) => {
        if (heads[i] === job.id) blocked.push(blockedStreamOf(job));
      });
      if (jobs.length < page) return blocked;
    }
  }

  async retryStream(streamId: string): Promise<boolean> {
    const job = await this.failedHeadOf(streamId);
    if (!job) return false;
    try {
      // attemptsMade back to 0: the job gets its full retries again and its next run is attempt 1 (BullMQ 5.66+).
      await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
      return true;
    } catch (error) {
      // Retried or skipped meanwhile: BullMQ refuses a job that is no longer failed.
      if ((await job.isFailed().catch(() => false)) === false) return false;
      throw error;
    }
  }

  async skipBlocked(streamId: string, options: { reason: string }): Promise<boolean> {
    if (typeof options?.reason !== 'string' || options.reason.trim() === '') {
      throw new TypeError('skipBlocked needs a reason: who decided to skip the event, and why');
    }
    const job = await this.failedHeadOf(streamId);
    if (!job) return false;
    const record: SkipRecord = {
      streamId,
      eventId: job.data.eventId,
      seq: job.data.seq,
      type: job.data.type,
      reason: options.reason,
      error: job.data.lastError ?? job.failedReason ?? 'unknown failure',
      at: Date.now(),
    };
    const result = (await this.run(
      SKIP,
      [...this.streamKeys(streamId), this.base + 'skips', this.queue.keys.failed!],
      [job.id!, streamId, JSON.stringify(record), this.settings.maxSkipsKept],
    )) as [number, string?];
    if (result[0] !== 1) return false;
    // The skipped event is out of its list: its failed job only clutters BullMQ now.
    await job.remove().catch(() => {});
    if (result[1] !== undefined) await this.addHead(JSON.parse(result[1]) as Entry);
    return true;
  }

  async recover(): Promise<number> {
    let added = 0;
    let cursor = '0';
    do {
      const [next, streamIds] = await this.client.sscan(this.base + 'heads', cursor, 'COUNT', 200);
      cursor = next;
      const results = await Promise.all(streamIds.map((streamId) => this.ensureHead(streamId)));
      added += results.filter(Boolean).length;
    } while (cursor !== '0');
    return added;
  }

  async skipped(limit = 100): Promise<SkipRecord[]> {
    const raw = await this.client.lrange(this.base + 'skips', 0, Math.max(0, limit - 1));
    return raw.map((line) => JSON.parse(line) as SkipRecord);
  }

  async backlog(): Promise<number> {
    return Number((await this.client.get(this.base + 'backlog')) ?? 0);
  }

  async close(): Promise<void> {
    for (const subscription of [...this.subscriptions]) await subscription.stop();
    await this.queueObject?.close();
    this.queueObject = undefined;
  }

  /** Runs the stream's head event, if `job` is still that head; on success pops it and adds the next head's job. */
  private async runHead(handle: JobHandler, job: Job<HeadJobData>): Promise<void> {
    const { streamId } = job.data;
    const [head, raw] = await Promise.all([
      this.client.get(this.base + `head:${streamId}`),
      this.client.lindex(this.base + `stream:${streamId}`, 0),
    ]);
    if (head !== job.id || raw === null) {
      // A stale job: its event was done or skipped already (a rerun after a lost lock, a re-add racing a pop). Make
      // sure the stream's real head has its job, and finish without running anything.
      await this.ensureHead(streamId);
      return;
    }
    const entry = JSON.parse(raw) as Entry;
    // The two reads are not one atomic step; only this job's own success or a skip of a failed job can pop its event,
    // and neither can happen while it runs, but a head that does not match is left alone all the same.
    if (headJobIdOf(entry.key) !== job.id) return;
    try {
      await handle({
        id: job.id,
        event: entry.event,
        attempt: job.attemptsMade + 1,
        enqueuedAt: entry.enqueuedAt,
        lastAttempt: job.attemptsMade + 1 >= (job.opts.attempts ?? 1),
      });
    } catch (error) {
      // BullMQ keeps only the message as failedReason; blockedStreams() reports a rejection's code when it has one.
      await job.updateData({ ...job.data, lastError: describeJobFailure(error) }).catch(() => {});
      throw error instanceof Error ? error : new Error(String(error));
    }
    const result = (await this.run(ADVANCE, this.streamKeys(streamId), [job.id, streamId])) as [number, string?];
    // If this add fails or the process dies before it, the next head waits for recover() (or for this job's retry,
    // which finds itself stale and re-adds it).
    if (result[0] === 1 && result[1] !== undefined) await this.addHead(JSON.parse(result[1]) as Entry);
  }

  /** Adds the BullMQ job of the stream's head if it has none; resolves whether it added one. */
  private async ensureHead(streamId: string): Promise<boolean> {
    const [head, raw] = await Promise.all([
      this.client.get(this.base + `head:${streamId}`),
      this.client.lindex(this.base + `stream:${streamId}`, 0),
    ]);
    if (head === null || raw === null) return false;
    if ((await this.client.exists(this.queue.toKey(head))) === 1) return false;
    const entry = JSON.parse(raw) as Entry;
    if (headJobIdOf(entry.key) !== head) return false; // moved on meanwhile
    await this.addHead(entry);
    return true;
  }

  private async addHead(entry: Entry): Promise<void> {
    const { event } = entry;
    const data: HeadJobData = {
      streamId: event.streamId,
      key: event.key,
      eventId: event.eventId,
      seq: event.seq,
      type: event.type,
    };
    await this.queue.add('event', data, { ...this.jobOptions, jobId: headJobIdOf(event.key) });
  }

  /** The stream's head job, when it is failed (the stream is blocked). */
  private async failedHeadOf(streamId: string): Promise<Job<HeadJobData> | undefined> {
    if (typeof streamId !== 'string' || streamId === '') return undefined;
    const head = await this.client.get(this.base + `head:${streamId}`);
    if (head === null) return undefined;
    const job = (await this.queue.getJob(head)) as Job<HeadJobData> | undefined;
    if (!job || !(await job.isFailed())) return undefined;
    return job;
  }

  /** list, head marker, heads set, backlog counter: the keys every script changes together. */
  private streamKeys(streamId: string): string[] {
    return [
      this.base + `stream:${streamId}`,
      this.base + `head:${streamId}`,
      this.base + 'heads',
      this.base + 'backlog',
    ];
  }

  /** EVALSHA, falling back to EVAL once per script and server (after a restart or SCRIPT FLUSH). */
  private async run(script: string, keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      return await this.client.evalsha(shaOf(script), keys.length, ...keys, ...args);
    } catch (error) {
      if (!String((error as Error)?.message).includes('NOSCRIPT')) throw error;
      return this.client.eval(script, keys.length, ...keys, ...args);
    }
  }
}

function blockedStreamOf(job: Job<HeadJobData>): BlockedStream {
  return {
    streamId: job.data.streamId,
    eventId: job.data.eventId,
    seq: job.data.seq,
    type: job.data.type,
    attempts: job.attemptsMade,
    error: job.data.lastError ?? job.failedReason ?? 'unknown failure',
    blockedAt: job.finishedOn ?? job.timestamp,
  };
}

const CONNECTION_FIX =
  'pass your ioredis connection: `new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: null })`';

/** BullMQ refuses ':' in queue names (it separates its keys); spaces would make keys hard to read. */
const queueName: OptionRule = (value) =>
  typeof value === 'string' && /^[\w.\-/]+$/.test(value)
    ? undefined
    : "must be a BullMQ queue name: letters, digits, '_', '-', '.' or '/' (no ':'), e.g. 'kyb-webhooks'.";

const keyPrefix: OptionRule = (value) =>
  typeof value === 'string' && value !== '' && !/\s/.test(value)
    ? undefined
    : "must be a Redis key prefix without spaces, e.g. 'bull' or '{kyb}' (a hash tag, on Redis Cluster).";

const OPTIONS_SPEC: OptionsSpec = {
  owner: 'createBullMqQueue',
  example: 'createBullMqQueue({ connection: new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: null }) })',
  options: {
    connection: optionRules.required(
      optionRules.methods(
        ['evalsha', 'eval', 'get', 'lindex', 'sscan', 'lrange', 'exists', 'duplicate'],
        CONNECTION_FIX,
      ),
      CONNECTION_FIX,
    ),
    name: queueName,
    prefix: keyPrefix,
    retryLimit: optionRules.wholeNumber(0),
    retryDelayMs: optionRules.wholeTimerMs(0),
    maxBacklog: optionRules.positiveInteger('events'),
    retryAfterSeconds: optionRules.positiveInteger('seconds'),
    dedupeRetainSeconds: optionRules.positiveInteger('seconds'),
    recoverIntervalMs: optionRules.wholeTimerMs(1),
    lockDurationMs: optionRules.wholeTimerMs(1),
    stalledIntervalMs: optionRules.wholeTimerMs(1),
    maxStalledCount: optionRules.wholeNumber(0),
    maxSkipsKept: optionRules.positiveInteger('records'),
    onError: optionRules.func(),
  },
  aliases: {
    client: 'connection',
    redis: 'connection',
    queue: 'name',
    queueName: 'name',
    retries: 'retryLimit',
    attempts: 'retryLimit',
    retryDelay: 'retryDelayMs',
    backoff: 'retryDelayMs',
    backlog: 'maxBacklog',
    maxQueueSize: 'maxBacklog',
    dedupeTtl: 'dedupeRetainSeconds',
    dedupeTtlSeconds: 'dedupeRetainSeconds',
  },
};
