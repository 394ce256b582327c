/*
 * Queue mode (docs/queue-mode.md): the contract between the receiver, its workers and a queue engine (the memory
 * queue here; pg-boss and BullMQ in packages of their own). The receiver verifies a delivery, hands the verified event
 * to `enqueue` and answers 2xx only once that resolved; workers take jobs from `work` and run the receiver's handlers
 * through the same dedupe, ordering and settle steps as an inline delivery.
 */
import type { DeliveryAuthentication } from '../pipeline/dispatch.js';
import type { AttestationClaims } from '../verify/attestation.js';

/**
 * A verified event as it travels through a queue: what a worker needs to run the handlers as the receiver would
 * have, and nothing it would have to verify again (the receiver checked the HMAC, the attestation and the schemas;
 * a worker does not check the HMAC's age or the token's `exp` against its own clock). JSON-safe.
 *
 * @example
 * ```ts
 * const job: QueuedEvent = { key: event.event_id, eventId: event.event_id, streamId: event.stream_id, seq: event.seq,
 *   type: event.event, payload: { envelope: event, authentication: { hmac: { version: '1' }, attestation: false },
 *   typed: true, receivedAt: Date.now() } }
 * ```
 */
export interface QueuedEvent {
  /** The event's dedupe key (usually its event_id): the job's identity, so enqueuing the same event twice is one job. */
  key: string;
  eventId: string;
  /** The stream whose events a queue hands out one at a time, in the order they were enqueued. */
  streamId: string;
  seq: number;
  /** The event type, for the queue's own views; the handlers read it from the envelope. */
  type: string;
  /**
   * What the worker needs to run it: the verified delivery, or, with the receiver's `queueEncryption`, the same sealed
   * with AES-256-GCM (engines store it as it is, as JSON, and never read it).
   */
  payload: QueuedPayload | SealedPayload;
  /**
   * The trace context of the delivery that enqueued it (the receiver's `telemetry.inject`: W3C `traceparent`, say),
   * so the worker's span links to the receiving one. Trace ids only, never sealed; absent without `telemetry`.
   */
  trace?: Record<string, string>;
}

/**
 * A payload sealed by the receiver's `queueEncryption` (AES-256-GCM): the {@link QueuedPayload} as JSON, encrypted
 * with the key `kid` names, bound to the job's readable ids. JSON-safe.
 *
 * @example
 * ```ts
 * const sealed: SealedPayload = { sealed: { alg: 'A256GCM', kid: '2026-11', iv: 'base64url', ciphertext: 'base64url' } }
 * ```
 */
export interface SealedPayload {
  sealed: {
    alg: 'A256GCM';
    /** The id, in `queueEncryption.keys`, of the key it was sealed with. */
    kid: string;
    /** The 96-bit nonce, base64url. */
    iv: string;
    /** The ciphertext with its 128-bit tag appended (WebCrypto's form), base64url. */
    ciphertext: string;
  };
}

/** The verified delivery inside a {@link QueuedEvent}. */
export interface QueuedPayload {
  /** The verified envelope, as the handlers get it (its data validated for its type when the type is known). */
  envelope: Record<string, unknown>;
  authentication: DeliveryAuthentication;
  /** The verified attestation claims, when the event carried one (a release's answers are read from them again). */
  claims?: AttestationClaims;
  /** `Service-Delivery-Attempt` of the delivery that was enqueued. */
  deliveryAttempt?: number;
  /** Whether the type is one this library version knows (its data was validated). */
  typed: boolean;
  /** When the receiver verified it (ms since the epoch). */
  receivedAt: number;
}

/**
 * One job as a queue hands it to a worker.
 *
 * @example
 * ```ts
 * const job: QueueJob = { id: '1', event, attempt: 1, enqueuedAt: Date.now() }
 * ```
 */
export interface QueueJob {
  /** The queue's id for the job. */
  id: string;
  event: QueuedEvent;
  /** 1 for the first run, 2 for the first retry, and so on. */
  attempt: number;
  /** When it was enqueued (ms since the epoch). */
  enqueuedAt: number;
  /**
   * True when a failure of this run dead-letters the job and blocks its stream (its retries are used up): the worker
   * then logs the stream as blocked. Engines set it when they can tell; absent counts as false.
   */
  lastAttempt?: boolean;
}

/**
 * A stream a queue holds back: its job at `seq` failed every retry and was dead-lettered, so the stream's later jobs
 * wait until it is retried or skipped.
 *
 * @example
 * ```ts
 * for (const blocked of await queue.blockedStreams()) console.warn(blocked.streamId, blocked.seq, blocked.error)
 * ```
 */
export interface BlockedStream {
  streamId: string;
  eventId: string;
  seq: number;
  type: string;
  /** How many times it ran. */
  attempts: number;
  /** The last failure: a rejection code (`handler_failed`, `store_unavailable`, …) or an error's message. */
  error: string;
  /** When it was dead-lettered (ms since the epoch). */
  blockedAt: number;
}

/** What a queue's `work` is given: run one job; resolve when it is done, reject to have the queue retry it. */
export type JobHandler = (job: QueueJob) => Promise<void>;

/** A running subscription of {@link EventQueue.work}. */
export interface QueueSubscription {
  /** Stops taking jobs and resolves once the jobs already running have finished (drained). */
  stop(): Promise<void>;
}

/**
 * A queue engine: what `createReceiver({ queue })` enqueues into and `createQueueWorker` takes jobs from. The
 * conformance suite of `@kyb-webhooks/testing` (`runQueueSuite`) checks every rule below against an implementation.
 *
 * @example
 * ```ts
 * const queue: EventQueue = createMemoryQueue()
 * const receiver = createReceiver({ secrets, queue }) // answers 200 queued once enqueue resolved
 * const worker = createQueueWorker(receiver, { queue }) // runs receiver.on(...) handlers
 * await worker.start()
 * ```
 */
export interface EventQueue {
  /** A name for logs, e.g. `'pg-boss'`. */
  readonly name: string;
  /**
   * Writes the event durably, then resolves: `'enqueued'`, or `'duplicate'` when a job with the same `key` exists (or
   * existed within the queue's retention), in which case nothing is written. Rejects with a {@link QueueFullError}
   * over the queue's backlog limit; any other rejection means the queue is unavailable. Either way the delivery is not
   * acknowledged, so the service retries it.
   */
  enqueue(event: QueuedEvent): Promise<'enqueued' | 'duplicate'>;
  /**
   * Starts handing jobs to `handle`, at most `concurrency` at a time, and the jobs of one stream one at a time in the
   * order they were enqueued: a stream's next job starts only after its previous one succeeded or was skipped. A job
   * whose `handle` rejects is retried with backoff; past the queue's retry limit it is dead-lettered and its stream
   * blocked (see {@link blockedStreams}).
   */
  work(handle: JobHandler, options: { concurrency: number }): Promise<QueueSubscription>;
  /** The streams held back by a dead-lettered job. */
  blockedStreams(): Promise<BlockedStream[]>;
  /** Runs a blocked stream's dead-lettered job again (its retries start over); resolves false if it is not blocked. */
  retryStream(streamId: string): Promise<boolean>;
  /**
   * Drops a blocked stream's dead-lettered job with a recorded `reason` (who decided, and why), so its later jobs run;
   * resolves false if it is not blocked.
   */
  skipBlocked(streamId: string, options: { reason: string }): Promise<boolean>;
}

/**
 * Thrown by {@link EventQueue.enqueue} over the queue's backlog limit: the receiver answers `429 queue_full` with a
 * `Retry-After` of `retryAfterSeconds`.
 *
 * @example
 * ```ts
 * if (backlog >= limit) throw new QueueFullError(30)
 * ```
 */
export class QueueFullError extends Error {
  override readonly name = 'QueueFullError';
  constructor(readonly retryAfterSeconds: number) {
    super(`the queue is over its backlog limit; retry after ${retryAfterSeconds} s`);
  }
}

/**
 * A job's failure as {@link EventQueue.blockedStreams} reports it: the rejection code a worker failed it with
 * (`JobFailedError.code`, e.g. `handler_failed`), else the error's message. One rule for every engine.
 *
 * @example
 * ```ts
 * describeJobFailure(new JobFailedError('handler_failed', 500, eventId)) // 'handler_failed'
 * describeJobFailure(new Error('connection reset')) // 'connection reset'
 * ```
 */
export function describeJobFailure(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.message : String(error);
}
