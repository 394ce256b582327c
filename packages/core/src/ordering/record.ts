/*
 * Recording a success in order (docs/architecture.md §8): completeInOrder advances the stream's cursor with the
 * event's record; a failed record is tried again in the background (record-retry.ts).
 */
import type { Envelope } from '../events/envelope.js';
import { safeLog } from '../log/logger.js';
import { retryRecording } from '../pipeline/record-retry.js';
import type { OrderingContext } from './context.js';
import { notifyGapHandlers, reportGap, startsStreamUnderDetect } from './gaps.js';
import type { OrderedItem } from './types.js';

/** How far a record of {@link completeInOrder} got, so a retry neither repeats nor skips a step. */
interface RecordProgress {
  /** The moved cursor was reported (onGap under detect, a warning under enforce). */
  reported: boolean;
  /** The event's record is complete; under detect only the cursor is left to move. */
  completed: boolean;
}

/**
 * Records a success in order; a cursor that moved meanwhile is settled per mode. Never fails the delivery: when the
 * store fails, the record is tried again in the background (record-retry.ts). `start` is the seq this stream starts
 * at, when the event may be its first (see receiveEnforced in receive.ts).
 */
export async function completeInOrder<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  item: Item,
  token: string,
  start: 0 | 1 = context.steps.firstSeq,
): Promise<void> {
  const { steps } = context;
  const { logger } = steps;
  const { envelope } = item;
  const where = { eventId: envelope.event_id, eventType: envelope.event };
  const progress: RecordProgress = { reported: false, completed: false };
  const failed = (error: unknown, attempts?: number) =>
    `recording the event failed${attempts ? ` ${attempts} times` : ''} after the handlers succeeded: ${steps.describeStoreFailure('completeInOrder', error)}`;
  try {
    await recordInOrder(context, item, token, start, progress);
  } catch (error) {
    if (logger)
      safeLog(logger, {
        level: 'error',
        message: `${failed(error)}; trying again in the background`,
        code: 'store_unavailable',
        ...where,
        error,
      });
    retryRecording(
      async (attempt) => {
        if ((await recordInOrder(context, item, token, start, progress, attempt)) && logger) {
          safeLog(logger, { level: 'info', message: `recording the event succeeded at attempt ${attempt}`, ...where });
        }
      },
      (attempts, lastError) => {
        if (!logger) return;
        const message = `${failed(lastError, attempts)}; the event stays claimed until its lease ends (leaseMs), and its stream waits for it`;
        safeLog(logger, { level: 'error', message, code: 'store_unavailable', ...where, error: lastError });
      },
      item.waitUntil,
    );
  }
}

/**
 * The store calls of {@link completeInOrder}: true once the event is recorded, false when its claim is no longer this
 * delivery's; throws when a call fails. Run again after a failure (`attempt` 2 on), it finds the record an attempt
 * that timed out landed meanwhile, reports a moved cursor at most once, and after a recorded cursor_moved event
 * goes on with what is left (`progress`).
 */
async function recordInOrder<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  item: Item,
  token: string,
  start: 0 | 1,
  progress: RecordProgress,
  attempt = 1,
): Promise<boolean> {
  const { steps } = context;
  const { store, logger } = steps;
  const { envelope } = item;
  const where = { eventId: envelope.event_id, eventType: envelope.event };
  if (progress.completed) return advanceDetected(context, envelope);
  const outcome = await steps.callStore('completeInOrder', item.dedupeKey, () =>
    store.completeInOrder(item.dedupeKey, token, {
      retainMs: steps.retainMs,
      cursorRetainMs: steps.cursorRetainMs,
      streamId: envelope.stream_id,
      seq: envelope.seq,
      firstSeq: start,
    }),
  );
  if (outcome === 'completed') return true;
  if (outcome === 'lease_lost') {
    const message =
      attempt === 1
        ? 'the lease expired before the handlers finished; raise leaseMs above your slowest handler'
        : `recording the event at attempt ${attempt} found it no longer claimed by this delivery: an earlier attempt landed late, or the lease ended`;
    if (logger) safeLog(logger, { level: 'warn', message, ...where });
    return false;
  }
  // cursor_moved: the handlers ran, so the event is done whatever the cursor says; under detect this is how a
  // gap or a late event shows, and the cursor is pulled forward so the next event is compared with this one.
  if (!progress.reported) await reportMovedCursor(context, envelope, progress);
  await steps.callStore('complete', item.dedupeKey, () =>
    store.complete(item.dedupeKey, token, { retainMs: steps.retainMs }),
  );
  progress.completed = true;
  return advanceDetected(context, envelope);
}

/** A cursor that moved while the handlers ran: a gap or late event under detect, a warning under enforce. */
async function reportMovedCursor<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  envelope: Envelope,
  progress: RecordProgress,
): Promise<void> {
  const { steps } = context;
  const { logger } = steps;
  if (steps.mode === 'detect') {
    const cursor = await steps.callStore('getCursor', envelope.stream_id, () =>
      steps.store.getCursor(envelope.stream_id),
    );
    progress.reported = true;
    if (!startsStreamUnderDetect(cursor, envelope.seq)) {
      const expected = cursor === null ? steps.firstSeq : cursor + 1;
      const kind = envelope.seq > expected ? 'gap' : 'late';
      // Detect mode reports; the delivery's answer never waits on, or changes with, a report.
      notifyGapHandlers(steps.gapHandlers, reportGap(context, kind, envelope, expected), envelope);
    }
  } else {
    progress.reported = true;
    if (logger) {
      safeLog(logger, {
        level: 'warn',
        message:
          'the stream cursor moved while the handlers ran (advanceCursor or another process); the event was recorded as processed',
        eventId: envelope.event_id,
        eventType: envelope.event,
      });
    }
  }
}

/** Under detect, pulls the cursor to a recorded cursor_moved event, so the next event is compared with it. */
async function advanceDetected<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  envelope: Envelope,
): Promise<true> {
  const { steps } = context;
  if (steps.mode === 'detect') {
    await steps.callStore('advanceCursor', envelope.stream_id, () =>
      steps.store.advanceCursor(envelope.stream_id, envelope.seq, { retainMs: steps.cursorRetainMs }),
    );
  }
  return true;
}
