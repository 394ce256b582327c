/*
 * Queue mode, the worker's side (docs/queue-mode.md): jobs from the queue run through the receiver's own steps 6 to 8
 * (claim, handlers, settle; the ordered path with ordering on), so a worker dedupes, orders and settles exactly as
 * an inline delivery does, with the handlers registered on the receiver. A job whose run is not a 2xx is failed
 * back to the queue, which retries it with backoff and, past its limit, dead-letters it and blocks its stream.
 */
import { KybWebhookError, type ErrorCode } from '../errors.js';
import { safeLog } from '../log/logger.js';
import type { Receiver } from '../receiver-types.js';
import { carrierOf } from '../telemetry/carrier.js';
import { TRACING_CHANNELS, tracingChannelsOf, type JobTrace } from '../telemetry/channels.js';
import { Observers } from '../telemetry/observers.js';
import { itemOfJob } from './job.js';
import { isSealedPayload } from './payload-cipher.js';
import { workerPortsOf, type WorkerPorts } from './receiver-link.js';
import {
  describeJobFailure,
  type EventQueue,
  type QueuedPayload,
  type QueueJob,
  type QueueSubscription,
} from './types.js';

/** Options of {@link createQueueWorker}. */
export interface QueueWorkerOptions {
  /** The queue to take jobs from; default the receiver's `queue` option. */
  queue?: EventQueue;
  /** Jobs run at once by this worker (different streams; a stream's jobs run one at a time). Default 4. */
  concurrency?: number;
}

/** A worker: {@link createQueueWorker}. */
export interface QueueWorker {
  /** Starts taking jobs; resolves once subscribed. Calling it again changes nothing. */
  start(): Promise<void>;
  /** Stops taking jobs and resolves once the jobs already running have finished. */
  stop(): Promise<void>;
}

/**
 * Why a job failed: the answer its run would have had inline (`handler_failed`, `store_unavailable`, `out_of_order`,
 * …). Thrown back to the queue, which retries the job; the code is what `blockedStreams()` reports.
 *
 * @example
 * ```ts
 * if (error instanceof JobFailedError && error.code === 'handler_failed') alert(error.eventId)
 * ```
 */
export class JobFailedError extends Error {
  override readonly name = 'JobFailedError';
  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    readonly eventId: string,
  ) {
    super(code);
  }
}

/**
 * The jobs a worker runs at once unless `concurrency` says otherwise (different streams; a stream's jobs run one at a
 * time).
 *
 * @example
 * ```ts
 * const worker = createQueueWorker(receiver, { concurrency: 2 * DEFAULT_WORKER_CONCURRENCY })
 * ```
 */
export const DEFAULT_WORKER_CONCURRENCY = 4;

/**
 * Creates a worker that runs `receiver`'s handlers for the events its queue holds (queue mode). Run as many workers
 * as you like, in as many processes: each stream's events still run one at a time, in order, and a processed event
 * is never run again (the receiver's store dedupes it).
 *
 * @example
 * ```ts
 * const queue = createMemoryQueue()
 * const receiver = createReceiver({ secrets, queue })
 * receiver.on('kyb.data_request.released', async (event, { answers, job }) => save(event, answers, job?.attempt))
 * const worker = createQueueWorker(receiver)
 * await worker.start()
 * process.on('SIGTERM', () => void worker.stop())
 * ```
 */
export function createQueueWorker(receiver: Receiver, options: QueueWorkerOptions = {}): QueueWorker {
  const ports = workerPortsOf(receiver);
  if (!ports) {
    throw new KybWebhookError(
      'config_invalid',
      'createQueueWorker: `receiver` was not made by createReceiver; pass the receiver whose handlers the worker runs.',
    );
  }
  const queue = options.queue ?? ports.queue;
  if (!queue) {
    throw new KybWebhookError(
      'config_invalid',
      'createQueueWorker: no queue. Pass `queue` here, or create the receiver with its `queue` option (queue mode).',
    );
  }
  const concurrency = options.concurrency ?? DEFAULT_WORKER_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000) {
    throw new KybWebhookError(
      'config_invalid',
      `createQueueWorker: \`concurrency\` must be a whole number from 1 to 1000 (jobs at once); the default is ${DEFAULT_WORKER_CONCURRENCY}.`,
    );
  }
  let subscription: Promise<QueueSubscription> | undefined;
  const observers = new Observers('job', tracingChannelsOf(TRACING_CHANNELS.job), ports.telemetry);
  const runJob = (job: QueueJob) => {
    if (!observers.active) return runJobThrough(ports, job);
    const trace = jobTraceOf(job, queue.name);
    return observers.run(trace, () => runJobThrough(ports, job, trace));
  };
  return {
    async start() {
      // A subscription that failed (the queue was down) is forgotten, so the next start() tries again.
      subscription ??= queue.work(runJob, { concurrency }).catch((error: unknown) => {
        subscription = undefined;
        throw error;
      });
      await subscription;
    },
    async stop() {
      const running = subscription;
      subscription = undefined;
      const active = await running?.catch(() => undefined);
      await active?.stop();
    },
  };
}

/**
 * Runs one job through the receiver's steps 6 to 8; a non-2xx outcome fails the job back to the queue. The failure of
 * a job's last attempt is logged as its stream blocked, with what to do about it.
 */
async function runJobThrough(ports: WorkerPorts, job: QueueJob, trace?: JobTrace): Promise<void> {
  try {
    const item = await itemOfJob(job, await payloadOf(ports, job), ports.answersClaim);
    const result = await ports.process(item);
    if (trace) describeRun(trace, result);
    if (result.status >= 200 && result.status < 300) return;
    throw new JobFailedError((result.code ?? 'internal_error') as ErrorCode, result.status, job.event.eventId);
  } catch (error) {
    if (job.lastAttempt) logBlocked(ports, job, error);
    throw error;
  }
}

/** What the `job` operation is told about a job before it runs; the carrier as read back from the queue, checked. */
function jobTraceOf(job: QueueJob, queue: string): JobTrace {
  const { eventId, type, streamId, seq, trace } = job.event;
  const jobTrace: JobTrace = {
    jobId: job.id,
    queue,
    eventId,
    eventType: type,
    streamId,
    seq,
    attempt: job.attempt,
    enqueuedAt: job.enqueuedAt,
  };
  const carrier = carrierOf(trace);
  if (carrier) jobTrace.carrier = carrier;
  return jobTrace;
}

function describeRun(trace: JobTrace, result: { status: number; code?: string }): void {
  trace.status = result.status;
  if (result.code !== undefined) trace.code = result.code;
}

function logBlocked(ports: WorkerPorts, job: QueueJob, error: unknown): void {
  const { streamId, seq, eventId, type } = job.event;
  const why = describeJobFailure(error);
  safeLog(ports.logger, {
    level: 'error',
    message: `stream ${streamId} is blocked at seq ${seq}: its job failed ${job.attempt} time(s), last with ${why}, and is dead-lettered; its later events wait. Fix the cause, then queue.retryStream('${streamId}'), or skip it with queue.skipBlocked('${streamId}', { reason })`,
    code: 'stream_blocked',
    detail: why,
    eventId,
    eventType: type,
  });
  try {
    ports.telemetry?.streamBlocked?.({ streamId, seq, eventId, eventType: type, attempts: job.attempt, error: why });
  } catch {
    // An observability layer's failure never changes what happens to the job.
  }
}

/**
 * The job's payload, opened (queueEncryption). One that cannot be opened fails with `job_undecryptable` and is
 * logged: the queue retries it and, past its limit, keeps it dead-lettered with its stream blocked, so nothing is
 * dropped; it runs once the missing key is back and the stream is retried.
 */
async function payloadOf(ports: WorkerPorts, job: QueueJob): Promise<QueuedPayload> {
  const { cipher } = ports;
  try {
    if (cipher) return await cipher.open(job.event, job.id);
    if (isSealedPayload(job.event.payload)) {
      throw new KybWebhookError(
        'job_undecryptable',
        `Job ${job.id} (event ${job.event.eventId}) is encrypted (key id ${JSON.stringify(job.event.payload.sealed.kid)}) and this receiver has no queueEncryption: create the worker's receiver with the same queueEncryption keys as the receiver that enqueued it.`,
      );
    }
    return job.event.payload;
  } catch (error) {
    const { message, detail, code } = error as KybWebhookError;
    safeLog(ports.logger, {
      level: 'error',
      message,
      code,
      detail,
      eventId: job.event.eventId,
      eventType: job.event.type,
    });
    throw error;
  }
}
