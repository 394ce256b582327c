/**
 * How rounds are paired across replica processes, and how a target is judged on the paired differences. A server
 * process can stay 20–40% slower than an identical one for its whole life, so each endpoint runs as two replicas
 * and every pairing of replicas (ours 1 or 2 against the baseline's 1 or 2), in either order, comes up equally
 * often: a slow process then moves a quarter to a half of the differences, which widens the interval instead of
 * shifting a verdict.
 */
import { median, medianInterval } from '../harness.js';

export interface RoundPlan {
  /** Replica (0-based) that serves our endpoints this round. */
  ours: number;
  /** Replica (0-based) that serves the baselines (hand-written, peer) this round. */
  base: number;
  /** Whether the hand-written baseline runs right before ours this round (else right after). */
  baseFirst: boolean;
}

/**
 * The plan of round `round`: over every 8 rounds, each (ours replica, baseline replica, order) combination once.
 *
 * @example
 * ```ts
 * roundPlan(0, 2) // { ours: 0, base: 0, baseFirst: true }
 * roundPlan(2, 2) // { ours: 0, base: 1, baseFirst: true }
 * ```
 */
export function roundPlan(round: number, replicas: number): RoundPlan {
  return {
    ours: (round % 2) % replicas,
    base: ((round + (round >> 1)) % 2) % replicas,
    baseFirst: (round + (round >> 2)) % 2 === 0,
  };
}

export type Outcome = boolean | 'unsure';

export interface Judged {
  median: number;
  /** The distribution-free 95% interval of the median; absent with too few rounds (fewer than 6). */
  interval?: { low: number; high: number };
  outcome: Outcome;
}

/**
 * Judges "at most `limit`" on per-round values: met when the whole 95% interval of their median is at or below
 * the limit, MISSED when all of it is above, unsure otherwise, and unsure without an interval (a median alone flips
 * between met and missed from one run to the next on a shared machine).
 *
 * @example
 * ```ts
 * judgeAtMost([3, 4, 5, 6, 7, 8, 9, 10, 11, 12], 15).outcome // true: the interval 4 … 11 lies below 15
 * ```
 */
export function judgeAtMost(values: readonly number[], limit: number): Judged {
  const interval = medianInterval(values);
  const outcome: Outcome = !interval
    ? 'unsure'
    : interval.high <= limit
      ? true
      : interval.low > limit
        ? false
        : 'unsure';
  return { median: median(values), ...(interval ? { interval } : {}), outcome };
}
