/*
 * An event queue in the memory of one process (queue mode, docs/queue-mode.md): the reference engine of the queue
 * contract, for tests and development. It is not durable (a restart loses its jobs) and not shared between processes:
 * in production use the pg-boss or BullMQ queue. Per stream, jobs run one at a time in enqueue order; a failed job is
 * retried with exponential backoff and, past `retryLimit`, blocks its stream until it is retried or skipped.
 */
import { MAX_TIMER_MS, optionRules } from '../option-rules.js';
import { validateOptions } from '../option-validation.js';
import type { BlockedStream, EventQueue, JobHandler, QueuedEvent, QueueJob, QueueSubscription } from './types.js';
import { describeJobFailure, QueueFullError } from './types.js';

/** Options of {@link createMemoryQueue}. */
export interface MemoryQueueOptions {
  /** Retries of a failed job before it is dead-lettered and its stream blocked. Default 5. */
  retryLimit?: number;
  /**
   * Wait before the first retry; each further retry waits twice as long, up to 2,147,483,647 ms (the longest delay a
   * timer keeps). Default 1,000 ms.
   */
  retryDelayMs?: number;
  /** Jobs waiting or running past which `enqueue` throws `QueueFullError` (the receiver answers 429). Default 10,000. */
  maxBacklog?: number;
  /** The `Retry-After` of a 429 over the backlog. Default 30 s. */
  retryAfterSeconds?: number;
  /** Keys of finished jobs remembered for dedupe, the oldest forgotten first. Default 100,000. */
  maxRememberedKeys?: number;
  /** Clock in milliseconds. Default `Date.now`. */
  now?: () => number;
}

/** The memory queue: an {@link EventQueue}, plus what it holds for tests to read. */
export interface MemoryQueue extends EventQueue {
  /** Jobs waiting, running or blocked. */
  backlog(): number;
  /** The skips recorded by `skipBlocked`, oldest first. */
  skipped(): readonly { streamId: string; eventId: string; seq: number; reason: string }[];
}

interface Job extends QueueJob {
  lastError?: string;
}

/** One stream's jobs; the head is the one that runs (or waits for its retry, or blocks the stream). */
interface StreamLine {
  jobs: Job[];
  state: 'idle' | 'running' | 'retrying' | 'blocked';
  retryTimer?: ReturnType<typeof setTimeout>;
  blocked?: BlockedStream;
}

/**
 * Creates an event queue in memory, for one process (tests, development, a single-instance app that accepts losing
 * queued events on a crash). See {@link EventQueue} for the contract.
 *
 * @example
 * ```ts
 * const queue = createMemoryQueue({ retryLimit: 3, retryDelayMs: 500 })
 * const receiver = createReceiver({ secrets, queue })
 * await createQueueWorker(receiver).start()
 * ```
 */
export function createMemoryQueue(options: MemoryQueueOptions = {}): MemoryQueue {
  return new MemoryQueueEngine(checkedOptions(options));
}

type Settings = Required<MemoryQueueOptions>;

function checkedOptions(options: MemoryQueueOptions): Settings {
  validateOptions(options, {
    owner: 'createMemoryQueue',
    example: 'createMemoryQueue({ retryLimit: 3, retryDelayMs: 500 })',
    options: {
      retryLimit: optionRules.wholeNumber(0),
      retryDelayMs: optionRules.wholeTimerMs(0),
      maxBacklog: optionRules.positiveInteger('jobs'),
      retryAfterSeconds: optionRules.positiveInteger('seconds'),
      maxRememberedKeys: optionRules.positiveInteger('keys'),
      now: optionRules.func('a clock in milliseconds, like Date.now'),
    },
  });
  return {
    retryLimit: options.retryLimit ?? 5,
    retryDelayMs: options.retryDelayMs ?? 1_000,
    maxBacklog: options.maxBacklog ?? 10_000,
    retryAfterSeconds: options.retryAfterSeconds ?? 30,
    maxRememberedKeys: options.maxRememberedKeys ?? 100_000,
    now: options.now ?? Date.now,
  };
}

class MemoryQueueEngine implements MemoryQueue {
  readonly name = 'memory queue';
  private readonly streams = new Map<string, StreamLine>();
  /** Keys of every job enqueued and not yet forgotten, in insertion order (a Map keeps it). */
  private readonly keys = new Map<string, true>();
  private readonly skips: { streamId: string; eventId: string; seq: number; reason: string }[] = [];
  private readonly running = new Set<Promise<void>>();
  private pending = 0;
  private nextId = 1;
  private handler: { handle: JobHandler; concurrency: number } | undefined;

  constructor(private readonly settings: Settings) {}

  enqueue(event: QueuedEvent): Promise<'enqueued' | 'duplicate'> {
    if (this.keys.has(event.key)) return Promise.resolve('duplicate');
    if (this.pending >= this.settings.maxBacklog) {
      return Promise.reject(new QueueFullError(this.settings.retryAfterSeconds));
    }
    this.remember(event.key);
    const job: Job = { id: String(this.nextId++), event, attempt: 1, enqueuedAt: this.settings.now() };
    const line = this.lineOf(event.streamId);
    line.jobs.push(job);
    this.pending++;
    this.pump();
    return Promise.resolve('enqueued');
  }

  work(handle: JobHandler, options: { concurrency: number }): Promise<QueueSubscription> {
    if (this.handler) return Promise.reject(new Error('the memory queue has a worker already; stop it first'));
    this.handler = { handle, concurrency: options.concurrency };
    this.pump();
    return Promise.resolve({ stop: () => this.stop() });
  }

  blockedStreams(): Promise<BlockedStream[]> {
    const blocked: BlockedStream[] = [];
    for (const line of this.streams.values()) if (line.blocked) blocked.push({ ...line.blocked });
    return Promise.resolve(blocked);
  }

  retryStream(streamId: string): Promise<boolean> {
    const line = this.streams.get(streamId);
    if (line?.state !== 'blocked') return Promise.resolve(false);
    line.jobs[0]!.attempt = 1;
    this.unblock(streamId, line);
    return Promise.resolve(true);
  }

  skipBlocked(streamId: string, options: { reason: string }): Promise<boolean> {
    if (typeof options?.reason !== 'string' || options.reason.trim() === '') {
      return Promise.reject(new TypeError('skipBlocked needs a reason: who decided to skip the event, and why'));
    }
    const line = this.streams.get(streamId);
    if (line?.state !== 'blocked') return Promise.resolve(false);
    const { event } = line.jobs.shift()!;
    this.pending--;
    this.skips.push({ streamId, eventId: event.eventId, seq: event.seq, reason: options.reason });
    this.unblock(streamId, line);
    return Promise.resolve(true);
  }

  backlog(): number {
    return this.pending;
  }

  skipped(): readonly { streamId: string; eventId: string; seq: number; reason: string }[] {
    return [...this.skips];
  }

  private lineOf(streamId: string): StreamLine {
    let line = this.streams.get(streamId);
    if (!line) {
      line = { jobs: [], state: 'idle' };
      this.streams.set(streamId, line);
    }
    return line;
  }

  private remember(key: string): void {
    this.keys.set(key, true);
    if (this.keys.size > this.settings.maxRememberedKeys) this.keys.delete(this.keys.keys().next().value!);
  }

  private unblock(streamId: string, line: StreamLine): void {
    line.state = 'idle';
    line.blocked = undefined;
    this.forgetIfEmpty(streamId, line);
    this.pump();
  }

  /** Starts the head jobs of idle streams, in the order the streams were first seen, up to the concurrency. */
  private pump(): void {
    const handler = this.handler;
    if (!handler) return;
    for (const [streamId, line] of this.streams) {
      if (this.running.size >= handler.concurrency) return;
      if (line.state === 'idle' && line.jobs.length > 0) this.start(streamId, line, handler.handle);
    }
  }

  private start(streamId: string, line: StreamLine, handle: JobHandler): void {
    line.state = 'running';
    const job = line.jobs[0]!;
    const run = (async () => {
      try {
        await handle({
          id: job.id,
          event: job.event,
          attempt: job.attempt,
          enqueuedAt: job.enqueuedAt,
          lastAttempt: job.attempt > this.settings.retryLimit,
        });
        this.succeeded(streamId, line);
      } catch (error) {
        this.failed(streamId, line, job, error);
      }
    })();
    this.running.add(run);
    void run.finally(() => {
      this.running.delete(run);
      this.pump();
    });
  }

  private succeeded(streamId: string, line: StreamLine): void {
    line.jobs.shift();
    this.pending--;
    line.state = 'idle';
    this.forgetIfEmpty(streamId, line);
  }

  private failed(streamId: string, line: StreamLine, job: Job, error: unknown): void {
    job.lastError = describeJobFailure(error);
    if (job.attempt > this.settings.retryLimit) {
      line.state = 'blocked';
      line.blocked = {
        streamId,
        eventId: job.event.eventId,
        seq: job.event.seq,
        type: job.event.type,
        attempts: job.attempt,
        error: job.lastError,
        blockedAt: this.settings.now(),
      };
      return;
    }
    // Doubling passes the longest delay a timer keeps after some 20 retries; past it Node fires at once.
    const delay = Math.min(this.settings.retryDelayMs * 2 ** (job.attempt - 1), MAX_TIMER_MS);
    job.attempt++;
    line.state = 'retrying';
    line.retryTimer = setTimeout(() => {
      line.retryTimer = undefined;
      line.state = 'idle';
      this.pump();
    }, delay);
  }

  private forgetIfEmpty(streamId: string, line: StreamLine): void {
    if (line.jobs.length === 0) this.streams.delete(streamId);
  }

  /** Stops starting jobs; retries waiting for their timer run as soon as a worker subscribes again. */
  private async stop(): Promise<void> {
    this.handler = undefined;
    for (const line of this.streams.values()) {
      if (line.retryTimer === undefined) continue;
      clearTimeout(line.retryTimer);
      line.retryTimer = undefined;
      line.state = 'idle';
    }
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
