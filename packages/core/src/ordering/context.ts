/*
 * The one context object the ordering functions share (docs/architecture.md §8): what the receiver lends them
 * (OrderingSteps), the per-receiver backfill gate, and where new streams are taken to start.
 */
import { rejection } from '../errors.js';
import { safeLog } from '../log/logger.js';
import { MAX_STREAM_ID_LENGTH, unstorableStreamId } from '../store/stream-store.js';
import { BackfillGate } from './backfill-guard.js';
import type { OrderedItem, OrderingSteps } from './types.js';

/** The state of one receiver's ordering: created once by createOrderedReceive, passed to every ordering function. */
export interface OrderingContext<Item extends OrderedItem, Result> {
  readonly steps: OrderingSteps<Item, Result>;
  /** One backfill per stream at a time, and a short memory of gaps the API could not fill (backfill-guard.ts). */
  readonly gate: BackfillGate;
  /**
   * Where a stream with no cursor is taken to start without asking the API: firstSeq, until a stream of this receiver
   * is seen to start at 0 while firstSeq says 1. From then on 0, the guess that is always safe: with 1, a seq 1
   * delivered before its stream's seq 0 ran (given up on, or still running in another process) would start the
   * stream. Never learnt the other way (1 where firstSeq says 0): that would trade an API call for that risk.
   */
  startGuess: 0 | 1;
  /** Whether the firstSeq warning was logged (once per receiver). */
  firstSeqWarned: boolean;
}

/**
 * The context of a receiver's ordering.
 *
 * @example
 * ```ts
 * const context = createOrderingContext(steps) // inside createOrderedReceive
 * ```
 */
export function createOrderingContext<Item extends OrderedItem, Result>(
  steps: OrderingSteps<Item, Result>,
): OrderingContext<Item, Result> {
  return {
    steps,
    gate: new BackfillGate(steps.backfillRetryAfterMs, steps.now),
    startGuess: steps.firstSeq,
    firstSeqWarned: false,
  };
}

/** 503 store_unavailable for the delivery, naming the store call that failed. */
export function storeFailed<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  operation: string,
  error: unknown,
  item: Item,
): Result {
  const { steps } = context;
  return steps.reject(rejection('store_unavailable', steps.describeStoreFailure(operation, error), error), item);
}

/** The streams start at another seq than `firstSeq` says: learnt (see startGuess), and a warning once per receiver. */
export function learnedStart<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  actual: 0 | 1,
): void {
  const { logger, firstSeq } = context.steps;
  if (actual === 0) context.startGuess = 0;
  if (context.firstSeqWarned || !logger) return;
  context.firstSeqWarned = true;
  safeLog(logger, {
    level: 'warn',
    message:
      `streams start at seq ${actual}, not at ordering.firstSeq (${firstSeq}): set firstSeq: ${actual}. ` +
      (actual === 1
        ? 'Until then each new stream costs an events call to learn where it starts'
        : "Until then a seq 1 delivered before its stream's seq 0 ran may be taken as the stream's start"),
  });
}

/** envelope_invalid for a stream id no cursor store can keep as itself; undefined when it is fine. */
export function refuseUnstorableStream<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  item: Item,
): Result | undefined {
  const { steps } = context;
  const streamId = item.envelope.stream_id;
  if (streamId.length > MAX_STREAM_ID_LENGTH) {
    return steps.reject(
      rejection(
        'envelope_invalid',
        `stream_id is longer than the ${MAX_STREAM_ID_LENGTH} characters a cursor store keeps`,
      ),
      item,
    );
  }
  const unstorable = unstorableStreamId(streamId);
  return unstorable === undefined
    ? undefined
    : steps.reject(rejection('envelope_invalid', `stream_id ${unstorable}`), item);
}
