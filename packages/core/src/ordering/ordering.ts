import type { ClaimResult } from '../store/dedupe.js';
import type { Envelope } from '../events/envelope.js';
import { ERRORS, KybWebhookError, rejection, type ErrorCode } from '../errors.js';
import { handOff, isThenable, settleWithin, TIMED_OUT } from '../pipeline/deadline.js';
import { safeLog, type Logger } from '../log/logger.js';
import { retryRecording } from '../pipeline/record-retry.js';
import {
  BackfillGate,
  fetcherSaysGone,
  MAX_STALE_BACKFILL_EVENTS,
  peekFetched,
  unfillableReasonOf,
  yieldToEventLoop,
  type UnfillableReason,
} from './backfill-guard.js';
import { MAX_SKIP_REASON_CHARS, MAX_STREAM_ID_LENGTH, unstorableStreamId, type SkipSeqOptions, type StreamCursorStore } from '../store/stream-store.js';

export type { UnfillableReason } from './backfill-guard.js';

/**
 * How a receiver treats the order of each stream's events (design §7, spec 3 and 6):
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
export type FetchEventsAfter = (streamId: string, afterSeq: number, signal: AbortSignal) => AsyncIterable<unknown> | Iterable<unknown>;

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
 *   ordering: { mode: 'enforce', firstSeq: 0, fetchEventsAfter: (s, a, signal) => client.events(s, { afterSeq: a, signal }) },
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
export type UnfillableHandler = (report: UnfillableReport, event: Envelope) => UnfillableDecision | Promise<UnfillableDecision>;

/**
 * Default of `ordering.backfillTimeoutMs`: how long a delivery that revealed a gap may spend backfilling it.
 *
 * @example
 * ```ts
 * createReceiver({ secrets, store, ordering: { mode: 'enforce', fetchEventsAfter, backfillTimeoutMs: 2 * DEFAULT_BACKFILL_TIMEOUT_MS } })
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
export interface GapReport {
  kind: 'gap' | 'late' | 'unfillable';
  mode: 'detect' | 'enforce';
  streamId: string;
  /** The event's seq. */
  seq: number;
  /** The seq the stream's cursor expected next. */
  expectedSeq: number;
  eventId: string;
  eventType: string;
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

/** How far a record of {@link createOrderedReceive}'s completeInOrder got, so a retry neither repeats nor skips a step. */
interface RecordProgress {
  /** The moved cursor was reported (onGap under detect, a warning under enforce). */
  reported: boolean;
  /** The event's record is complete; under detect only the cursor is left to move. */
  completed: boolean;
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
  callStore<T>(operation: string, call: () => T | PromiseLike<T>): Promise<Awaited<T>>;
  claim(dedupeKey: string, waitUntil?: OrderedItem['waitUntil']): Promise<ClaimResult>;
  /** Runs the handlers of a claimed event; on failure it has released the claim and says why. */
  run(item: Item, token: string, settleLateSuccess: () => Promise<void>): Promise<KybWebhookError | undefined>;
  /** Verifies an event fetched from the API through the same checks as a delivery, minus the HMAC it cannot have. */
  verifyFetched(raw: unknown): Promise<Item | KybWebhookError>;
  /** Records a success with complete(), the cursor left alone (`ran` names what succeeded); never throws. */
  complete(item: Item, token: string, ran: string): void | Promise<void>;
  release(item: Item, token: string): Promise<void>;
  reject(error: KybWebhookError, item: Item): Result;
  accept(item: Item, code: 'duplicate' | 'late' | undefined): Result;
  describeStoreFailure(operation: string, error: unknown): string;
}

/**
 * Creates the ordered half of the pipeline: given an event that passed every check, it dedupes, orders and runs it
 * under `'detect'` or `'enforce'` (design §7). The receiver calls it only when ordering is on, so `'off'` costs a
 * single branch on a constant.
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
  const { store, firstSeq, mode, logger } = steps;

  function storeFailed(operation: string, error: unknown, item: Item): Result {
    return steps.reject(rejection('store_unavailable', steps.describeStoreFailure(operation, error), error), item);
  }

  function report(kind: GapReport['kind'], envelope: Envelope, expectedSeq: number): GapReport {
    const gap: GapReport = { kind, mode, streamId: envelope.stream_id, seq: envelope.seq, expectedSeq, eventId: envelope.event_id, eventType: envelope.event };
    if (logger) {
      safeLog(logger, {
        level: 'warn',
        message: kind === 'gap' ? `stream gap: expected seq ${expectedSeq}, got ${envelope.seq}` : `late event: seq ${envelope.seq} is behind the stream cursor (next expected ${expectedSeq})`,
        code: kind === 'gap' ? 'stream_gap' : 'stream_late',
        eventId: envelope.event_id,
        eventType: envelope.event,
      });
    }
    return gap;
  }

  function notifyGap(gap: GapReport, envelope: Envelope): void {
    // Detect mode reports; the delivery's answer never waits on, or changes with, a report.
    notifyGapHandlers(steps.gapHandlers, gap, envelope);
  }

  /**
   * Records a success in order; a cursor that moved meanwhile is settled per mode. Never fails the delivery: when the
   * store fails, the record is tried again in the background (record-retry.ts). `start` is the seq this stream starts
   * at, when the event may be its first (see {@link receiveEnforced}).
   */
  async function completeInOrder(item: Item, token: string, start: 0 | 1 = firstSeq): Promise<void> {
    const { envelope } = item;
    const where = { eventId: envelope.event_id, eventType: envelope.event };
    const progress: RecordProgress = { reported: false, completed: false };
    const failed = (error: unknown, attempts?: number) =>
      `recording the event failed${attempts ? ` ${attempts} times` : ''} after the handlers succeeded: ${steps.describeStoreFailure('completeInOrder', error)}`;
    try {
      await recordInOrder(item, token, start, progress);
    } catch (error) {
      if (logger) safeLog(logger, { level: 'error', message: `${failed(error)}; trying again in the background`, code: 'store_unavailable', ...where, error });
      retryRecording(
        async (attempt) => {
          if ((await recordInOrder(item, token, start, progress, attempt)) && logger) {
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
  async function recordInOrder(item: Item, token: string, start: 0 | 1, progress: RecordProgress, attempt = 1): Promise<boolean> {
    const { envelope } = item;
    const where = { eventId: envelope.event_id, eventType: envelope.event };
    if (progress.completed) return advanceDetected(envelope);
    const outcome = await steps.callStore('completeInOrder', () =>
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
    if (!progress.reported) {
      if (mode === 'detect') {
        const cursor = await steps.callStore('getCursor', () => store.getCursor(envelope.stream_id));
        progress.reported = true;
        if (!startsStreamUnderDetect(cursor, envelope.seq)) {
          const expected = cursor === null ? firstSeq : cursor + 1;
          const kind = envelope.seq > expected ? 'gap' : 'late';
          notifyGap(report(kind, envelope, expected), envelope);
        }
      } else {
        progress.reported = true;
        if (logger) safeLog(logger, { level: 'warn', message: 'the stream cursor moved while the handlers ran (advanceCursor or another process); the event was recorded as processed', ...where });
      }
    }
    await steps.callStore('complete', () => store.complete(item.dedupeKey, token, { retainMs: steps.retainMs }));
    progress.completed = true;
    return advanceDetected(envelope);
  }

  /** Under detect, pulls the cursor to a recorded cursor_moved event, so the next event is compared with it. */
  async function advanceDetected(envelope: Envelope): Promise<true> {
    if (mode === 'detect') await steps.callStore('advanceCursor', () => store.advanceCursor(envelope.stream_id, envelope.seq, { retainMs: steps.cursorRetainMs }));
    return true;
  }

  /** The answer for `arrived` when `item` (itself, or an event backfilled for it) stops it with `failure`. */
  function stopAt(item: Item, arrived: Item, failure: KybWebhookError): Result {
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
  async function runInTurn(item: Item, arrived: Item, start: 0 | 1 = firstSeq): Promise<Result | undefined> {
    const { envelope } = item;
    let claim: ClaimResult;
    try {
      claim = await steps.claim(item.dedupeKey, item.waitUntil);
    } catch (error) {
      return stopAt(item, arrived, rejection('store_unavailable', steps.describeStoreFailure('claim', error), error));
    }
    if (claim.status === 'completed') {
      // Done before (e.g. while ordering was off) yet the cursor is behind it: move the cursor on, it is its turn.
      if (mode === 'enforce') {
        try {
          await steps.callStore('advanceCursor', () => store.advanceCursor(envelope.stream_id, envelope.seq, { retainMs: steps.cursorRetainMs }));
        } catch (error) {
          return stopAt(item, arrived, rejection('store_unavailable', steps.describeStoreFailure('advanceCursor', error), error));
        }
      }
      return arrived === item ? steps.accept(item, 'duplicate') : undefined;
    }
    if (claim.status === 'in_progress') return stopAt(item, arrived, rejection('in_progress'));
    const token = claim.token;
    const failure = await steps.run(item, token, () => completeInOrder(item, token, start));
    if (failure) return stopAt(item, arrived, failure);
    await completeInOrder(item, token, start);
    return undefined;
  }

  /**
   * Claims an event outside its turn (late, or beside the cursor): its token, or the answer when it stops here (the
   * store failed, it was done before, another delivery of it is running).
   */
  async function claimOrAnswer(item: Item): Promise<{ token: string } | { answer: Result }> {
    let claim: ClaimResult;
    try {
      claim = await steps.claim(item.dedupeKey, item.waitUntil);
    } catch (error) {
      return { answer: storeFailed('claim', error, item) };
    }
    if (claim.status === 'completed') return { answer: steps.accept(item, 'duplicate') };
    if (claim.status === 'in_progress') return { answer: steps.reject(rejection('in_progress'), item) };
    return { token: claim.token };
  }

  /**
   * Enforce on a receiver without `secrets`, an event at the cursor's own seq whose type no claim fixes (its dedupe key
   * carries the type): the seq is signed, the type is not, so a genuine token re-wrapped under another type may have
   * taken this seq first and moved the cursor. Treating the genuine event as late would hand it to `onGap` only, or
   * answer 500 until the service gave up. It is its turn as much as the other's: it runs and is recorded with
   * complete(), the cursor left where it is. With `secrets` the HMAC authenticates the type, so no re-wrap can have
   * taken the seq, and such an event is late like any other.
   */
  async function receiveBesideCursor(item: Item): Promise<Result> {
    const claimed = await claimOrAnswer(item);
    if ('answer' in claimed) return claimed.answer;
    const { token } = claimed;
    const record = async () => steps.complete(item, token, 'the handlers');
    const failure = await steps.run(item, token, record);
    if (failure) return steps.reject(failure, item);
    await record();
    return steps.accept(item, undefined);
  }

  /** Enforce, an event at or behind the cursor: only `onGap` handlers may take it (see {@link GapReport}). */
  async function receiveLate(item: Item, expected: number): Promise<Result> {
    const { envelope } = item;
    const claimed = await claimOrAnswer(item);
    if ('answer' in claimed) return claimed.answer;
    const { token } = claimed;
    // Behind the cursor, no record, and older than the records are kept: most likely processed before, its record
    // expired (the cursor outlives the records, cursorRetainMs), as when the merchant asks the service to redeliver an
    // old stream. With onGap handlers they decide (recordExpired tells them why it is late). Without, answering 500
    // until the service gives up would only turn every old redelivery into a failure (and risk a quarantine), so it is
    // answered duplicate, nothing run or written, and the log says so. A body that only pretends to be old (its
    // timestamp is not in the attestation) gets itself that answer and changes nothing for the genuine delivery.
    const recordExpired = envelope.timestamp * 1000 < steps.now() - steps.retainMs;
    if (recordExpired && steps.gapHandlers.length === 0) {
      await steps.release(item, token);
      if (logger) {
        safeLog(logger, {
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
    const gap = report('late', envelope, expected);
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
      // As for event handlers: the claim stays held while the hook may still run; its late outcome settles it.
      handOff(item.waitUntil, running.then(recordLate, () => steps.release(item, token)));
      return steps.reject(rejection('handler_timeout', 'an onGap handler did not finish within handlerTimeoutMs'), item);
    }
    await recordLate();
    return steps.accept(item, 'late');
  }

  // One backfill per stream at a time, and a short memory of gaps the API could not fill (backfill-guard.ts).
  const gate = new BackfillGate(steps.backfillRetryAfterMs, steps.now);

  /**
   * Enforce, a gap, guarded: while another delivery backfills this stream in this process, `{ wait }` (its backfill,
   * to wait for before the cursor is read again); while a backfill from the same cursor failed less than
   * `backfillRetryAfterMs` ago, its answer again without asking the API; else the backfill, whose failure is
   * remembered when the API (or the keys) could not fill the gap.
   */
  async function backfillOnce(item: Item, expected: number, startKnown: boolean): Promise<{ start: 0 | 1 } | { answer: Result } | { wait: Promise<unknown> }> {
    const streamId = item.envelope.stream_id;
    const running = gate.runningFor(streamId);
    if (running !== undefined) return { wait: running };
    const recent = gate.recentFailure(streamId, expected);
    if (recent !== undefined) {
      const { failure, retryInMs } = recent;
      const detail = `not asked again for ${retryInMs} ms (ordering.backfillRetryAfterMs); the last backfill from seq ${expected} ended: ${failure.detail ?? failure.message}`;
      return { answer: steps.reject(rejection(failure.code as ErrorCode, detail, failure.cause), item) };
    }
    const filled = await gate.exclusive(streamId, () => backfill(item, expected, startKnown));
    gate.settled(streamId, expected, 'failure' in filled ? filled.failure : undefined);
    return 'failure' in filled ? { answer: steps.reject(filled.failure, item) } : filled;
  }

  /**
   * Enforce, a gap: fetch what lies between the cursor and the event that arrived, verify and run each in turn, within
   * `backfillTimeoutMs`. Resolves to the stream's start once the gap is closed, else to the (non-2xx) answer for the
   * arrived delivery (`failure` when the API or the keys could not fill the gap, `answer` when a backfilled event
   * stopped it); what ran before a failure or the deadline stays recorded, so the retry goes on from there.
   *
   * With no cursor (`startKnown` false) the stream is read from its beginning, and the API's first event says where
   * the stream starts, 0 or 1: the guess (`startGuess`) only spares a new stream's first event this call. So a guess of
   * 0 never stalls streams that start at 1, and a guess of 1 does not skip the seq 0 of a stream whose first delivery
   * is seq 2 or later.
   *
   * An event the API can never serve verifiably (unfillableReasonOf, fetcherSaysGone) stalls the stream for good:
   * settleUnfillable reports it and asks `onUnfillable`, and on a recorded skip the backfill goes on after it.
   */
  async function backfill(item: Item, expected: number, startKnown: boolean): Promise<{ start: 0 | 1 } | { answer: Result } | { failure: KybWebhookError }> {
    const { envelope } = item;
    const streamId = envelope.stream_id;
    const deadline = Date.now() + steps.backfillTimeoutMs;
    const stopReading = new AbortController();
    let next = expected;
    let start = startGuess;
    let fromSeq: number | undefined;
    let events: AsyncIterator<unknown> | undefined;
    let stale = 0;
    let read = 0;
    let yieldedAt = Date.now();
    /** A throwing fetcher has ended: a transient failure, or an unfillable `next` (undefined once it was skipped). */
    const afterThrow = async (error: unknown): Promise<{ failure: KybWebhookError } | undefined> => {
      events = undefined;
      if (!fetcherSaysGone(error)) return { failure: rejection('backfill_unavailable', 'fetchEventsAfter failed', error) };
      const detail = `fetchEventsAfter says it is gone (${describeGone(error)})`;
      const failure = await settleUnfillable(steps, gate, unfillableReport(envelope, expected, next, 'gone', detail, undefined), envelope, start);
      if (failure) return { failure };
      startKnown = true;
      next += 1;
      return undefined;
    };
    try {
      // Driven by hand, not by for await, so that a fetcher that never answers meets the deadline.
      while (next < envelope.seq) {
        if (events === undefined) {
          try {
            events = asyncIteratorOf(steps.fetchEventsAfter!(streamId, startKnown ? next - 1 : -1, stopReading.signal));
          } catch (error) {
            const stopped = await afterThrow(error);
            if (stopped) return stopped;
            continue;
          }
        }
        // A fetcher whose events are all ready only queues microtasks: give timers and I/O their turn now and then.
        if (++read % YIELD_EVERY_EVENTS === 0 || Date.now() - yieldedAt >= YIELD_EVERY_MS) {
          await yieldToEventLoop();
          yieldedAt = Date.now();
        }
        const remaining = deadline - Date.now();
        let step: IteratorResult<unknown> | typeof TIMED_OUT;
        try {
          step = remaining > 0 ? await settleWithin(events.next(), remaining) : TIMED_OUT;
        } catch (error) {
          const stopped = await afterThrow(error);
          if (stopped) return stopped;
          continue;
        }
        if (step === TIMED_OUT) {
          const detail = `the backfill of seq ${next} to ${envelope.seq - 1} did not finish within backfillTimeoutMs (${steps.backfillTimeoutMs} ms); the retry goes on from seq ${next}`;
          return { failure: rejection('backfill_unavailable', detail) };
        }
        if (step.done) {
          events = undefined;
          break;
        }
        const peeked = peekFetched(step.value);
        // Seqs it already has (repeated, or an API that ignores afterSeq): not verified, not run, and bounded, so a
        // fetcher repeating one seq forever ends here rather than at backfillTimeoutMs.
        if (startKnown && peeked.seq !== undefined && peeked.seq < next) {
          if (++stale > MAX_STALE_BACKFILL_EVENTS) {
            const detail = `the API answered more than ${MAX_STALE_BACKFILL_EVENTS} events at or before seq ${next - 1}, which do not advance the backfill; gave up at seq ${next}`;
            return { failure: rejection('backfill_invalid', detail) };
          }
          continue;
        }
        const fetched = await steps.verifyFetched(step.value);
        if (fetched instanceof KybWebhookError) {
          const about = `the fetched event for seq ${next}`;
          const reason = unfillableReasonOf(fetched);
          const firstOfStream = !startKnown && (peeked.seq === 0 || peeked.seq === 1) && peeked.seq < envelope.seq;
          if (reason !== undefined && peeked.streamId === streamId && (peeked.seq === next || firstOfStream)) {
            if (firstOfStream) {
              startKnown = true;
              start = peeked.seq as 0 | 1;
              next = start;
              if (start !== firstSeq) learnedStart(start);
            }
            const detail = `${UNFILLABLE_WHY[reason]} (${fetched.detail ?? fetched.code})`;
            const report = unfillableReport(envelope, expected, next, reason, detail, peeked.eventId);
            const failure = await settleUnfillable(steps, gate, report, envelope, start);
            if (failure) return { failure };
            next += 1;
            continue;
          }
          // This receiver could not check the event (keys unreachable, attestation not configured): that condition's
          // own code, not a verdict on the API's event.
          if (ERRORS[fetched.code as ErrorCode]?.status >= 500) {
            return { failure: rejection(fetched.code as ErrorCode, `${about}: ${fetched.detail ?? fetched.message}`, fetched) };
          }
          return { failure: rejection('backfill_invalid', `${about} was refused: ${fetched.code}${fetched.detail ? ` (${fetched.detail})` : ''}`, fetched) };
        }
        const fetchedEnvelope = fetched.envelope;
        fetched.waitUntil = item.waitUntil; // a backfilled handler's late outcome settles after this delivery's answer
        if (fetchedEnvelope.stream_id !== streamId) {
          return { failure: rejection('backfill_invalid', `the API answered an event of another stream for seq ${next}`) };
        }
        if (!startKnown) {
          startKnown = true;
          const first = fetchedEnvelope.seq;
          if ((first === 0 || first === 1) && first <= envelope.seq) {
            start = first;
            next = first;
            if (first !== firstSeq) learnedStart(first);
            if (first === envelope.seq) break; // the arrived event is the stream's first: nothing to fill
          }
        }
        if (fetchedEnvelope.seq < next) continue;
        if (fetchedEnvelope.seq > next) break; // the API lacks `next` too: not fillable yet
        const stopped = await runInTurn(fetched, item, start);
        if (stopped !== undefined) return { answer: stopped };
        fromSeq ??= next;
        next += 1;
      }
    } finally {
      // Left early (the gap closed, a failure, the deadline): as for await would, end the iterator, and abort the
      // signal so a page still loading is abandoned. Never waited for: the fetcher may hang in return() as in next().
      if (events) {
        stopReading.abort();
        stopQuietly(events);
      }
    }
    if (next < envelope.seq) {
      return { failure: rejection('out_of_order', `seq ${next} to ${envelope.seq - 1} are not available from the API yet`) };
    }
    if (logger && fromSeq !== undefined) {
      safeLog(logger, { level: 'info', message: `stream gap backfilled: seq ${fromSeq} to ${envelope.seq - 1}`, code: 'stream_backfilled', eventId: envelope.event_id, eventType: envelope.event });
    }
    return { start };
  }

  // Where a stream with no cursor is taken to start without asking the API: firstSeq, until a stream of this receiver
  // is seen to start at 0 while firstSeq says 1. From then on 0, the guess that is always safe: with 1, a seq 1
  // delivered before its stream's seq 0 ran (given up on, or still running in another process) would start the
  // stream. Never learnt the other way (1 where firstSeq says 0): that would trade an API call for that risk.
  let startGuess: 0 | 1 = firstSeq;
  let firstSeqWarned = false;
  /** The streams start at another seq than `firstSeq` says: learnt (see startGuess), and a warning once per receiver. */
  function learnedStart(actual: 0 | 1): void {
    if (actual === 0) startGuess = 0;
    if (firstSeqWarned || !logger) return;
    firstSeqWarned = true;
    safeLog(logger, {
      level: 'warn',
      message:
        `streams start at seq ${actual}, not at ordering.firstSeq (${firstSeq}): set firstSeq: ${actual}. ` +
        (actual === 1
          ? 'Until then each new stream costs an events call to learn where it starts'
          : 'Until then a seq 1 delivered before its stream\'s seq 0 ran may be taken as the stream\'s start'),
    });
  }

  /** envelope_invalid for a stream id no cursor store can keep as itself; undefined when it is fine. */
  function refuseUnstorableStream(item: Item): Result | undefined {
    const streamId = item.envelope.stream_id;
    if (streamId.length > MAX_STREAM_ID_LENGTH) {
      return steps.reject(rejection('envelope_invalid', `stream_id is longer than the ${MAX_STREAM_ID_LENGTH} characters a cursor store keeps`), item);
    }
    const unstorable = unstorableStreamId(streamId);
    return unstorable === undefined ? undefined : steps.reject(rejection('envelope_invalid', `stream_id ${unstorable}`), item);
  }

  /** Enforce; `waited` once it waited for another delivery's backfill of the stream, so it waits at most once. */
  async function receiveEnforced(item: Item, waited = false): Promise<Result> {
    const { envelope } = item;
    const unstorable = refuseUnstorableStream(item);
    if (unstorable !== undefined) return unstorable;
    let cursor: number | null;
    try {
      // The hint lets a store that needs a cursor row before completing in order (MySQL) create it in this round trip.
      cursor = await steps.callStore('getCursor', () => store.getCursor(envelope.stream_id, { firstEvent: envelope.seq <= startGuess }));
    } catch (error) {
      return storeFailed('getCursor', error, item);
    }
    if (cursor === null && envelope.seq < startGuess) {
      // A seq 0 where firstSeq says 1: nothing can come before it, so it starts its stream (never "late": there is no
      // cursor for it to be behind).
      learnedStart(0);
      return (await runInTurn(item, item, 0)) ?? steps.accept(item, undefined);
    }
    const expected = cursor === null ? startGuess : cursor + 1;
    if (!steps.hmacChecked && envelope.seq === cursor && item.dedupeKey !== envelope.event_id) return receiveBesideCursor(item);
    if (envelope.seq < expected) return receiveLate(item, expected);
    let start = startGuess;
    if (envelope.seq > expected) {
      const filled = await backfillOnce(item, expected, cursor !== null);
      if ('wait' in filled) {
        // Another delivery of this stream is backfilling it: wait for it, then read the cursor again (it may have
        // closed the gap, or failed and left its answer for us). A second wait means deliveries keep overtaking.
        if (waited) return steps.reject(rejection('in_progress', 'another delivery of this stream is backfilling it'), item);
        await filled.wait.then(undefined, () => {});
        return receiveEnforced(item, true);
      }
      if ('answer' in filled) return filled.answer;
      start = filled.start;
    }
    return (await runInTurn(item, item, start)) ?? steps.accept(item, undefined);
  }

  async function receiveDetected(item: Item): Promise<Result> {
    return refuseUnstorableStream(item) ?? (await runInTurn(item, item)) ?? steps.accept(item, undefined);
  }

  return mode === 'enforce' ? (item) => receiveEnforced(item) : receiveDetected;
}

/** The events of a fetcher as one async iterator: a sync iterable's values are awaited, as for await would. */
function asyncIteratorOf(source: AsyncIterable<unknown> | Iterable<unknown>): AsyncIterator<unknown> {
  if (typeof (source as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') return (source as AsyncIterable<unknown>)[Symbol.asyncIterator]();
  return (async function* () {
    yield* source as Iterable<unknown>;
  })();
}

/** Ends an iterator left early without waiting for it: its return() may hang or fail, as its next() did. */
function stopQuietly(events: AsyncIterator<unknown>): void {
  try {
    const ended = events.return?.();
    if (isThenable(ended)) ended.then(undefined, () => {});
  } catch {
    // nothing to do: the iterator is dropped either way
  }
}

/** Every this many fetched events, or this many ms, the backfill loop gives the event loop a turn. */
const YIELD_EVERY_EVENTS = 64;
const YIELD_EVERY_MS = 10;

/**
 * Under `'detect'`, whether an event at `seq` that found no cursor starts its stream (so it is no gap): seq 0 or 1,
 * whatever `firstSeq` says; any later seq is a gap after `firstSeq`. The spec does not say whether streams start at 0
 * or 1. `'enforce'` asks the API; `'detect'` has no fetcher to ask (it needs none), and it only reports: a false gap
 * `{ seq: 1, expectedSeq: 0 }` on every new stream that starts at 1 teaches operators to ignore gap reports, while
 * taking 1 as a start costs only the report of a seq 0 lost before its stream's first delivery, which detect would
 * not have held anyway. Nothing comes before seq 0. Checked only once completeInOrder found the cursor elsewhere, so
 * an in-order stream pays nothing for it; a new stream at 1 under `firstSeq: 0` pays the cursor read and move once.
 */
function startsStreamUnderDetect(cursor: number | null, seq: number): boolean {
  return cursor === null && (seq === 0 || seq === 1);
}

/** Why each unfillable reason is permanent, in words, for the log line and the report. */
const UNFILLABLE_WHY: Record<UnfillableReason, string> = {
  attestation_missing: 'the API serves it without its attestation, as it does once a release was purged (410 payload_expired)',
  key_retired: 'its attestation is signed by a key (kid) the KYB JWKS no longer publishes: the key was retired',
  gone: 'the API says it no longer exists',
};

/** How a fetcher's "gone" error showed it, without its message (which may echo request data). */
function describeGone(error: unknown): string {
  const { status, code } = error as { status?: unknown; code?: unknown };
  const parts = [typeof status === 'number' ? `HTTP ${status}` : undefined, typeof code === 'string' ? `code ${code.slice(0, 64)}` : undefined];
  return parts.filter((part) => part !== undefined).join(', ');
}

function unfillableReport(envelope: Envelope, expectedSeq: number, missingSeq: number, reason: UnfillableReason, detail: string, missingEventId: string | undefined): UnfillableReport {
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
function notifyGapHandlers(handlers: readonly GapHandler[], report: GapReport, envelope: Envelope): void {
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
async function settleUnfillable<Item extends OrderedItem, Result>(
  steps: OrderingSteps<Item, Result>,
  gate: BackfillGate,
  report: UnfillableReport,
  envelope: Envelope,
  start: 0 | 1,
): Promise<KybWebhookError | undefined> {
  const { logger, store } = steps;
  const where = { eventId: envelope.event_id, eventType: envelope.event };
  const missing = `seq ${report.missingSeq}${report.missingEventId ? ` (event ${report.missingEventId})` : ''}`;
  notifyGapHandlers(steps.gapHandlers, report, envelope);
  const reason = await askOnUnfillable(steps, report, envelope);
  if (reason !== undefined && typeof store.skipSeq === 'function') {
    let moved: boolean;
    try {
      const options: SkipSeqOptions = { reason, retainMs: steps.cursorRetainMs, firstSeq: start };
      if (report.missingEventId !== undefined) options.eventId = report.missingEventId;
      moved = await steps.callStore('skipSeq', () => store.skipSeq!(report.streamId, report.missingSeq, options));
    } catch (error) {
      return rejection('store_unavailable', steps.describeStoreFailure('skipSeq', error), error);
    }
    if (!moved) return rejection('in_progress', `the stream cursor moved while onUnfillable decided to skip ${missing}; the retry reads it again`);
    if (logger) {
      safeLog(logger, { level: 'warn', message: `stream ${report.streamId}: skipped ${missing} as onUnfillable decided (${report.reason}); recorded in the store with its reason`, code: 'stream_skipped', detail: reason, ...where });
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
  return rejection('backfill_unfillable', `${missing} can never be fetched verifiably: ${report.detail}; the stall lasts until ordering.onUnfillable skips it`);
}

/** The reason to skip with, when `onUnfillable` answered a valid skip in time; undefined means wait. */
async function askOnUnfillable<Item extends OrderedItem, Result>(steps: OrderingSteps<Item, Result>, report: UnfillableReport, envelope: Envelope): Promise<string | undefined> {
  const { onUnfillable, logger } = steps;
  if (onUnfillable === undefined) return undefined;
  const where = { eventId: envelope.event_id, eventType: envelope.event, code: 'stream_unfillable' };
  let decision: UnfillableDecision | typeof TIMED_OUT;
  try {
    decision = await settleWithin(Promise.resolve().then(() => onUnfillable({ ...report }, envelope)), steps.handlerTimeoutMs);
  } catch (error) {
    if (logger) safeLog(logger, { level: 'error', message: 'ordering.onUnfillable threw; the stream waits', ...where, error });
    return undefined;
  }
  if (decision === TIMED_OUT) {
    if (logger) safeLog(logger, { level: 'error', message: 'ordering.onUnfillable did not answer within handlerTimeoutMs; the stream waits', ...where });
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
