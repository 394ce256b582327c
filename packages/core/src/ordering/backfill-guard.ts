/**
 * What keeps an enforcing receiver's backfill from being turned against the merchant (docs/architecture.md §8.3): one backfill per
 * stream at a time in a process, a short memory of gaps the API could not fill so that replays of one captured
 * delivery cost O(1) API calls, and the tests that tell a permanent stall (an event the API can no longer serve
 * verifiably) from a transient one. Module-level functions and small classes, so that createOrderedReceive only
 * wires them in.
 */
import { KybWebhookError, type ErrorCode } from '../errors.js';
import { UnknownKidError } from '../verify/jwks.js';

/**
 * Why an earlier event can never be filled verifiably (a {@link GapReport} of kind `'unfillable'`):
 * - `'attestation_missing'`: the API serves the event of an attested type without its attestation, as it does once
 *   a release's values were purged (spec 4.2, `410 payload_expired`).
 * - `'key_retired'`: its attestation names a `kid` the KYB JWKS no longer publishes (checked against a JWKS fetched
 *   just now, so an outage is `503 jwks_unavailable`, never this).
 * - `'gone'`: `fetchEventsAfter` threw an error the API gives for something that no longer exists: HTTP 404 or 410
 *   (`status` of the client's `KybApiError`), or a `code` of {@link GONE_CODES}.
 *
 * @example
 * ```ts
 * const reason: UnfillableReason = 'key_retired'
 * ```
 */
export type UnfillableReason = 'attestation_missing' | 'key_retired' | 'gone';

// GONE_CODES (below) is marked pure so that a bundler may drop it where no fetcher uses it (a Worker's bundle).
/**
 * The `code`s of a thrown fetcher error that say the stream or event is gone for good (the client's
 * `payload_expired` and `request_not_found`, and the common spellings of the same).
 *
 * @example
 * ```ts
 * const fetchEventsAfter: FetchEventsAfter = async function* (streamId, afterSeq) {
 *   const page = await myApi.events(streamId, afterSeq)
 *   if (page.status === 410) throw Object.assign(new Error('purged'), { code: GONE_CODES[0] })
 *   yield* page.events
 * }
 * ```
 */
export const GONE_CODES: readonly string[] = /* @__PURE__ */ Object.freeze([
  'payload_expired',
  'request_not_found',
  'not_found',
  'event_not_found',
  'gone',
]);

/** Whether a fetcher's thrown error says what it fetched no longer exists (see {@link UnfillableReason}). */
export function fetcherSaysGone(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { status, code } = error as { status?: unknown; code?: unknown };
  return status === 404 || status === 410 || (typeof code === 'string' && GONE_CODES.includes(code));
}

/**
 * Why a fetched event's refusal makes its seq unfillable for good, or undefined for a refusal a retry may cure or
 * that says the API's answer is wrong (a relabelled token, a bad signature: `backfill_invalid`, as before).
 */
export function unfillableReasonOf(refusal: KybWebhookError): UnfillableReason | undefined {
  if (refusal.code === 'attestation_missing') return 'attestation_missing';
  if (refusal instanceof UnknownKidError) return 'key_retired';
  return undefined;
}

/** `seq` and `event_id` of a raw fetched event, when it has them in the right form; nothing else is read from it. */
export function peekFetched(raw: unknown): {
  seq: number | undefined;
  eventId: string | undefined;
  streamId: string | undefined;
} {
  const value = (typeof raw === 'object' && raw !== null ? raw : {}) as {
    seq?: unknown;
    event_id?: unknown;
    stream_id?: unknown;
  };
  return {
    seq: typeof value.seq === 'number' && Number.isSafeInteger(value.seq) && value.seq >= 0 ? value.seq : undefined,
    eventId: typeof value.event_id === 'string' && value.event_id.length <= 64 ? value.event_id : undefined,
    streamId: typeof value.stream_id === 'string' ? value.stream_id : undefined,
  };
}

/**
 * Default of `ordering.backfillRetryAfterMs`: how long a gap the API could not fill is not asked about again.
 *
 * @example
 * ```ts
 * createReceiver({ secrets, store, ordering: streamOrdering({ mode: 'enforce', fetchEventsAfter, backfillRetryAfterMs: 2 * DEFAULT_BACKFILL_RETRY_AFTER_MS }) })
 * ```
 */
export const DEFAULT_BACKFILL_RETRY_AFTER_MS = 5_000;

/**
 * Most fetched events a backfill takes that do not advance it (seqs it already has) before it gives up with
 * `backfill_invalid`: a fetcher that repeats a seq forever must not hold the delivery until `backfillTimeoutMs`.
 *
 * @example
 * ```ts
 * if (stale > MAX_STALE_BACKFILL_EVENTS) giveUp()
 * ```
 */
export const MAX_STALE_BACKFILL_EVENTS = 1_000;

/** How many gaps (stream and cursor) the memory of unfillable gaps keeps, and stream+seq pairs the stall log keeps. */
const MAX_REMEMBERED = 10_000;

/** The answers worth remembering: the API could not fill the gap, or this receiver could not check what it served. */
const REMEMBERED: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'out_of_order',
  'backfill_unavailable',
  'backfill_invalid',
  'backfill_unfillable',
  'jwks_unavailable',
]);

interface Remembered {
  until: number;
  failure: KybWebhookError;
}

/**
 * One receiver's backfill bookkeeping. Every entry comes from an authenticated delivery (ordering runs after every
 * check), and the maps are capped, oldest first, so even a flood of authenticated streams cannot grow them unbounded.
 */
export class BackfillGate {
  private readonly running = new Map<string, Promise<unknown>>();
  private readonly failed = new Map<string, Remembered>();
  private readonly stallsLogged = new Set<string>();

  constructor(
    private readonly retryAfterMs: number,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The backfill of `streamId` running in this process, to wait for; undefined when none is. */
  runningFor(streamId: string): Promise<unknown> | undefined {
    return this.running.get(streamId);
  }

  /** Runs `work` as the one backfill of `streamId`; callers check {@link runningFor} first. */
  async exclusive<T>(streamId: string, work: () => Promise<T>): Promise<T> {
    const running = work();
    this.running.set(streamId, running);
    try {
      return await running;
    } finally {
      if (this.running.get(streamId) === running) this.running.delete(streamId);
    }
  }

  /** The failure of a backfill from `expected` on `streamId` within `backfillRetryAfterMs`, or undefined. */
  recentFailure(streamId: string, expected: number): { failure: KybWebhookError; retryInMs: number } | undefined {
    const key = gapKey(streamId, expected);
    const entry = this.failed.get(key);
    if (entry === undefined) return undefined;
    const retryInMs = entry.until - this.clock();
    if (retryInMs <= 0) {
      this.failed.delete(key);
      return undefined;
    }
    return { failure: entry.failure, retryInMs };
  }

  /** Remembers how a backfill from `expected` ended when the API (or the keys) could not fill it; forgets on success. */
  settled(streamId: string, expected: number, failure: KybWebhookError | undefined): void {
    const key = gapKey(streamId, expected);
    this.failed.delete(key);
    if (failure === undefined || this.retryAfterMs === 0 || !REMEMBERED.has(failure.code as ErrorCode)) return;
    this.failed.set(key, { until: this.clock() + this.retryAfterMs, failure });
    capOldest(this.failed);
  }

  /** True the first time a permanent stall of `streamId` at `seq` is seen in this process: log it then, only then. */
  firstStall(streamId: string, seq: number): boolean {
    const key = gapKey(streamId, seq);
    if (this.stallsLogged.has(key)) return false;
    this.stallsLogged.add(key);
    capOldest(this.stallsLogged);
    return true;
  }
}

function gapKey(streamId: string, seq: number): string {
  // The seq is digits only, so the separator can never be confused with a part of it.
  return `${seq}:${streamId}`;
}

/** Drops the oldest entries (insertion order) beyond the cap. */
function capOldest(collection: Map<string, unknown> | Set<string>): void {
  let excess = collection.size - MAX_REMEMBERED;
  for (const key of collection.keys()) {
    if (excess-- <= 0) break;
    collection.delete(key);
  }
}

/**
 * A macrotask turn, so that a fetcher whose events are all ready (a sync iterable, a cached page) cannot keep every
 * other delivery, timer and I/O callback of the process waiting: awaiting its values only queues microtasks.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
