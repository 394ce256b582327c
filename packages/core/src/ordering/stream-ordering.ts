/*
 * The ordering engine, attached to the `ordering` option by `streamOrdering()` (docs/architecture.md §8). The receiver
 * never imports this module itself: a receiver without ordering leaves the engine (about 16 KB minified) out of its
 * bundle, and one with ordering gets it by the import of `streamOrdering` that its options need anyway.
 */
import type { createChecks, VerifiedItem } from '../pipeline/checks.js';
import { storeFailure, type ClaimRunSettle } from '../pipeline/claim-run-settle.js';
import { answerDuplicate, answerLate, answerProcessed, reject } from '../pipeline/outcomes.js';
import type { ReceiveResult } from '../receiver-types.js';
import type { Logger } from '../log/logger.js';
import type { ReceiverTelemetry } from '../telemetry/observers.js';
import { DEFAULT_CURSOR_RETAIN_MS, type StreamCursorStore } from '../store/stream-store.js';
import { createOrderedReceive } from './receive.js';
import {
  DEFAULT_BACKFILL_RETRY_AFTER_MS,
  DEFAULT_BACKFILL_TIMEOUT_MS,
  type GapHandler,
  type OrderingOptions,
  type StreamOrdering,
} from './types.js';

/** What the ordered path of one receiver works with, besides its ordering options. */
export interface OrderedParts {
  mode: 'detect' | 'enforce';
  hasSecrets: boolean;
  store: StreamCursorStore;
  retainMs: number;
  now: () => number;
  handlerTimeoutMs: number;
  logger: Logger | undefined;
  gapHandlers: GapHandler[];
  /** The receiver's `telemetry`: told of gaps, and watching each backfill. */
  telemetry: ReceiverTelemetry | undefined;
  steps: ClaimRunSettle;
  verifyFetched: ReturnType<typeof createChecks>['verifyFetched'];
}

/**
 * The ordered path (ordering/receive.ts) of a receiver whose ordering is 'detect' or 'enforce', over its claim, run
 * and settle steps: it dedupes, orders and runs each verified event.
 */
export function createOrderedPath(
  ordering: OrderingOptions,
  parts: OrderedParts,
): (item: VerifiedItem) => Promise<ReceiveResult> {
  const { hasSecrets, store, retainMs, now, handlerTimeoutMs, logger, gapHandlers, telemetry, verifyFetched } = parts;
  const { callStore, claim, runClaimed, settleSuccess, settleFailure, keepLease } = parts.steps;
  return createOrderedReceive<VerifiedItem, ReceiveResult>({
    mode: parts.mode,
    firstSeq: ordering.firstSeq ?? 0,
    fetchEventsAfter: ordering.fetchEventsAfter,
    backfillTimeoutMs: ordering.backfillTimeoutMs ?? DEFAULT_BACKFILL_TIMEOUT_MS,
    backfillRetryAfterMs: ordering.backfillRetryAfterMs ?? DEFAULT_BACKFILL_RETRY_AFTER_MS,
    onUnfillable: ordering.onUnfillable,
    hmacChecked: hasSecrets,
    store,
    retainMs,
    cursorRetainMs: Math.max(ordering.cursorRetainMs ?? DEFAULT_CURSOR_RETAIN_MS, retainMs),
    now,
    handlerTimeoutMs,
    logger,
    gapHandlers,
    telemetry,
    callStore,
    claim,
    run: runClaimed,
    verifyFetched,
    complete: (item, token, ran) => settleSuccess(item, token, false, ran),
    release: (item, token) => settleFailure(item.dedupeKey, token, item.envelope),
    keepLease,
    reject: (error, item) => ({ ...reject(logger, error, item.envelope), event: item.event }),
    accept(item, code) {
      if (code === 'duplicate') return answerDuplicate(logger, item.envelope, item.event);
      if (code === 'late') return answerLate(logger, item.envelope, item.event);
      return answerProcessed(logger, item.envelope, item.event);
    },
    describeStoreFailure: storeFailure,
  });
}

/**
 * Per-stream order for `createReceiver`'s `ordering` option: the options, with the ordering engine attached. Handlers
 * of a stream then see its events in `seq` order (`'enforce'`, gaps backfilled through `fetchEventsAfter`), or gaps
 * and late events are reported (`'detect'`). See {@link OrderingOptions} for every field.
 *
 * A function rather than a plain object so that receivers without ordering never load the engine: a Workers bundle
 * of a receiver without it is about 16 KB smaller.
 *
 * @example
 * ```ts
 * import { createReceiver, streamOrdering } from '@kyb-webhooks/core'
 *
 * const client = createKybClient({ baseUrl, apiKey })
 * const receiver = createReceiver({
 *   secrets,
 *   store: createRedisStore({ client: redis }),
 *   ordering: streamOrdering({
 *     mode: 'enforce',
 *     fetchEventsAfter: (streamId, afterSeq, signal) => client.events(streamId, { afterSeq, signal }),
 *   }),
 * })
 * ```
 */
export function streamOrdering(options: OrderingOptions): StreamOrdering {
  return { ...options, engine: createOrderedPath };
}
