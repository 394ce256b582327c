/*
 * The ordered half of the pipeline (docs/architecture.md §8): an event that passed every check is deduped, ordered
 * and run under 'detect' or 'enforce'. Module-level functions over one context object (context.ts); the gap filling
 * is in backfill.ts, the in-order record in record.ts, the reports in gaps.ts.
 */
import { rejection } from '../errors.js';
import { safeLog } from '../log/logger.js';
import { settleWithin, TIMED_OUT } from '../pipeline/deadline.js';
import { settleWhenDone } from '../pipeline/lease-keeper.js';
import { backfillOnce } from './backfill.js';
import {
  createOrderingContext,
  learnedStart,
  refuseUnstorableStream,
  storeFailed,
  type OrderingContext,
} from './context.js';
import { reportGap } from './gaps.js';
import { claimOrAnswer, runInTurn } from './turn.js';
import type { OrderedItem, OrderingSteps } from './types.js';

/**
 * Creates the ordered half of the pipeline: given an event that passed every check, it dedupes, orders and runs it
 * under `'detect'` or `'enforce'` (docs/architecture.md §8). The receiver calls it only when ordering is on, so
 * `'off'` costs a single branch on a constant.
 *
 * @example
 * ```ts
 * const ordered = createOrderedReceive(steps) // inside createReceiver
 * return await ordered(item)
 * ```
 */
export function createOrderedReceive<Item extends OrderedItem, Result>(
  steps: OrderingSteps<Item, Result>,
): (item: Item) => Promise<Result> {
  const context = createOrderingContext(steps);
  return steps.mode === 'enforce' ? (item) => receiveEnforced(context, item) : (item) => receiveDetected(context, item);
}

/** Detect: every event runs as it comes; a moved cursor is reported when it is recorded (record.ts). */
async function receiveDetected<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  item: Item,
): Promise<Result> {
  return (
    refuseUnstorableStream(context, item) ??
    (await runInTurn(context, item, item)) ??
    context.steps.accept(item, undefined)
  );
}

/** Enforce; `waited` once it waited for another delivery's backfill of the stream, so it waits at most once. */
async function receiveEnforced<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  item: Item,
  waited = false,
): Promise<Result> {
  const { steps } = context;
  const { envelope } = item;
  const unstorable = refuseUnstorableStream(context, item);
  if (unstorable !== undefined) return unstorable;
  let cursor: number | null;
  try {
    // The hint lets a store that needs a cursor row before completing in order (MySQL) create it in this round trip.
    cursor = await steps.callStore('getCursor', envelope.stream_id, () =>
      steps.store.getCursor(envelope.stream_id, { firstEvent: envelope.seq <= context.startGuess }),
    );
  } catch (error) {
    return storeFailed(context, 'getCursor', error, item);
  }
  if (cursor === null && envelope.seq < context.startGuess) {
    // A seq 0 where firstSeq says 1: nothing can come before it, so it starts its stream (never "late": there is no
    // cursor for it to be behind).
    learnedStart(context, 0);
    return (await runInTurn(context, item, item, 0)) ?? steps.accept(item, undefined);
  }
  const expected = cursor === null ? context.startGuess : cursor + 1;
  if (!steps.hmacChecked && envelope.seq === cursor && item.dedupeKey !== envelope.event_id)
    return receiveBesideCursor(context, item);
  if (envelope.seq < expected) return receiveLate(context, item, expected);
  let start = context.startGuess;
  if (envelope.seq > expected) {
    const filled = await backfillOnce(context, item, expected, cursor !== null);
    if ('wait' in filled) {
      // Another delivery of this stream is backfilling it: wait for it, then read the cursor again (it may have
      // closed the gap, or failed and left its answer for us). A second wait means deliveries keep overtaking.
      if (waited)
        return steps.reject(rejection('in_progress', 'another delivery of this stream is backfilling it'), item);
      await filled.wait.then(undefined, () => {});
      return receiveEnforced(context, item, true);
    }
    if ('answer' in filled) return filled.answer;
    start = filled.start;
  }
  return (await runInTurn(context, item, item, start)) ?? steps.accept(item, undefined);
}

/**
 * Enforce on a receiver without `secrets`, an event at the cursor's own seq whose type no claim fixes (its dedupe key
 * carries the type): the seq is signed, the type is not, so a genuine token re-wrapped under another type may have
 * taken this seq first and moved the cursor. Treating the genuine event as late would hand it to `onGap` only, or
 * answer 500 until the service gave up. It is its turn as much as the other's: it runs and is recorded with
 * complete(), the cursor left where it is. With `secrets` the HMAC authenticates the type, so no re-wrap can have
 * taken the seq, and such an event is late like any other.
 */
async function receiveBesideCursor<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  item: Item,
): Promise<Result> {
  const { steps } = context;
  const claimed = await claimOrAnswer(context, item);
  if ('answer' in claimed) return claimed.answer;
  const { token } = claimed;
  const record = async () => steps.complete(item, token, 'the handlers');
  const failure = await steps.run(item, token, record);
  if (failure) return steps.reject(failure, item);
  await record();
  return steps.accept(item, undefined);
}

/** Enforce, an event at or behind the cursor: only `onGap` handlers may take it (see GapReport in types.ts). */
async function receiveLate<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  item: Item,
  expected: number,
): Promise<Result> {
  const { steps } = context;
  const { envelope } = item;
  const claimed = await claimOrAnswer(context, item);
  if ('answer' in claimed) return claimed.answer;
  const { token } = claimed;
  // Behind the cursor, no record, and older than the records are kept: most likely processed before, its record
  // expired (the cursor outlives the records, cursorRetainMs), as when the merchant asks the service to redeliver an
  // old stream. With onGap handlers they decide (recordExpired tells them why it is late). Without, answering 500
  // until the service gives up would only turn every old redelivery into a failure (and risk a quarantine), so it is
  // answered duplicate, nothing run or written, and the log says so. A body that only pretends to be old (its
  // timestamp is not in the attestation) gets itself that answer and changes nothing for the genuine delivery.
  const recordExpired = envelope.timestamp * 1000 < steps.now() - steps.retainMs;
  if (recordExpired && steps.gapHandlers.length === 0) return answerExpiredLate(context, item, token);
  const gap = reportGap(context, 'late', envelope, expected);
  if (recordExpired) gap.recordExpired = true;
  if (steps.gapHandlers.length === 0) {
    await steps.release(item, token);
    return steps.reject(rejection('late_unhandled', 'no onGap handler is registered'), item);
  }
  const recordLate = () => steps.complete(item, token, 'the onGap handlers');
  const running = (async () => {
    for (const handler of steps.gapHandlers) await handler(gap, envelope);
  })();
  let outcome: void | typeof TIMED_OUT;
  try {
    outcome = await settleWithin(running, steps.handlerTimeoutMs);
  } catch (error) {
    await steps.release(item, token);
    return steps.reject(rejection('late_unhandled', 'an onGap handler failed', error), item);
  }
  if (outcome === TIMED_OUT) {
    // As for event handlers: the claim stays held, its lease kept, while the hook still runs; its late outcome
    // settles it.
    settleWhenDone(() => steps.keepLease(item.dedupeKey, token, envelope), running, {
      onSuccess: recordLate,
      onFailure: () => steps.release(item, token),
      waitUntil: item.waitUntil,
    });
    return steps.reject(rejection('handler_timeout', 'an onGap handler did not finish within handlerTimeoutMs'), item);
  }
  await recordLate();
  return steps.accept(item, 'late');
}

/** A late event older than retainMs with no `onGap` handler: answered duplicate, nothing run, and logged. */
async function answerExpiredLate<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  item: Item,
  token: string,
): Promise<Result> {
  const { steps } = context;
  const { envelope } = item;
  await steps.release(item, token);
  if (steps.logger) {
    safeLog(steps.logger, {
      level: 'warn',
      message:
        `late event: seq ${envelope.seq} is behind the stream cursor, has no record and is older than retainMs, so it was most ` +
        'likely processed before and its record expired; answered duplicate without running it. Register onGap to decide such events yourself',
      code: 'stream_late',
      eventId: envelope.event_id,
      eventType: envelope.event,
    });
  }
  return steps.accept(item, 'duplicate');
}
