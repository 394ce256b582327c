/**
 * The scale section's rules, apart from the report so they are tested: exact counts judged exactly, times judged on
 * distribution-free 95% intervals (met or MISSED only when the whole interval is on one side of the target).
 */
import { judgeAtMost, type Outcome } from '../http/pairing.js';

/** At the largest size, a claim + complete may cost at most this many times what it costs on an empty store. */
export const MAX_GROWTH = 1.2;
/** While a purge runs, the claim's p99 may be at most this many times its p99 without one. */
export const MAX_PURGE_SLOWDOWN = 2;

/**
 * Round trips (or statements) per event at the largest size against the empty store: exact counts, so no interval.
 * Counts divided by event counts leave floating-point dust, never a real extra call.
 *
 * @example
 * ```ts
 * countsFlat(2, 2) // true
 * ```
 */
export function countsFlat(atLargest: number, atEmpty: number): boolean {
  return atLargest <= MAX_GROWTH * atEmpty + 1e-9;
}

/**
 * Per-round time ratios (largest size ÷ empty, both from the same round): met when the whole 95% interval of their
 * median is at or below {@link MAX_GROWTH}, MISSED when all of it is above, unsure otherwise.
 *
 * @example
 * ```ts
 * timeFlat([1.01, 0.98, 1.03, 1.0, 0.99, 1.02, 1.0]).outcome // true
 * ```
 */
export function timeFlat(ratios: readonly number[]) {
  return judgeAtMost(ratios, MAX_GROWTH);
}

/** The standard normal's 97.5th percentile: a two-sided 95% interval. */
const Z_95 = 1.959964;

/**
 * The ranks (0-based, into the sorted sample) that bound the `q` quantile with 95% confidence: the number of values
 * below the true quantile is binomial(n, q), here by its normal approximation, so it needs a large sample
 * (n·q·(1−q) ≥ 5; undefined below that). Nothing is assumed of the latencies' own shape (their tails are anything
 * but normal).
 *
 * @example
 * ```ts
 * quantileRanks(10_000, 0.99) // { low: 9879, high: 9920 }
 * ```
 */
export function quantileRanks(n: number, q: number): { low: number; high: number } | undefined {
  const spread = n * q * (1 - q);
  if (spread < 5) return undefined;
  // One rank of slack on the low side: the rank counts values strictly below, the sample's index starts at 0.
  const low = Math.floor(n * q - Z_95 * Math.sqrt(spread)) - 1;
  const high = Math.ceil(n * q + Z_95 * Math.sqrt(spread));
  if (low < 0 || high > n - 1) return undefined;
  return { low, high };
}

/** A p99 and its 95% interval, from a sample of latencies. */
export interface P99 {
  value: number;
  low?: number;
  high?: number;
  n: number;
}

/**
 * The sample's 99th percentile (nearest rank) and, when the sample is large enough, its distribution-free 95%
 * interval.
 *
 * @example
 * ```ts
 * p99(Array.from({ length: 1000 }, (_, i) => i + 1)).value // 990
 * ```
 */
export function p99(values: readonly number[]): P99 {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const value = n === 0 ? Number.NaN : sorted[Math.min(n - 1, Math.ceil(0.99 * n) - 1)]!;
  const ranks = quantileRanks(n, 0.99);
  return ranks ? { value, low: sorted[ranks.low]!, high: sorted[ranks.high]!, n } : { value, n };
}

/**
 * "p99 during the purge ≤ 2 × p99 without": the ratio's interval is the widest the two p99 intervals allow (during's
 * low ÷ without's high … during's high ÷ without's low). Met when all of it is at or below the limit, MISSED when
 * all of it is above, unsure when it straddles the limit or a sample is too small for an interval.
 *
 * @example
 * ```ts
 * purgeSlowdown({ value: 300, low: 280, high: 320, n: 5000 }, { value: 250, low: 240, high: 260, n: 5000 }).outcome
 * // true: 280/260 … 320/240 = 1.08 … 1.33
 * ```
 */
export function purgeSlowdown(
  during: P99,
  without: P99,
): { ratio: number; low?: number; high?: number; outcome: Outcome } {
  const ratio = during.value / without.value;
  if (during.low === undefined || during.high === undefined || without.low === undefined || without.high === undefined)
    return { ratio, outcome: 'unsure' };
  const low = during.low / without.high;
  const high = during.high / without.low;
  const outcome: Outcome = high <= MAX_PURGE_SLOWDOWN ? true : low > MAX_PURGE_SLOWDOWN ? false : 'unsure';
  return { ratio, low, high, outcome };
}

/** {@link purgeSlowdown} against each baseline, and the verdict they agree on. */
export interface PurgeSlowdownVerdict {
  before: ReturnType<typeof purgeSlowdown>;
  after: ReturnType<typeof purgeSlowdown>;
  outcome: Outcome;
}

/**
 * "p99 during the purge ≤ 2 × p99 without", judged against the claims before the purge and against those after it:
 * met or MISSED only when both say so, unsure otherwise. One sample's p99 moves between runs on a shared machine (0.5
 * to 2.3 ms on MariaDB for the same code), so a verdict that holds against one baseline only is that baseline's luck.
 * Both samples are taken on a settled server (the bench waits for its background work, InnoDB's purge of the deleted
 * rows included); were the after one to pay for some of that work, the ratio against it would be flattered, and the
 * rule would still need the before one to agree.
 *
 * @example
 * ```ts
 * const during = { value: 300, low: 280, high: 320, n: 5000 }
 * purgeSlowdownAgainstBoth(during, { value: 250, low: 240, high: 260, n: 5000 }, { value: 100, low: 90, high: 110, n: 5000 }).outcome
 * // 'unsure': met against the first (1.08 … 1.33), MISSED against the second (2.55 … 3.56)
 * ```
 */
export function purgeSlowdownAgainstBoth(during: P99, before: P99, after: P99): PurgeSlowdownVerdict {
  const [againstBefore, againstAfter] = [purgeSlowdown(during, before), purgeSlowdown(during, after)];
  const outcome = againstBefore.outcome === againstAfter.outcome ? againstBefore.outcome : 'unsure';
  return { before: againstBefore, after: againstAfter, outcome };
}
