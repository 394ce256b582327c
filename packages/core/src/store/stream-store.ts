import type { DedupeStore } from './dedupe.js';

/**
 * The per-stream cursor half of the store contract (docs/architecture.md §7.2): for each `stream_id`, the last `seq`
 * processed, advanced in the same atomic step that completes the event, so every process of a fleet agrees on where
 * each stream stands.
 *
 * It is a separate, optional interface so that custom `DedupeStore`s written before it keep compiling; ordering needs
 * a store that also implements this (check with {@link isStreamCursorStore}). Every built-in store does.
 *
 * Retention: a cursor is one small record per stream. Each write keeps it for its own retention (`cursorRetainMs` of
 * `completeInOrder`, `retainMs` of `advanceCursor`; by default {@link DEFAULT_CURSOR_RETAIN_MS}, 400 days), at least
 * the events' retention, so a cursor outlives every event record of its stream and survives a long-idle stream; a
 * cursor whose retention passed reads as `null`, like a stream never seen. SQL stores delete such cursors in
 * `purgeCompleted`; Redis and memory expire them themselves.
 *
 * @example
 * ```ts
 * if (isStreamCursorStore(store)) {
 *   const claim = await store.claim(event.event_id, { leaseMs })
 *   if (claim.status === 'acquired') {
 *     await run(event)
 *     const outcome = await store.completeInOrder(event.event_id, claim.token, {
 *       retainMs, streamId: event.stream_id, seq: event.seq, firstSeq: 1,
 *     })
 *     // The handlers ran: record the event as done even though the cursor moved (another process, advanceCursor).
 *     // Releasing it instead would let the retry run them again.
 *     if (outcome === 'cursor_moved') await store.complete(event.event_id, claim.token, { retainMs })
 *   }
 * }
 * ```
 */
export interface StreamCursorStore extends DedupeStore {
  /**
   * The last seq processed on `streamId`, or `null` when none was (or its cursor's retention passed). `options` is a
   * hint that never changes the answer (see {@link GetCursorOptions}); a store may ignore it.
   */
  getCursor(streamId: string, options?: GetCursorOptions): Promise<number | null>;
  /**
   * Atomically (one step, across processes) mark the event completed AND move its stream's cursor to `seq`, both or
   * neither. Succeeds only while `token` holds the event's lease and the cursor is at `seq - 1`, or is `null` and
   * `seq` is `firstSeq`.
   * - `completed`: both done.
   * - `lease_lost`: the token no longer holds the lease (expired, released, completed, wrong); nothing changed.
   * - `cursor_moved`: the lease holds but the cursor is not at `seq - 1` (a gap, or `seq` is a duplicate or late);
   *   nothing changed, the lease is still held: release it or complete it with `complete()`.
   */
  completeInOrder(eventId: string, token: string, options: CompleteInOrderOptions): Promise<CompleteInOrderResult>;
  /**
   * Move the cursor of `streamId` forward to `seq` without completing any event: the recovery path that deliberately
   * skips a gap. Compare-and-set: the cursor only ever moves forward. Resolves to `true` when it moved (it was `null`
   * or lower), `false` when it already was at `seq` or beyond.
   */
  advanceCursor(streamId: string, seq: number, options?: AdvanceCursorOptions): Promise<boolean>;
  /**
   * The streams whose cursor was written (an event completed in order, or `advanceCursor` moved it) at or after
   * `activeSince`, one page at a time: what recovery replays when it is not told which streams (`recover({ since })`
   * in `@kyb-webhooks/client`). Ordered by last activity, then stream id; pass the page's `next` as `after` for the
   * next page, until `next` is undefined. A stream written again while paging moves to a later page (it may be listed
   * twice, never skipped). Streams whose cursor's retention passed are not listed. Activity is the store's clock (the
   * database's for SQL and Redis). A stream the receiver never completed an event of has no cursor and is not listed.
   *
   * Optional so that wrappers of a store written before it keep compiling (pass it through when you wrap one);
   * every built-in store implements it, and only recovery by `since` needs it.
   */
  listStreams?(options: ListStreamsOptions): Promise<StreamPage>;
  /**
   * Skip `seq` of `streamId` for good, recording why: in one atomic step, write the skip record (`reason`, `eventId`
   * when known, the store's time) AND move the cursor from `seq - 1` to `seq` (or start a stream with no cursor at
   * `seq` when it is `options.firstSeq`), both or neither. Resolves to `true` when it did, `false` when the cursor was
   * elsewhere (nothing written). Ordering calls it only when `ordering.onUnfillable` answered `{ skip: reason }` for
   * an event the API can never serve verifiably (docs/architecture.md §8.4); the record is kept as long as the cursor
   * (`retainMs`), so that "why did this stream go past seq N" has an answer.
   *
   * Optional so that stores written before it keep compiling; every built-in store implements it, and it becomes
   * required in the next major version. A receiver with `onUnfillable` refuses a store without it at creation.
   */
  skipSeq?(streamId: string, seq: number, options: SkipSeqOptions): Promise<boolean>;
  /** The skips recorded for `streamId` by {@link skipSeq} whose retention has not passed, by seq. Optional, as skipSeq. */
  listSkips?(streamId: string): Promise<SkippedSeq[]>;
}

/**
 * Options of {@link StreamCursorStore.skipSeq}.
 *
 * @example
 * ```ts
 * await store.skipSeq('dr_123', 4, { reason: 'release purged; ops ticket 42', eventId: '01J9Z3…', retainMs: DEFAULT_CURSOR_RETAIN_MS, firstSeq: 0 })
 * ```
 */
export interface SkipSeqOptions {
  /** Why, and who decided: 1 to {@link MAX_SKIP_REASON_CHARS} characters, recorded as given. */
  reason: string;
  /** The skipped event's id, when the API served it (without a verifiable attestation). */
  eventId?: string;
  /** How long the skip record and the moved cursor are kept: the receiver's `cursorRetainMs`. */
  retainMs: number;
  /** Where a stream with no cursor starts (0 or 1): skipping that seq starts it. Default 0. */
  firstSeq?: 0 | 1;
}

/**
 * A skip as {@link StreamCursorStore.listSkips} reads it back.
 *
 * @example
 * ```ts
 * for (const skip of await store.listSkips!('dr_123')) console.log(skip.seq, skip.reason, new Date(skip.skippedAt))
 * ```
 */
export interface SkippedSeq {
  seq: number;
  reason: string;
  eventId?: string;
  /** Unix milliseconds, the store's clock. */
  skippedAt: number;
}

/**
 * Longest skip reason a store keeps (the SQL stores' column is 500 characters).
 *
 * @example
 * ```ts
 * if (reason.length > MAX_SKIP_REASON_CHARS) throw new RangeError('reason too long')
 * ```
 */
export const MAX_SKIP_REASON_CHARS = 500;

/**
 * Check the arguments of `skipSeq`, so all stores refuse the same bad input the same way (a RangeError): the stream
 * arguments of {@link checkStreamArguments}, a reason of 1 to {@link MAX_SKIP_REASON_CHARS} characters that is not
 * blank, an event id of at most 255 characters when given, a positive retention. Resolves `firstSeq` (default 0).
 *
 * @example
 * ```ts
 * const { firstSeq } = checkSkipArguments('dr_123', 4, { reason: 'purged', retainMs: 60_000 })
 * ```
 */
export function checkSkipArguments(streamId: string, seq: number, options: SkipSeqOptions): { firstSeq: 0 | 1 } {
  const firstSeq = options?.firstSeq ?? 0;
  checkStreamArguments(streamId, seq, firstSeq);
  const { reason, eventId, retainMs } = options;
  if (typeof reason !== 'string' || reason.trim() === '' || reason.length > MAX_SKIP_REASON_CHARS) {
    throw new RangeError(
      `reason must be a non-blank string of at most ${MAX_SKIP_REASON_CHARS} characters: why the seq is skipped, and who decided.`,
    );
  }
  if (
    eventId !== undefined &&
    (typeof eventId !== 'string' || eventId.length === 0 || eventId.length > MAX_STREAM_ID_LENGTH)
  ) {
    throw new RangeError(`eventId must be a string of 1 to ${MAX_STREAM_ID_LENGTH} characters when given.`);
  }
  if (typeof retainMs !== 'number' || !(retainMs > 0))
    throw new RangeError('retainMs must be a positive number of milliseconds.');
  return { firstSeq };
}

/**
 * Options of {@link StreamCursorStore.getCursor}: a hint about what the caller does next, never a change to the answer.
 *
 * Ordering reads the cursor of every event before running it, and the stream's first event then completes in order.
 * A store whose `completeInOrder` needs the cursor's row to exist (MySQL/MariaDB: one multi-table UPDATE) may, when
 * told `firstEvent`, create an empty row in the same round trip as the read: expired, so it reads as no cursor and is
 * never listed, and purged like any expired cursor. Without the hint such a store creates the row in
 * `completeInOrder` instead, for one more round trip. Other stores ignore it.
 *
 * @example
 * ```ts
 * const cursor = await store.getCursor(event.stream_id, { firstEvent: event.seq === firstSeq })
 * ```
 */
export interface GetCursorOptions {
  /** The event about to be ordered carries the stream's `firstSeq`, so `completeInOrder` may start the stream next. */
  firstEvent?: boolean;
}

/**
 * Options of {@link StreamCursorStore.listStreams}.
 *
 * @example
 * ```ts
 * const options: ListStreamsOptions = { activeSince: Date.now() - 86_400_000, limit: 500 }
 * ```
 */
export interface ListStreamsOptions {
  /** Unix milliseconds: list the streams whose cursor was written at or after this time. */
  activeSince: number;
  /** Most streams per page, 1 to {@link MAX_LIST_STREAMS_LIMIT}. Default 100. */
  limit?: number;
  /** The `next` of the previous page; omit for the first. Opaque: only the store that made it reads it. */
  after?: string;
}

/**
 * One page of {@link StreamCursorStore.listStreams}.
 *
 * @example
 * ```ts
 * const page: StreamPage = await store.listStreams({ activeSince })
 * for (const { streamId, seq } of page.streams) console.log(streamId, 'processed up to', seq)
 * ```
 */
export interface StreamPage {
  streams: StreamActivity[];
  /** Where the next page starts; undefined when this page was the last. */
  next: string | undefined;
}

/**
 * A stream as {@link StreamCursorStore.listStreams} lists it.
 *
 * @example
 * ```ts
 * const stream: StreamActivity = { streamId: 'req_123', seq: 4, activeAt: 1_767_225_600_000 }
 * ```
 */
export interface StreamActivity {
  streamId: string;
  /** The cursor: the last seq processed in order. */
  seq: number;
  /** Unix milliseconds (the store's clock) when the cursor was last written. */
  activeAt: number;
}

/**
 * Largest page {@link StreamCursorStore.listStreams} returns.
 *
 * @example
 * ```ts
 * await store.listStreams({ activeSince, limit: MAX_LIST_STREAMS_LIMIT })
 * ```
 */
export const MAX_LIST_STREAMS_LIMIT = 1000;

/**
 * Check the options every store's `listStreams` takes, so all stores refuse the same bad input the same way (a
 * RangeError saying what was expected): `activeSince` a finite number of Unix milliseconds, `limit` an integer of 1 to
 * {@link MAX_LIST_STREAMS_LIMIT}, `after` a string when given. Resolves the default limit.
 *
 * @example
 * ```ts
 * const { activeSince, limit, after } = checkListStreamsOptions(options) // limit defaults to 100
 * ```
 */
export function checkListStreamsOptions(options: ListStreamsOptions): {
  activeSince: number;
  limit: number;
  after: string | undefined;
} {
  const { activeSince, limit = 100, after } = options ?? ({} as ListStreamsOptions);
  if (typeof activeSince !== 'number' || !Number.isFinite(activeSince)) {
    throw new RangeError('activeSince must be a finite number of Unix milliseconds, e.g. Date.now() - 86_400_000.');
  }
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_STREAMS_LIMIT) {
    throw new RangeError(`limit must be an integer from 1 to ${MAX_LIST_STREAMS_LIMIT}.`);
  }
  if (after !== undefined && (typeof after !== 'string' || after === '')) {
    throw new RangeError('after must be the `next` of a previous page of the same store.');
  }
  return { activeSince: Math.floor(activeSince), limit, after };
}

/**
 * Options of {@link StreamCursorStore.completeInOrder}.
 *
 * @example
 * ```ts
 * const options: CompleteInOrderOptions = { retainMs: DEFAULT_RETAIN_MS, streamId: 'req_123', seq: 4, firstSeq: 1 }
 * ```
 */
export interface CompleteInOrderOptions {
  /** How long the completed record is kept (the events' retention), and the cursor when `cursorRetainMs` is absent. */
  retainMs: number;
  /**
   * How long the cursor is kept, from this completion: at least `retainMs`. The receiver passes its
   * `ordering.cursorRetainMs` (default {@link DEFAULT_CURSOR_RETAIN_MS}), because a cursor that expired makes the
   * next event of an idle stream look like the stream's start, and its earlier events, whose records expired too,
   * run again. Stores written before it existed keep the cursor for `retainMs`.
   */
  cursorRetainMs?: number;
  /** The event's `stream_id`. */
  streamId: string;
  /** The event's `seq`: a non-negative safe integer. */
  seq: number;
  /**
   * The seq a stream starts at, accepted when the stream has no cursor yet. The spec does not say whether streams
   * start at 0 or 1, so the caller decides; only 0 and 1 are accepted.
   */
  firstSeq: 0 | 1;
}

/**
 * Options of {@link StreamCursorStore.advanceCursor}.
 *
 * @example
 * ```ts
 * await store.advanceCursor('req_123', 7, { retainMs: DEFAULT_RETAIN_MS })
 * ```
 */
export interface AdvanceCursorOptions {
  /** How long the cursor is kept. Default {@link DEFAULT_CURSOR_RETAIN_MS}, 400 days. */
  retainMs?: number;
}

/**
 * What {@link StreamCursorStore.completeInOrder} did.
 *
 * @example
 * ```ts
 * const outcome: CompleteInOrderResult = await store.completeInOrder(eventId, token, options)
 * ```
 */
export type CompleteInOrderResult = 'completed' | 'lease_lost' | 'cursor_moved';

/**
 * Whether `store` also keeps per-stream cursors (implements {@link StreamCursorStore}), which ordering requires.
 *
 * @example
 * ```ts
 * if (!isStreamCursorStore(store)) throw new Error('ordering needs a store with stream cursors, e.g. createRedisStore')
 * ```
 */
export function isStreamCursorStore(store: DedupeStore): store is StreamCursorStore {
  const candidate = store as Partial<StreamCursorStore> | null | undefined;
  return (
    typeof candidate?.getCursor === 'function' &&
    typeof candidate.completeInOrder === 'function' &&
    typeof candidate.advanceCursor === 'function'
  );
}

/**
 * Longest stream id a store accepts; the SQL stores' key columns hold 255 characters, like event ids.
 *
 * @example
 * ```ts
 * if (streamId.length > MAX_STREAM_ID_LENGTH) throw new RangeError('not a KYB stream id')
 * ```
 */
export const MAX_STREAM_ID_LENGTH = 255;

/**
 * Check the stream arguments every store takes, so all stores refuse the same bad input the same way (a RangeError
 * that says what was expected, never showing the value): a stream id of 1 to 255 characters, a non-negative safe
 * integer seq, and `firstSeq` 0 or 1 when given. Stores call it before any I/O.
 *
 * @example
 * ```ts
 * checkStreamArguments('req_123', 4, 1) // fine
 * checkStreamArguments('req_123', -1)   // throws RangeError
 * ```
 */
export function checkStreamArguments(streamId: string, seq: number, firstSeq?: number): void {
  if (typeof streamId !== 'string' || streamId.length === 0 || streamId.length > MAX_STREAM_ID_LENGTH) {
    throw new RangeError(`The stream id must be a string of 1 to ${MAX_STREAM_ID_LENGTH} characters.`);
  }
  const unstorable = unstorableStreamId(streamId);
  if (unstorable !== undefined) throw new RangeError(`The stream id ${unstorable}.`);
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) {
    throw new RangeError('seq must be a non-negative safe integer (the envelope’s seq).');
  }
  if (firstSeq !== undefined && firstSeq !== 0 && firstSeq !== 1) {
    throw new RangeError('firstSeq must be 0 or 1: the seq a stream starts at.');
  }
}

// A lone surrogate: half of a UTF-16 pair without the other half.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * What makes a stream id one that not every store keeps as itself, or undefined: a NUL character (PostgreSQL's text
 * refuses it) or a lone surrogate (PostgreSQL, MySQL and Redis store UTF-8, where every lone surrogate becomes the
 * same replacement character, so distinct ids would share one cursor). Ordering refuses such an envelope before any
 * store sees it.
 */
export function unstorableStreamId(streamId: string): string | undefined {
  if (streamId.includes('\u0000')) return 'contains a NUL character, which not every store can keep';
  if (LONE_SURROGATE.test(streamId))
    return 'is not well-formed Unicode (a lone surrogate), which not every store keeps as itself';
  return undefined;
}

/**
 * Check a stream id alone (for `getCursor`), with the same rule and message as {@link checkStreamArguments}.
 *
 * @example
 * ```ts
 * checkStreamId('req_123') // fine; '' throws RangeError
 * ```
 */
export function checkStreamId(streamId: string): void {
  checkStreamArguments(streamId, 0);
}

/**
 * How long a stream cursor is kept by default: 400 days from the stream's last event. A stream can stay idle far
 * longer than its events' records are kept (a request pending for weeks, a business whose wallet changes once a year),
 * and a cursor that expired makes its next event look like the stream's start. A cursor is one small row per stream
 * in SQL, about 440 bytes in Redis.
 *
 * @example
 * ```ts
 * createReceiver({ secrets, ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter, cursorRetainMs: 3 * DEFAULT_CURSOR_RETAIN_MS }) })
 * ```
 */
export const DEFAULT_CURSOR_RETAIN_MS = 400 * 24 * 60 * 60 * 1000;

/**
 * The retention of an `advanceCursor` call: the one given, else {@link DEFAULT_CURSOR_RETAIN_MS}.
 *
 * @example
 * ```ts
 * const retainMs = cursorRetention(options) // 400 days unless options.retainMs says otherwise
 * ```
 */
export function cursorRetention(options: AdvanceCursorOptions | undefined): number {
  return options?.retainMs ?? DEFAULT_CURSOR_RETAIN_MS;
}

/**
 * The cursor's retention of a `completeInOrder` call: `cursorRetainMs` when given, never less than the record's
 * `retainMs` (a cursor outlives its stream's records), else `retainMs`. A `cursorRetainMs` that is not a positive
 * number comes back as it is, for the store's duration check to refuse.
 *
 * @example
 * ```ts
 * const cursorMs = inOrderCursorRetention({ retainMs: 60_000, cursorRetainMs: 600_000, streamId, seq, firstSeq: 0 }) // 600000
 * ```
 */
export function inOrderCursorRetention(options: CompleteInOrderOptions): number {
  const { cursorRetainMs, retainMs } = options;
  if (cursorRetainMs === undefined) return retainMs;
  // Not a positive number: handed on as it is, for the store's own check to refuse, never hidden by retainMs.
  return cursorRetainMs > 0 ? Math.max(cursorRetainMs, retainMs) : cursorRetainMs;
}
