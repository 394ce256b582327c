/*
 * The public face of ordering (docs/architecture.md §8): the `ordering` option of createReceiver, what `onGap` and
 * `onUnfillable` are told, and what the receiver lends the ordering functions (OrderingSteps).
 */
import type { ClaimResult } from '../store/dedupe.js';
import type { Envelope } from '../events/envelope.js';
import type { KybWebhookError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import type { KeepLease } from '../pipeline/lease-keeper.js';
import type { ReceiverTelemetry, StreamGapReport } from '../telemetry/observers.js';
import type { StreamCursorStore } from '../store/stream-store.js';
import type { UnfillableReason } from './backfill-guard.js';

export type { UnfillableReason } from './backfill-guard.js';

/**
 * How a receiver treats the order of each stream's events (docs/architecture.md §8, spec 3 and 6):
 * - `'off'` (default): every delivery on its own, exactly as without the option; no cursor is read or written.
 * - `'detect'`: process as `'off'` does, and report gaps and late events to `onGap` and the logger.
 * - `'enforce'`: handlers of a stream see its events strictly in `seq` order; a gap is backfilled through
 *   `fetchEventsAfter` before the event that revealed it runs.
 *
 * @example
 * ```ts
 * const mode: OrderingMode = 'enforce'
 * ```
 */
export type OrderingMode = 'off' | 'detect' | 'enforce';

/**
 * Fetches the events of `streamId` after `afterSeq`, in seq order, from the KYB API (its events-after-seq call).
 * The receiver verifies each one it takes (envelope, attestation with its binding, event data) and stops reading as
 * soon as it reaches the event that arrived. `signal` is aborted when the receiver stops reading early (the gap is
 * closed, a check failed, `backfillTimeoutMs` passed): pass it on, so a page still loading is abandoned too. With
 * `@kyb-webhooks/client` it is one line: `(streamId, afterSeq, signal) => client.events(streamId, { afterSeq, signal })`.
 *
 * To say that what it was asked for is gone for good, throw an error with `status` 404 or 410 (the client's
 * `KybApiError` has it) or a `code` of `GONE_CODES` (`'payload_expired'`, `'request_not_found'`, …): the gap is then
 * unfillable (`backfill_unfillable`, see `ordering.onUnfillable`). Any other error is transient
 * (`503 backfill_unavailable`). An answer that merely lacks the next seq is "not available yet" (`409 out_of_order`).
 *
 * @example
 * ```ts
 * const fetchEventsAfter: FetchEventsAfter = (streamId, afterSeq, signal) => client.events(streamId, { afterSeq, signal })
 * ```
 */
export type FetchEventsAfter = (
  streamId: string,
  afterSeq: number,
  signal: AbortSignal,
) => AsyncIterable<unknown> | Iterable<unknown>;

/**
 * The `ordering` option of `createReceiver`.
 *
 * Assumptions (the spec shows neither): a stream's seq starts at 0 or 1 and is contiguous, so the event expected
 * after cursor `c` is `c + 1`. Under `'enforce'`, a new stream whose first delivery is not at `firstSeq` is read from
 * the API from its beginning, whose first event says where it starts: the default 0 is always safe (streams that
 * start at 1 cost an events call each); `firstSeq: 1` is safe only if they really start at 1.
 * Every mode but `'off'` needs a store that keeps stream cursors (every built-in store does); `'enforce'` also needs
 * `fetchEventsAfter`.
 *
 * @example
 * ```ts
 * const client = createKybClient({ baseUrl, apiKey })
 * createReceiver({
 *   secrets, attestation, store: createRedisStore({ client: redis }),
 *   ordering: streamOrdering({ mode: 'enforce', firstSeq: 0, fetchEventsAfter: (s, a, signal) => client.events(s, { afterSeq: a, signal }) }),
 * })
 * ```
 */
export interface OrderingOptions {
  /** `'off'`, `'detect'` or `'enforce'`. */
  mode: OrderingMode;
  /**
   * Where a stream with no cursor is taken to start without asking the API: 0 (default, always safe: a stream that
   * starts at 1 costs an events call) or 1 (only if streams really start at 1; see the README's Ordering section).
   */
  firstSeq?: 0 | 1;
  /** Required under `'enforce'`: where missing events are fetched from. */
  fetchEventsAfter?: FetchEventsAfter;
  /**
   * Under `'enforce'`, the longest a delivery that revealed a gap spends backfilling it (fetching and running the
   * missing events) before it is answered; default 30,000 ms. When it runs out, the events already run stay
   * recorded and the cursor stays past them, the delivery is answered 503 `backfill_unavailable`, and the service's
   * retry goes on from there: so a fetcher that hangs, or a gap of thousands of events, cannot hold a delivery without
   * an answer. A handler already running is not cut short: it has its own `handlerTimeoutMs`.
   */
  backfillTimeoutMs?: number;
  /**
   * How long a stream's cursor is kept after its last event; default {@link DEFAULT_CURSOR_RETAIN_MS} (400 days), and
   * never less than `retainMs`. Past it, the stream's next event looks like the start of a new stream: under
   * `'enforce'` its earlier events are backfilled from its start and, their records expired too, run again; under
   * `'detect'` a gap is reported. Set it longer than any stream of yours stays idle (a request pending for months, a
   * business whose wallet changes every few years). A cursor is one small row per stream in SQL, about 440 bytes
   * in Redis.
   */
  cursorRetainMs?: number;
  /**
   * Under `'enforce'`, how long a gap the API could not fill (not available yet, unfillable, the fetch failed, its
   * events failed verification) is not asked about again: deliveries of that stream meanwhile get the same answer
   * without a call, so N copies of a captured delivery cost one events call per interval. Default
   * {@link DEFAULT_BACKFILL_RETRY_AFTER_MS} (5,000 ms); 0 asks every time. A success, or the cursor moving, ends it.
   */
  backfillRetryAfterMs?: number;
  /**
   * Under `'enforce'`, decides what happens to an earlier event the API can never serve verifiably again (see
   * {@link UnfillableReport}): return `'wait'` (or nothing: the default, the stream stays stalled, every later event
   * answered 502 `backfill_unfillable`), or `{ skip: '<why, and who decided>' }` after your own check (e.g. the
   * release pulled with `client.release()`), which records the skip and the reason in the store (`skipSeq`, atomic
   * with the cursor move) and goes on with the backfill. Never skipped without it. Called only for deliveries that
   * passed every check, at most once per stream per `backfillRetryAfterMs`, within `handlerTimeoutMs`; a hook that
   * throws, times out or gives no reason means wait. Needs a store with `skipSeq` (every built-in store).
   *
   * A hook rather than an `onGap` answer: `onGap` handlers are many, notified and never asked (a report is also
   * sent to them); a skip is one decision, so it is one function, checked at creation.
   */
  onUnfillable?: UnfillableHandler;
}

/**
 * What {@link streamOrdering} returns, and what the `ordering` option of `createReceiver` takes for `'detect'` and
 * `'enforce'`: the options, with the engine that runs them attached.
 *
 * @example
 * ```ts
 * const ordering: StreamOrdering = streamOrdering({ mode: 'detect' })
 * ```
 */
export interface StreamOrdering extends OrderingOptions {
  /** @internal The ordering engine (ordering/stream-ordering.ts), attached by `streamOrdering()`. */
  readonly engine: OrderingEngine;
}

/**
 * @internal The engine `streamOrdering()` attaches: the receiver calls it with its own parts (ordering/stream-ordering.ts),
 * so its type is opaque here.
 */
export type OrderingEngine = (ordering: OrderingOptions, parts: never) => unknown;

export { DEFAULT_BACKFILL_RETRY_AFTER_MS } from './backfill-guard.js';

/**
 * The report {@link OrderingOptions.onUnfillable} decides on (also sent to `onGap` handlers): under `'enforce'`, the
 * backfill for the delivered event (`seq`, `eventId`) cannot go past `missingSeq`, because the API can never serve it
 * verifiably again (`reason`, see {@link UnfillableReason}; `detail` in words).
 *
 * @example
 * ```ts
 * const onUnfillable: UnfillableHandler = async (report) => {
 *   if (report.reason !== 'attestation_missing') return 'wait'
 *   const pulled = await client.release(report.streamId).catch(() => undefined)
 *   return pulled ? 'wait' : { skip: `release purged (${report.reason}); checked by the payments team, ticket OPS-42` }
 * }
 * ```
 */
export interface UnfillableReport extends GapReport {
  kind: 'unfillable';
  mode: 'enforce';
  reason: UnfillableReason;
  missingSeq: number;
  detail: string;
}

/**
 * What {@link OrderingOptions.onUnfillable} answers: `'wait'` (or undefined) keeps the stream stalled; `{ skip }`
 * skips the seq, recording `skip` (a non-empty reason: why, and who decided) in the store.
 *
 * @example
 * ```ts
 * const decision: UnfillableDecision = { skip: 'release purged, re-requested as dr_456 (ops, 2026-05-02)' }
 * ```
 */
export type UnfillableDecision = 'wait' | { skip: string } | undefined | void;

/**
 * The `ordering.onUnfillable` hook; see {@link OrderingOptions.onUnfillable}.
 *
 * @example
 * ```ts
 * const onUnfillable: UnfillableHandler = (report) => (report.reason === 'key_retired' ? { skip: 'key retired, checked by ops' } : 'wait')
 * ```
 */
export type UnfillableHandler = (
  report: UnfillableReport,
  event: Envelope,
) => UnfillableDecision | Promise<UnfillableDecision>;

/**
 * Default of `ordering.backfillTimeoutMs`: how long a delivery that revealed a gap may spend backfilling it.
 *
 * @example
 * ```ts
 * createReceiver({ secrets, store, ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter, backfillTimeoutMs: 2 * DEFAULT_BACKFILL_TIMEOUT_MS }) })
 * ```
 */
export const DEFAULT_BACKFILL_TIMEOUT_MS = 30_000;

/**
 * What `onGap` handlers are told.
 * - `kind: 'gap'`: the event's seq is ahead of the one expected (events `expectedSeq` … `seq - 1` were not seen).
 *   Under `'detect'` it was processed all the same; under `'enforce'` this is never reported: the gap is backfilled.
 * - `kind: 'late'`: the event's seq is at or behind the stream's cursor and it is not a completed duplicate. Under
 *   `'detect'` it was processed all the same. Under `'enforce'` it is NOT given to `on`/`onAny` handlers (that would
 *   break the order they were promised): the `onGap` handlers are its only handlers. When they all succeed the event is
 *   recorded as processed and answered 200 `late`; when one fails or none is registered it is answered 500
 *   `late_unhandled` (503 `handler_timeout` past `handlerTimeoutMs`), so the service retries it and the log says why.
 *   One whose `timestamp` is older than `retainMs` carries `recordExpired: true` (most likely processed before, its
 *   record expired); with no `onGap` handler registered, such an event is answered 200 `duplicate` instead, nothing
 *   run, and logged at warn.
 * - `kind: 'unfillable'` (`'enforce'` only, a notification, not awaited): the backfill for this event cannot go past
 *   `missingSeq`, which the API can never serve verifiably again (`reason`); see {@link UnfillableReport} and
 *   `ordering.onUnfillable`, which decides.
 *
 * @example
 * ```ts
 * receiver.onGap((report, event) => {
 *   if (report.kind === 'late') return reconcileLater(event)
 *   metrics.increment('kyb.gap', { stream: report.streamId })
 * })
 * ```
 */
export interface GapReport extends StreamGapReport {
  /**
   * Set on a late event under `'enforce'` whose `timestamp` is older than `retainMs`: most likely processed before,
   * its record expired while its stream's cursor (kept `cursorRetainMs`) did not, as when the service redelivers an
   * old stream. It may also be an event skipped by `advanceCursor`, or one the service retried for longer than
   * `retainMs`: the receiver cannot tell, so the handler decides.
   */
  recordExpired?: true;
  /** `kind: 'unfillable'`: why the missing event can never be filled verifiably. */
  reason?: UnfillableReason;
  /** `kind: 'unfillable'`: the seq the backfill cannot go past. */
  missingSeq?: number;
  /** `kind: 'unfillable'`: the missing event's id, when the API served it (without a verifiable attestation). */
  missingEventId?: string;
  /** `kind: 'unfillable'`: why, in words, for logs and tickets. */
  detail?: string;
}

/**
 * A handler registered with `receiver.onGap`. Under `'detect'` it is a notification (not awaited, its failure
 * changes nothing); for a late event under `'enforce'` it is awaited and decides the answer (see {@link GapReport}).
 *
 * @example
 * ```ts
 * const onGap: GapHandler = (report) => console.warn('kyb stream gap', report.streamId, report.expectedSeq, report.seq)
 * ```
 */
export type GapHandler = (report: GapReport, event: Envelope) => unknown;

/** A verified event as the ordering steps need it; built by the receiver. */
export interface OrderedItem {
  envelope: Envelope;
  dedupeKey: string;
  /** The delivery's `ReceiveInput.waitUntil`, for a late outcome that settles after the answer. */
  waitUntil?: ((promise: Promise<unknown>) => void) | undefined;
}

/** What the receiver lends the ordering steps: its store calls, handler runs and answers. */
export interface OrderingSteps<Item extends OrderedItem, Result> {
  mode: 'detect' | 'enforce';
  firstSeq: 0 | 1;
  fetchEventsAfter: FetchEventsAfter | undefined;
  /** See {@link OrderingOptions.backfillTimeoutMs}. */
  backfillTimeoutMs: number;
  /** See {@link OrderingOptions.backfillRetryAfterMs}. */
  backfillRetryAfterMs: number;
  onUnfillable: UnfillableHandler | undefined;
  /** Whether deliveries are HMAC-checked (the receiver has `secrets`), which authenticates every envelope's type. */
  hmacChecked: boolean;
  store: StreamCursorStore;
  retainMs: number;
  /** See {@link OrderingOptions.cursorRetainMs}: resolved, at least `retainMs`. */
  cursorRetainMs: number;
  /** The receiver's clock, in Unix milliseconds. */
  now: () => number;
  /** The receiver's handlerTimeoutMs: awaited `onGap` handlers get the same deadline as event handlers. */
  handlerTimeoutMs: number;
  logger: Logger | undefined;
  gapHandlers: readonly GapHandler[];
  /** The receiver's `telemetry`: told of each gap and late event, and watching each backfill. */
  telemetry: ReceiverTelemetry | undefined;
  callStore<T>(operation: string, subject: string, call: () => T | PromiseLike<T>): Promise<Awaited<T>>;
  claim(dedupeKey: string, waitUntil?: OrderedItem['waitUntil']): Promise<ClaimResult>;
  /** Runs the handlers of a claimed event; on failure it has released the claim and says why. */
  run(item: Item, token: string, settleLateSuccess: () => Promise<void>): Promise<KybWebhookError | undefined>;
  /** Verifies an event fetched from the API through the same checks as a delivery, minus the HMAC it cannot have. */
  verifyFetched(raw: unknown): Promise<Item | KybWebhookError>;
  /** Records a success with complete(), the cursor left alone (`ran` names what succeeded); never throws. */
  complete(item: Item, token: string, ran: string): void | Promise<void>;
  release(item: Item, token: string): Promise<void>;
  /** Keeps the lease of an `onGap` hook past handlerTimeoutMs until the returned function is called. */
  keepLease: KeepLease;
  reject(error: KybWebhookError, item: Item): Result;
  accept(item: Item, code: 'duplicate' | 'late' | undefined): Result;
  describeStoreFailure(operation: string, error: unknown): string;
}
