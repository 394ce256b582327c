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

/** Queues the microtask that starts a {@link SharedDeadline}'s wait (see `within`). */
const SETTLED = Promise.resolve();

/** One call waiting on a {@link SharedDeadline}: when it is due, and what to do then (undefined once it settled). */
interface Wait {
  /** On the monotonic clock; 0 for a call that started alone, which the timer is armed for. */
  due: number;
  expire: (() => void) | undefined;
}

/**
 * A monotonic clock where the runtime has one (every runtime the core runs on does), else the wall clock. Looked up
 * at each call, never at import: Node loads its whole perf_hooks module the first time `performance` is read, which
 * would add about 11 M instructions to importing the core.
 */
function monotonicNow(): number {
  return typeof performance === 'object' && typeof performance.now === 'function' ? performance.now() : Date.now();
}

/**
 * {@link settleWithin} for calls that all wait the same `ms` (the handlers' and the store's deadlines of a receiver):
 * they share one timer instead of each starting and clearing its own. When a process has no other timer of that
 * duration, Node makes and drops a timer list and a heap entry for each one, which cost a fresh process about 19,000
 * instructions per delivery on Node 24 (docs/architecture.md §6). The calls wait in the order they started, which
 * is the order they fall due: the timer is armed for the oldest unsettled one (a later one is checked against a
 * monotonic clock when the timer fires), re-armed in place for the first call after an idle spell, and unref'd while
 * nothing waits, so an idle process still exits.
 *
 * @example
 * ```ts
 * const handlerDeadline = new SharedDeadline(30_000)
 * if ((await handlerDeadline.within(handler(event))) === TIMED_OUT) context.abort()
 * ```
 */
export class SharedDeadline {
  readonly #ms: number;
  /** Waits in the order they started; those before `#head` are done. */
  #waits: Wait[] = [];
  #head = 0;
  #unsettled = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The wait the timer was armed for: due when it fires, whatever the clock says. */
  #armedFor: Wait | undefined;
  /** Whether the timer was started with the full `ms`, so that `refresh()` re-arms it for a new call's deadline. */
  #armedWithMs = false;

  constructor(ms: number) {
    this.#ms = ms;
  }

  /**
   * `work`'s value, or {@link TIMED_OUT} when `ms` passed first; a value that is not a thenable, as it is. Work that
   * is already settled when it is handed over (a handler that finished without waiting for anything) answers without
   * touching the timer: its reaction was queued before the microtask that starts the deadline, which then finds it
   * settled. Work still pending starts its deadline in that microtask, so no timer or I/O can run in between.
   */
  within<T>(work: T | PromiseLike<T>): T | Promise<Awaited<T> | typeof TIMED_OUT> {
    if (!isThenable(work)) return work;
    return new Promise((resolve, reject) => {
      let wait: Wait | undefined;
      let settled = false;
      work.then(
        (value) => {
          settled = true;
          if (wait) this.#settle(wait);
          resolve(value as Awaited<T>);
        },
        (error: unknown) => {
          settled = true;
          if (wait) this.#settle(wait);
          reject(error);
        },
      );
      void SETTLED.then(() => {
        if (!settled) wait = this.#start(() => resolve(TIMED_OUT));
      });
    });
  }

  #start(expire: () => void): Wait {
    // A call that starts alone gets the timer armed for itself and never needs its due time: only one that waits
    // behind another is checked against the clock (so a process that takes one delivery at a time never reads it).
    const due = this.#unsettled > 0 ? monotonicNow() + this.#ms : 0;
    const wait: Wait = { due, expire };
    this.#waits.push(wait);
    this.#unsettled++;
    if (this.#unsettled === 1) this.#restart(wait);
    return wait;
  }

  /**
   * The first call after an idle spell arms the timer for itself, so a lone call's deadline never depends on the
   * clock: Node's `refresh()` re-arms the idle timer in place (its list kept), anywhere else a new timer is started.
   */
  #restart(wait: Wait): void {
    const timer = this.#timer as { refresh?: () => unknown; ref?: () => unknown } | undefined;
    if (timer !== undefined && this.#armedWithMs && typeof timer.refresh === 'function') {
      timer.refresh();
      timer.ref?.();
      this.#armedFor = wait;
      return;
    }
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#arm(wait, this.#ms);
  }

  #settle(wait: Wait): void {
    if (wait.expire === undefined) return; // it expired first
    wait.expire = undefined;
    this.#unsettled--;
    this.#dropDone();
    if (this.#unsettled === 0) this.#idle();
  }

  #fire(): void {
    this.#timer = undefined;
    const now = monotonicNow();
    for (; this.#head < this.#waits.length; this.#head++) {
      const wait = this.#waits[this.#head]!;
      if (wait.expire === undefined) continue;
      if (wait !== this.#armedFor && wait.due > now) break;
      const expire = wait.expire;
      wait.expire = undefined;
      this.#unsettled--;
      expire();
    }
    this.#dropDone();
    const next = this.#waits[this.#head];
    // A clock that lags the timers (or stands still, as under fake timers that leave it alone) is not trusted for
    // more than one arming: the wait armed for next expires when that timer fires.
    if (next !== undefined) this.#arm(next, Math.min(this.#ms, Math.max(0, next.due - now)));
  }

  #arm(wait: Wait, delay: number): void {
    this.#armedFor = wait;
    this.#armedWithMs = delay === this.#ms;
    this.#timer = setTimeout(() => this.#fire(), delay);
  }

  /** Nothing waits: the timer no longer keeps the process alive (or, where a timer cannot be unref'd, is cleared). */
  #idle(): void {
    const timer = this.#timer as { unref?: () => unknown } | undefined;
    if (typeof timer?.unref === 'function') {
      timer.unref();
      return;
    }
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedFor = undefined;
  }

  /** Moves past the settled waits at the front, and lets the array go when they are all done. */
  #dropDone(): void {
    const waits = this.#waits;
    while (this.#head < waits.length && waits[this.#head]!.expire === undefined) this.#head++;
    if (this.#head === waits.length) {
      this.#waits = [];
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= waits.length) {
      this.#waits = waits.slice(this.#head);
      this.#head = 0;
    }
  }
}

/**
 * What the hot path reads to tell a pending answer from a ready one, at each place itself:
 * `typeof (answer as Thenable).then === 'function'`. Not `instanceof Promise`, which looks `Symbol.hasInstance` up
 * on every run of a function not yet optimized (about 270 instructions against 90), and not {@link isThenable}: one
 * shared function's property cache serves all its callers, soon sees every kind of value and goes megamorphic.
 * Measured in the bench's instruction counts (bench/README.md).
 */
export type Thenable = { then?: unknown };

/** Whether `value` is a thenable: a promise, or anything `await` would wait for. For the hot path, see {@link Thenable}. */
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
