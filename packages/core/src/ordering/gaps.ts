/*
 * Reports of the ordering (docs/architecture.md §8): gaps and late events to the logger and `onGap`, and the
 * stream stalled for good at an event the API can never serve verifiably, which `onUnfillable` may skip.
 */
import type { Envelope } from '../events/envelope.js';
import { rejection, type KybWebhookError } from '../errors.js';
import { isThenable, settleWithin, TIMED_OUT } from '../pipeline/deadline.js';
import { safeLog } from '../log/logger.js';
import type { ReceiverTelemetry } from '../telemetry/observers.js';
import { MAX_SKIP_REASON_CHARS, type SkipSeqOptions } from '../store/stream-store.js';
import type { UnfillableReason } from './backfill-guard.js';
import type { OrderingContext } from './context.js';
import type {
  GapHandler,
  GapReport,
  OrderedItem,
  OrderingSteps,
  UnfillableDecision,
  UnfillableReport,
} from './types.js';

/** A gap or late event as `onGap` is told, logged at warn on the way. */
export function reportGap<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  kind: 'gap' | 'late',
  envelope: Envelope,
  expectedSeq: number,
): GapReport {
  const { mode, logger, telemetry } = context.steps;
  const gap: GapReport = {
    kind,
    mode,
    streamId: envelope.stream_id,
    seq: envelope.seq,
    expectedSeq,
    eventId: envelope.event_id,
    eventType: envelope.event,
  };
  if (logger) {
    safeLog(logger, {
      level: 'warn',
      message:
        kind === 'gap'
          ? `stream gap: expected seq ${expectedSeq}, got ${envelope.seq}`
          : `late event: seq ${envelope.seq} is behind the stream cursor (next expected ${expectedSeq})`,
      code: kind === 'gap' ? 'stream_gap' : 'stream_late',
      eventId: envelope.event_id,
      eventType: envelope.event,
    });
  }
  tellTelemetry(telemetry, gap);
  return gap;
}

/** The receiver's `telemetry` is told of a gap, a late event or an unfillable seq; its failure changes nothing. */
function tellTelemetry(telemetry: ReceiverTelemetry | undefined, report: GapReport): void {
  try {
    telemetry?.streamGap?.(report);
  } catch {
    // An observability layer's failure never changes what happens to the delivery.
  }
}

/**
 * Under `'detect'`, whether an event at `seq` that found no cursor starts its stream (so it is no gap): seq 0 or 1,
 * whatever `firstSeq` says; any later seq is a gap after `firstSeq`. The spec does not say whether streams start at 0
 * or 1. `'enforce'` asks the API; `'detect'` has no fetcher to ask (it needs none), and it only reports: a false gap
 * `{ seq: 1, expectedSeq: 0 }` on every new stream that starts at 1 teaches operators to ignore gap reports, while
 * taking 1 as a start costs only the report of a seq 0 lost before its stream's first delivery, which detect would
 * not have held anyway. Nothing comes before seq 0. Checked only once completeInOrder found the cursor elsewhere, so
 * an in-order stream pays nothing for it; a new stream at 1 under `firstSeq: 0` pays the cursor read and move once.
 */
export function startsStreamUnderDetect(cursor: number | null, seq: number): boolean {
  return cursor === null && (seq === 0 || seq === 1);
}

/** Why each unfillable reason is permanent, in words, for the log line and the report. */
export const UNFILLABLE_WHY: Record<UnfillableReason, string> = {
  attestation_missing:
    'the API serves it without its attestation, as it does once a release was purged (410 payload_expired)',
  key_retired: 'its attestation is signed by a key (kid) the KYB JWKS no longer publishes: the key was retired',
  gone: 'the API says it no longer exists',
};

/** How a fetcher's "gone" error showed it, without its message (which may echo request data). */
export function describeGone(error: unknown): string {
  const { status, code } = error as { status?: unknown; code?: unknown };
  const parts = [
    typeof status === 'number' ? `HTTP ${status}` : undefined,
    typeof code === 'string' ? `code ${code.slice(0, 64)}` : undefined,
  ];
  return parts.filter((part) => part !== undefined).join(', ');
}

export function unfillableReport(
  envelope: Envelope,
  expectedSeq: number,
  missingSeq: number,
  reason: UnfillableReason,
  detail: string,
  missingEventId: string | undefined,
): UnfillableReport {
  const report: UnfillableReport = {
    kind: 'unfillable',
    mode: 'enforce',
    streamId: envelope.stream_id,
    seq: envelope.seq,
    expectedSeq,
    eventId: envelope.event_id,
    eventType: envelope.event,
    reason,
    missingSeq,
    detail,
  };
  if (missingEventId !== undefined) report.missingEventId = missingEventId;
  return report;
}

/** Tells `onGap` handlers; a notification: never awaited, its failure changes nothing. */
export function notifyGapHandlers(handlers: readonly GapHandler[], report: GapReport, envelope: Envelope): void {
  for (const handler of handlers) {
    try {
      const pending = handler(report, envelope);
      if (isThenable(pending)) pending.then(undefined, () => {});
    } catch {
      // a report's failure is the handler's own business
    }
  }
}

/**
 * A seq the API can never serve verifiably: reported to `onGap`, then `onUnfillable` decides. On a skip with a
 * reason, the skip is recorded with `skipSeq` (atomic with the cursor move) and undefined returned, so the backfill
 * goes on after it; otherwise the failure to answer, `backfill_unfillable`, with one log line per stream and seq in
 * this process that says the stall is permanent and how to end it.
 */
export async function settleUnfillable<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  report: UnfillableReport,
  envelope: Envelope,
  start: 0 | 1,
): Promise<KybWebhookError | undefined> {
  const { steps, gate } = context;
  const { logger, store } = steps;
  const where = { eventId: envelope.event_id, eventType: envelope.event };
  const missing = `seq ${report.missingSeq}${report.missingEventId ? ` (event ${report.missingEventId})` : ''}`;
  notifyGapHandlers(steps.gapHandlers, report, envelope);
  tellTelemetry(steps.telemetry, report);
  const reason = await askOnUnfillable(steps, report, envelope);
  if (reason !== undefined && typeof store.skipSeq === 'function') {
    let moved: boolean;
    try {
      const options: SkipSeqOptions = { reason, retainMs: steps.cursorRetainMs, firstSeq: start };
      if (report.missingEventId !== undefined) options.eventId = report.missingEventId;
      moved = await steps.callStore('skipSeq', report.streamId, () =>
        store.skipSeq!(report.streamId, report.missingSeq, options),
      );
    } catch (error) {
      return rejection('store_unavailable', steps.describeStoreFailure('skipSeq', error), error);
    }
    if (!moved)
      return rejection(
        'in_progress',
        `the stream cursor moved while onUnfillable decided to skip ${missing}; the retry reads it again`,
      );
    if (logger) {
      safeLog(logger, {
        level: 'warn',
        message: `stream ${report.streamId}: skipped ${missing} as onUnfillable decided (${report.reason}); recorded in the store with its reason`,
        code: 'stream_skipped',
        detail: reason,
        ...where,
      });
    }
    return undefined;
  }
  if (logger && gate.firstStall(report.streamId, report.missingSeq)) {
    safeLog(logger, {
      level: 'error',
      code: 'stream_unfillable',
      message:
        `stream ${report.streamId} is stalled for good at ${missing}: ${report.detail}. The stall will not end by itself: ` +
        'every later event of the stream is answered 502 backfill_unfillable until that seq is skipped. Way out: check ' +
        'the event yourself (a purged release: client.release(requestId); a retired key: the service), then return ' +
        "{ skip: '<why, who decided>' } from ordering.onUnfillable, which records the skip in the store; see the README's " +
        'Ordering section. Logged once per stream and seq in this process',
      ...where,
    });
  }
  return rejection(
    'backfill_unfillable',
    `${missing} can never be fetched verifiably: ${report.detail}; the stall lasts until ordering.onUnfillable skips it`,
  );
}

/** The reason to skip with, when `onUnfillable` answered a valid skip in time; undefined means wait. */
async function askOnUnfillable<Item extends OrderedItem, Result>(
  steps: OrderingSteps<Item, Result>,
  report: UnfillableReport,
  envelope: Envelope,
): Promise<string | undefined> {
  const { onUnfillable, logger } = steps;
  if (onUnfillable === undefined) return undefined;
  const where = { eventId: envelope.event_id, eventType: envelope.event, code: 'stream_unfillable' };
  let decision: UnfillableDecision | typeof TIMED_OUT;
  try {
    decision = await settleWithin(
      Promise.resolve().then(() => onUnfillable({ ...report }, envelope)),
      steps.handlerTimeoutMs,
    );
  } catch (error) {
    if (logger)
      safeLog(logger, { level: 'error', message: 'ordering.onUnfillable threw; the stream waits', ...where, error });
    return undefined;
  }
  if (decision === TIMED_OUT) {
    if (logger)
      safeLog(logger, {
        level: 'error',
        message: 'ordering.onUnfillable did not answer within handlerTimeoutMs; the stream waits',
        ...where,
      });
    return undefined;
  }
  if (decision === undefined || decision === 'wait') return undefined;
  const skip = typeof decision === 'object' && decision !== null ? (decision as { skip?: unknown }).skip : undefined;
  if (typeof skip === 'string' && skip.trim() !== '' && skip.length <= MAX_SKIP_REASON_CHARS) return skip;
  if (logger) {
    safeLog(logger, {
      level: 'error',
      message: `ordering.onUnfillable must answer 'wait' or { skip: '<why, who decided>' } with a reason of 1 to ${MAX_SKIP_REASON_CHARS} characters, which is recorded; the stream waits`,
      ...where,
    });
  }
  return undefined;
}
