/**
 * The answers a receiver gives the service (docs/architecture.md §5): status, extra headers and JSON body of every outcome, each
 * with its log entry. A rejection carries a stable code and the generic message of `ERRORS`; its detail and cause
 * go to the logger only, never to the sender.
 */
import type { Envelope } from '../events/envelope.js';
import { ERRORS, KybWebhookError, rejection, type ErrorCode } from '../errors.js';
import type { KybEvent, UnknownKybEvent } from '../events/events.js';
import { logTaken, safeLog, takesLevel, type Logger } from '../log/logger.js';
import type { ReceiveResult, ResponseBody } from '../receiver-types.js';

// Answers shared by every delivery, frozen so that no adapter or onResult hook can change another delivery's.
const NO_HEADERS: Record<string, string> = Object.freeze({});
const RECEIVED_BODY: ResponseBody = Object.freeze({ received: true });
const UNAUTHENTICATED_BODY: ResponseBody = Object.freeze({ received: true, code: 'unauthenticated' });
const DUPLICATE_BODY: ResponseBody = Object.freeze({ received: true, code: 'duplicate' });
const LATE_BODY: ResponseBody = Object.freeze({ received: true, code: 'late' });
const QUEUED_BODY: ResponseBody = Object.freeze({ received: true, code: 'queued' });
const RESPONSE_HEADERS: Partial<Record<ErrorCode, Record<string, string>>> = {
  method_not_allowed: Object.freeze({ allow: 'POST' }),
};

/** A refused or failed delivery: its code's status and generic message, logged at warn (4xx) or error (5xx). */
export function reject(
  logger: Logger | undefined,
  error: KybWebhookError | ErrorCode,
  envelope?: Envelope,
): ReceiveResult {
  const failure = typeof error === 'string' ? rejection(error) : error;
  const code = failure.code as ErrorCode;
  const { status, message } = ERRORS[code];
  if (logger) {
    safeLog(logger, {
      level: status >= 500 ? 'error' : 'warn',
      message: `delivery rejected: ${code}`,
      code,
      status,
      eventId: envelope?.event_id,
      eventType: envelope?.event,
      detail: failure.detail,
      error: failure.cause,
    });
  }
  return {
    status,
    code,
    headers: RESPONSE_HEADERS[code] ?? NO_HEADERS,
    body: { error: { code, message } },
  };
}

/**
 * The HTTP answer `receive` gives for `error`: for code that calls `receiver.verify` and answers the service itself.
 * A `KybWebhookError` with a rejection code gets its status, headers and JSON body (`{ error: { code, message } }`,
 * the generic message, never the detail); anything else, a bug of yours included, `500 internal_error`, so the
 * service retries and nothing is acknowledged by mistake. Logs nothing.
 *
 * @example
 * ```ts
 * try {
 *   const { event } = await receiver.verify({ method: req.method, headers: req.headers, body: rawBody })
 *   await jobs.enqueueOnce(event.event_id, event)
 *   res.status(200).json({ received: true })
 * } catch (error) {
 *   const answer = answerForError(error)
 *   res.status(answer.status).set(answer.headers).json(answer.body)
 * }
 * ```
 */
export function answerForError(error: unknown): {
  status: number;
  headers: Readonly<Record<string, string>>;
  body: ResponseBody;
} {
  const code: ErrorCode =
    error instanceof KybWebhookError && Object.hasOwn(ERRORS, error.code)
      ? (error.code as ErrorCode)
      : 'internal_error';
  const { status, headers, body } = reject(undefined, code);
  return { status, headers, body };
}

/** 200: the handlers succeeded (or there were none). */
export function answerProcessed(
  logger: Logger | undefined,
  envelope: Envelope,
  event: KybEvent | UnknownKybEvent,
): ReceiveResult {
  if (takesLevel(logger, 'debug'))
    logTaken(logger, {
      level: 'debug',
      message: 'delivery processed',
      status: 200,
      eventId: envelope.event_id,
      eventType: envelope.event,
    });
  return { status: 200, headers: NO_HEADERS, body: RECEIVED_BODY, event };
}

/** 200 `queued` (queue mode): the verified event is in the queue, where a worker will run its handlers. */
export function answerQueued(
  logger: Logger | undefined,
  envelope: Envelope,
  event: KybEvent | UnknownKybEvent,
): ReceiveResult {
  if (takesLevel(logger, 'debug'))
    logTaken(logger, {
      level: 'debug',
      message: 'delivery queued',
      code: 'queued',
      status: 200,
      eventId: envelope.event_id,
      eventType: envelope.event,
    });
  return { status: 200, code: 'queued', headers: NO_HEADERS, body: QUEUED_BODY, event };
}

/** 200 `duplicate`: the event was processed before. */
export function answerDuplicate(
  logger: Logger | undefined,
  envelope: Envelope,
  event: KybEvent | UnknownKybEvent,
): ReceiveResult {
  if (takesLevel(logger, 'info'))
    logTaken(logger, {
      level: 'info',
      message: 'duplicate delivery acknowledged',
      code: 'duplicate',
      status: 200,
      eventId: envelope.event_id,
      eventType: envelope.event,
    });
  return { status: 200, code: 'duplicate', headers: NO_HEADERS, body: DUPLICATE_BODY, event };
}

/** 200 `late` (ordering enforce): an event behind its stream's cursor that the `onGap` handlers took. */
export function answerLate(
  logger: Logger | undefined,
  envelope: Envelope,
  event: KybEvent | UnknownKybEvent,
): ReceiveResult {
  if (takesLevel(logger, 'info'))
    logTaken(logger, {
      level: 'info',
      message: 'late event taken by the onGap handlers',
      code: 'late',
      status: 200,
      eventId: envelope.event_id,
      eventType: envelope.event,
    });
  return { status: 200, code: 'late', headers: NO_HEADERS, body: LATE_BODY, event };
}

/**
 * 200 `unauthenticated`: a delivery nothing could authenticate (no secrets, no attestation), acknowledged so that the
 * service neither retries it nor holds its stream; it carries no event, since nothing verified one.
 */
export function answerUnauthenticated(logger: Logger | undefined, envelope: Envelope): ReceiveResult {
  if (takesLevel(logger, 'info'))
    logTaken(logger, {
      level: 'info',
      message:
        'delivery without attestation acknowledged unauthenticated (no secrets configured); only onUnauthenticated handlers ran',
      code: 'unauthenticated',
      status: 200,
      eventId: envelope.event_id,
      eventType: envelope.event,
    });
  return { status: 200, code: 'unauthenticated', headers: NO_HEADERS, body: UNAUTHENTICATED_BODY };
}
