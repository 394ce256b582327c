/*
 * Queue mode, the receiver's side (docs/queue-mode.md): a delivery that passed every check (steps 1 to 5 and the data
 * schema) is written to the queue, and answered 2xx only once the queue has it. Nothing unauthenticated gets here
 * (receiver.ts sends it to the onUnauthenticated handlers, as inline), and nothing is answered 2xx that the queue
 * does not hold: a queue that fails or hangs gets 503, one over its backlog 429 with Retry-After.
 */
import { rejection } from '../errors.js';
import type { Logger } from '../log/logger.js';
import type { VerifiedItem } from '../pipeline/checks.js';
import { SharedDeadline, TIMED_OUT } from '../pipeline/deadline.js';
import { answerDuplicate, answerQueued, reject } from '../pipeline/outcomes.js';
import type { ReceiveResult } from '../receiver-types.js';
import { injectedCarrier } from '../telemetry/carrier.js';
import type { ReceiverTelemetry } from '../telemetry/observers.js';
import { queuedEventOf } from './job.js';
import type { PayloadCipher } from './payload-cipher.js';
import { QueueFullError, type EventQueue } from './types.js';

/** What the hand-off of one receiver works with. */
export interface HandoffParts {
  queue: EventQueue;
  logger: Logger | undefined;
  now: () => number;
  /** The longest an enqueue may take before the delivery is answered 503 (the receiver's `storeTimeoutMs`). */
  timeoutMs: number;
  /** With `queueEncryption`: seals each job's payload before it is enqueued. */
  cipher: PayloadCipher | undefined;
  /** The receiver's `telemetry`: its `inject` gives the trace context each job carries to its worker. */
  telemetry: ReceiverTelemetry | undefined;
}

/**
 * Creates the step that hands a verified delivery to the queue. An enqueue that lands after its deadline is not
 * lost: the service's retry of the 503 finds the job there (`duplicate`), as the queue dedupes on the event's key.
 */
export function createHandoff(parts: HandoffParts): (item: VerifiedItem) => Promise<ReceiveResult> {
  const { queue, logger, now, timeoutMs, cipher, telemetry } = parts;
  // Every enqueue waits the same timeoutMs: one shared timer, as for the store's and the handlers' calls.
  const deadline = new SharedDeadline(timeoutMs);
  const enqueue = async (item: VerifiedItem) => {
    const event = queuedEventOf(item, now());
    // Before any await: the receive operation's context (its span) is still the active one.
    const trace = injectedCarrier(telemetry);
    if (trace) event.trace = trace;
    return queue.enqueue(cipher ? await cipher.seal(event) : event);
  };
  return async function handOff(item) {
    let outcome: 'enqueued' | 'duplicate' | typeof TIMED_OUT;
    try {
      outcome = await deadline.within(enqueue(item));
    } catch (error) {
      if (error instanceof QueueFullError) return queueFull(logger, item, error);
      return refuse(logger, item, `${queue.name} enqueue failed`, error);
    }
    if (outcome === TIMED_OUT) return refuse(logger, item, `${queue.name} enqueue took over ${timeoutMs} ms`);
    if (outcome === 'duplicate') return answerDuplicate(logger, item.envelope, item.event);
    return answerQueued(logger, item.envelope, item.event);
  };
}

function refuse(logger: Logger | undefined, item: VerifiedItem, detail: string, cause?: unknown): ReceiveResult {
  return { ...reject(logger, rejection('queue_unavailable', detail, cause), item.envelope), event: item.event };
}

function queueFull(logger: Logger | undefined, item: VerifiedItem, error: QueueFullError): ReceiveResult {
  const seconds = Math.max(1, Math.ceil(error.retryAfterSeconds));
  const refused = reject(logger, rejection('queue_full', `retry after ${seconds} s`), item.envelope);
  return { ...refused, headers: { 'retry-after': String(seconds) }, event: item.event };
}
