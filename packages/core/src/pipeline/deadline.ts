/** What {@link settleWithin} resolves with when the deadline passed first. */
export const TIMED_OUT: unique symbol = Symbol('timed out');

/**
 * Waits for `work` at most `ms` milliseconds. The work itself is not stopped (JavaScript cannot stop it): callers
 * that must react to its late outcome attach their own handlers to `work`. A value that is not a thenable is
 * returned as it is, so synchronous stores and handlers cost no timer.
 *
 * @example
 * ```ts
 * const answer = await settleWithin(store.claim(eventId, { leaseMs }), 5_000)
 * if (answer === TIMED_OUT) return reject('store_unavailable')
 * ```
 */
export function settleWithin<T>(work: T | PromiseLike<T>, ms: number): T | Promise<Awaited<T> | typeof TIMED_OUT> {
  if (!isThenable(work)) return work;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(TIMED_OUT), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value as Awaited<T>);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

/**
 * Hands work that goes on after the delivery's answer to its `waitUntil` (Workers, Vercel), which would otherwise
 * cancel it. A `waitUntil` that throws (called outside its request, say) changes nothing: the work goes on as it
 * would without one, and the answer stays what it was.
 */
export function handOff(
  waitUntil: ((promise: Promise<unknown>) => void) | undefined,
  work: PromiseLike<unknown>,
): void {
  if (waitUntil === undefined) return;
  try {
    waitUntil(Promise.resolve(work));
  } catch {
    // see above
  }
}
