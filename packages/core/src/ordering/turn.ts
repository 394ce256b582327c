/*
 * Claiming and running one event of a stream (docs/architecture.md §8): in its turn (then recorded in order), or
 * outside it (late, or beside the cursor), where the answer depends on the claim alone.
 */
import { rejection, type ErrorCode, type KybWebhookError } from '../errors.js';
import type { ClaimResult } from '../store/dedupe.js';
import { storeFailed, type OrderingContext } from './context.js';
import { completeInOrder } from './record.js';
import type { OrderedItem } from './types.js';

/** The answer for `arrived` when `item` (itself, or an event backfilled for it) stops it with `failure`. */
function stopAt<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  item: Item,
  arrived: Item,
  failure: KybWebhookError,
): Result {
  const { steps } = context;
  if (arrived === item) return steps.reject(failure, item);
  const { envelope } = item;
  const detail = `backfilled seq ${envelope.seq} (event ${envelope.event_id}): ${failure.detail ?? failure.message}`;
  return steps.reject(rejection(failure.code as ErrorCode, detail, failure.cause), arrived);
}

/**
 * Claims and runs one event whose turn it is (or, under detect, any event), then records it in order. Resolves to
 * the answer when it must stop here (duplicate, in progress, failure), `undefined` when it ran. A backfilled event
 * (`arrived` is the delivery it was fetched for) stops the delivery with an answer about the delivered event, its
 * own seq and id in the detail: the result's `event` is always the delivery's.
 */
export async function runInTurn<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  item: Item,
  arrived: Item,
  start: 0 | 1 = context.steps.firstSeq,
): Promise<Result | undefined> {
  const { steps } = context;
  const { envelope } = item;
  let claim: ClaimResult;
  try {
    claim = await steps.claim(item.dedupeKey, item.waitUntil);
  } catch (error) {
    return stopAt(
      context,
      item,
      arrived,
      rejection('store_unavailable', steps.describeStoreFailure('claim', error), error),
    );
  }
  if (claim.status === 'completed') {
    // Done before (e.g. while ordering was off) yet the cursor is behind it: move the cursor on, it is its turn.
    if (steps.mode === 'enforce') {
      try {
        await steps.callStore('advanceCursor', envelope.stream_id, () =>
          steps.store.advanceCursor(envelope.stream_id, envelope.seq, { retainMs: steps.cursorRetainMs }),
        );
      } catch (error) {
        return stopAt(
          context,
          item,
          arrived,
          rejection('store_unavailable', steps.describeStoreFailure('advanceCursor', error), error),
        );
      }
    }
    return arrived === item ? steps.accept(item, 'duplicate') : undefined;
  }
  if (claim.status === 'in_progress') return stopAt(context, item, arrived, rejection('in_progress'));
  const token = claim.token;
  const failure = await steps.run(item, token, () => completeInOrder(context, item, token, start));
  if (failure) return stopAt(context, item, arrived, failure);
  await completeInOrder(context, item, token, start);
  return undefined;
}

/**
 * Claims an event outside its turn (late, or beside the cursor): its token, or the answer when it stops here (the
 * store failed, it was done before, another delivery of it is running).
 */
export async function claimOrAnswer<Item extends OrderedItem, Result>(
  context: OrderingContext<Item, Result>,
  item: Item,
): Promise<{ token: string } | { answer: Result }> {
  const { steps } = context;
  let claim: ClaimResult;
  try {
    claim = await steps.claim(item.dedupeKey, item.waitUntil);
  } catch (error) {
    return { answer: storeFailed(context, 'claim', error, item) };
  }
  if (claim.status === 'completed') return { answer: steps.accept(item, 'duplicate') };
  if (claim.status === 'in_progress') return { answer: steps.reject(rejection('in_progress'), item) };
  return { token: claim.token };
}
