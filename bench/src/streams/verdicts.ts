/**
 * The two verdicts of the stream section, apart from the report so that their rules are tested: round trips judged on
 * exact counts, backfill throughput judged on a 95% interval.
 */
import type { Interval } from './ordering-cost.js';

/** Enforce may add at most this many store round trips per event on the happy path. */
export const MAX_EXTRA_ROUND_TRIPS = 1;
/** Backfill must run at least at this fraction of the receiver's own in-order throughput. */
export const MIN_BACKFILL_RATIO = 0.5;

export interface RoundTripCounts {
  /** Store calls per event, off and enforce. */
  calls: { off: number; enforce: number };
  /** Client calls per event at the wire, when counted. */
  wire?: { off: number; enforce: number };
  /** The wire counts statements run in process (SQLite): not round trips. */
  inProcess: boolean;
}

/**
 * The round trips enforce adds per event: the store calls, or over a network the queries or commands at the client
 * when those are more (a store call that takes several statements). Exact counts, so no interval.
 */
export function extraRoundTrips(counts: RoundTripCounts): number {
  const extra = counts.calls.enforce - counts.calls.off;
  if (!counts.wire || counts.inProcess) return extra;
  return Math.max(extra, counts.wire.enforce - counts.wire.off);
}

export function roundTripsMet(extra: number): boolean {
  // Counts divided by event counts: allow for floating-point dust, never for a real extra call.
  return extra <= MAX_EXTRA_ROUND_TRIPS + 1e-9;
}

/**
 * `met` only when the whole interval of the per-round ratios is at or above the target, `missed` when all of it is
 * below, `unsure` when it straddles the target or there are too few rounds for an interval.
 */
export function backfillVerdict(ratio: Interval): true | false | 'unsure' {
  if (ratio.low === undefined || ratio.high === undefined) return 'unsure';
  if (ratio.low >= MIN_BACKFILL_RATIO) return true;
  if (ratio.high < MIN_BACKFILL_RATIO) return false;
  return 'unsure';
}
