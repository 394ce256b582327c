/**
 * The dedupe store contract (docs/architecture.md §7.1). Delivery is at least once, so the receiver claims an event id before
 * running handlers, completes it after they succeed, and releases it when they fail so the retry runs them again.
 *
 * Implementations must make `claim` atomic: of any number of concurrent claims of one id, exactly one returns
 * `acquired`. A lease that expired (its holder crashed) can be claimed again; `complete` and `release` succeed only
 * for the token of the current lease.
 *
 * Each method may answer with a promise (any store that does I/O) or, for a store that answers at once in the same
 * process, with the value itself: the receiver then spends no promise, microtask or deadline timer on the call
 * (`storeTimeoutMs` bounds only answers that are promises; a synchronous call cannot be cut short). The built-in
 * memory store answers synchronously; `await` works on either answer.
 *
 * @example
 * ```ts
 * const claim = await store.claim(eventId, { leaseMs: 60_000 })
 * if (claim.status === 'acquired') {
 *   // a long run may keep its lease: await store.extend?.(eventId, claim.token, { leaseMs: 60_000 })
 *   try { await run(); await store.complete(eventId, claim.token, { retainMs: 30 * 86_400_000 }) }
 *   catch (error) { await store.release(eventId, claim.token); throw error }
 * }
 * ```
 */
export interface DedupeStore {
  /** Atomically claim `eventId` for `leaseMs` milliseconds. */
  claim(eventId: string, options: ClaimOptions): ClaimResult | Promise<ClaimResult>;
  /** Mark the event done, kept for `retainMs`; `false` when `token` no longer holds the lease. */
  complete(eventId: string, token: string, options: CompleteOptions): boolean | Promise<boolean>;
  /** Free the claim so the next delivery runs the handler; `false` when `token` no longer holds the lease. */
  release(eventId: string, token: string): boolean | Promise<boolean>;
  /**
   * Make the lease `token` holds end `leaseMs` from now (the store's clock), as `claim` set it; `false` when `token`
   * no longer holds the lease (it ended, was released, or the event completed), and then nothing changes. The
   * receiver calls it while a handler that passed `handlerTimeoutMs` still runs, every `leaseMs / 3` until it
   * finishes, so no retry takes the event over and runs the handlers beside it (docs/architecture.md §7.1).
   * Optional: a store without it works, with that one risk (the receiver warns when it happens). Every built-in
   * store implements it; it takes the lease checks `complete` takes.
   */
  extend?(eventId: string, token: string, options: ExtendOptions): boolean | Promise<boolean>;
}

/** Options of {@link DedupeStore.claim}. */
export interface ClaimOptions {
  /** How long the claim holds before another delivery may take it over (crashed holder). */
  leaseMs: number;
}

/** Options of {@link DedupeStore.extend}: the lease from now on, as {@link ClaimOptions.leaseMs}. */
export type ExtendOptions = ClaimOptions;

/** Options of {@link DedupeStore.complete}. */
export interface CompleteOptions {
  /** How long a completed record is kept; redeliveries can be requested at any time, so keep it long. */
  retainMs: number;
}

/** What {@link DedupeStore.claim} found. */
export type ClaimResult = { status: 'acquired'; token: string } | { status: 'in_progress' } | { status: 'completed' };

/**
 * The answer of a store's `claim`, checked: anything but one of the three documented shapes (an `acquired` needs a
 * non-empty string token) throws, so a custom store that answers `{ status: 'duplicate' }`, `{}` or `true` makes the
 * delivery fail with 503 `store_unavailable` instead of silently turning dedupe off.
 *
 * @example
 * ```ts
 * const claim = checkClaimResult(await store.claim(eventId, { leaseMs })) // throws a TypeError on a bad answer
 * ```
 */
export function checkClaimResult(answer: unknown): ClaimResult {
  const status = typeof answer === 'object' && answer !== null ? (answer as { status?: unknown }).status : undefined;
  if (status === 'completed' || status === 'in_progress') return answer as ClaimResult;
  if (status === 'acquired') {
    const token = (answer as { token?: unknown }).token;
    if (typeof token === 'string' && token.length > 0) return answer as ClaimResult;
    throw new TypeError(
      'the store answered claim() with status "acquired" but no token; it must return a non-empty string token',
    );
  }
  throw new TypeError(
    'the store answered claim() with something other than { status: "acquired", token } | { status: "in_progress" } | { status: "completed" }',
  );
}

/**
 * 30 days: redeliveries can be requested at any time (spec 6, rule 5).
 *
 * @example
 * ```ts
 * createReceiver({ secrets, retainMs: 2 * DEFAULT_RETAIN_MS }) // keep processed ids for 60 days
 * ```
 */
export const DEFAULT_RETAIN_MS = 30 * 24 * 60 * 60 * 1000;
/**
 * 60 s: long enough for a typical handler, short enough that a crashed receiver's events are retried soon.
 *
 * @example
 * ```ts
 * await store.claim(eventId, { leaseMs: DEFAULT_LEASE_MS })
 * ```
 */
export const DEFAULT_LEASE_MS = 60 * 1000;

/**
 * The longest lease or retention a store accepts: 100 years. Every store can hold it (MySQL's DATETIME ends in the
 * year 9999, Redis's PX and PostgreSQL's intervals go further), so a value past it is refused at configuration rather
 * than failing, or being stored already expired, on the first delivery.
 *
 * @example
 * ```ts
 * createReceiver({ secrets, retainMs: Math.min(requestedMs, MAX_STORE_DURATION_MS) })
 * ```
 */
export const MAX_STORE_DURATION_MS = 100 * 365.25 * 24 * 60 * 60 * 1000;

/**
 * A lease or retention as a store writes it: whole milliseconds (a fraction rounded up, never shorter than asked),
 * from 1 to {@link MAX_STORE_DURATION_MS}. Anything else is a RangeError naming the option, never its value.
 *
 * @example
 * ```ts
 * const px = storeDurationMs('leaseMs', options.leaseMs) // 60000 for 59999.2
 * ```
 */
export function storeDurationMs(name: string, value: number): number {
  if (!isStoreDuration(value)) {
    throw new RangeError(
      `${name} must be a positive number of milliseconds, at most ${MAX_STORE_DURATION_MS} (100 years).`,
    );
  }
  return Math.ceil(value);
}

/**
 * Whether `value` is a lease or retention a store can keep: a number of milliseconds above 0 and at most
 * {@link MAX_STORE_DURATION_MS} ({@link storeDurationMs} throws for anything else). A NaN lease would never expire, a
 * negative one would let a second claim in at once.
 *
 * @example
 * ```ts
 * if (!isStoreDuration(leaseMs)) storeDurationMs('leaseMs', leaseMs) // throws the RangeError naming the option
 * ```
 */
export function isStoreDuration(value: unknown): value is number {
  return typeof value === 'number' && value > 0 && value <= MAX_STORE_DURATION_MS;
}

/**
 * A random lease token: a v4 UUID (122 random bits) from the platform CSPRNG.
 *
 * @example
 * ```ts
 * const token = createLeaseToken() // '3b241101-e2bb-4255-8caf-4136c566a962'
 * ```
 */
export function createLeaseToken(): string {
  return crypto.randomUUID();
}
