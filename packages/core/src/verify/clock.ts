/*
 * The receiver's clock as the time checks read it: once per check, and refused when it answers no number, because
 * every comparison with NaN is false, so a `now` that forgot its `return` would pass the skew, `notAfter`, `exp`
 * and `iat` checks alike.
 */
import { rejection } from '../errors.js';
import { describeValue } from '../option-words.js';

/**
 * Reads `now` once: Unix milliseconds, or `internal_error` (500, so the service retries the delivery once the clock
 * is fixed) when it answers anything but a finite number. The detail names the kind of value, never the value.
 *
 * @example
 * ```ts
 * const nowMs = readClock(options.now) // throws internal_error for () => undefined
 * ```
 */
export function readClock(now: () => number): number {
  const ms = now();
  if (Number.isFinite(ms)) return ms;
  throw rejection('internal_error', `the clock (now) answered ${describeValue(ms)}, not Unix milliseconds`);
}
