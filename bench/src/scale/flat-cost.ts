/**
 * The cost of a new event's claim → complete at each size, one engine at a time: the stores of all sizes take turns
 * within every round (../harness.ts rotates the order each round), so each round yields a ratio of a full store to
 * the empty one measured seconds apart, under the same load of this shared machine. Client calls are counted over
 * the whole run (warm-up included), for every size apart, as each size has its own client.
 */
import { DEFAULT_LEASE_MS, DEFAULT_RETAIN_MS, type DedupeStore } from '@kyb-webhooks/core';
import { measure, median, medianInterval, type HarnessOptions } from '../harness.js';
import type { SizedStore } from './engines.js';

/** One size's figures. */
export interface SizeCost {
  /** Records loaded before the run. */
  rows: number;
  /** Median over rounds of µs per claim → complete. */
  medianUs: number;
  roundsUs: number[];
  /** Per-round µs ÷ the empty store's µs in the same round (1 for the empty store itself). */
  ratios: number[];
  ratio: { median: number; low?: number; high?: number };
  /** Events run in all (warm-up included): the empty store ends the run holding this many records. */
  events: number;
  /** Client calls per event. */
  calls: number;
  /** Transactions per event (SQLite). */
  transactions?: number;
}

/** claim → complete of a fresh id; anything but `acquired` and `true` is a failure. */
export async function claimAndComplete(store: DedupeStore, eventId: string): Promise<void> {
  const claim = await store.claim(eventId, { leaseMs: DEFAULT_LEASE_MS });
  if (claim.status !== 'acquired') throw new Error(`claim of a fresh id returned ${claim.status}`);
  if (!(await store.complete(eventId, claim.token, { retainMs: DEFAULT_RETAIN_MS }))) {
    throw new Error('complete returned false right after the claim');
  }
}

/** Measures every size in paired rounds; `sized[0]` must be the empty store, the one the ratios are taken against. */
export async function measureSizes(
  sized: readonly { rows: number; store: SizedStore }[],
  options: HarnessOptions,
  nextId: () => string,
): Promise<SizeCost[]> {
  const events = sized.map(() => 0);
  const callsBefore = sized.map(({ store }) => store.calls());
  const transactionsBefore = sized.map(({ store }) => store.transactions?.() ?? 0);
  const measured = await measure(
    sized.map(({ rows, store }, index) => ({
      name: String(rows),
      async: true,
      fn: async () => {
        events[index]!++;
        await claimAndComplete(store.store, nextId());
      },
    })),
    options,
  );
  const empty = measured[0]!.roundsUs;
  return sized.map(({ rows, store }, index) => {
    const roundsUs = measured[index]!.roundsUs;
    const ratios = roundsUs.map((value, round) => value / empty[round]!);
    const n = events[index]!;
    return {
      rows,
      medianUs: measured[index]!.medianUs,
      roundsUs,
      ratios,
      ratio: { median: median(ratios), ...medianInterval(ratios) },
      events: n,
      calls: (store.calls() - callsBefore[index]!) / n,
      ...(store.transactions ? { transactions: (store.transactions() - transactionsBefore[index]!) / n } : {}),
    };
  });
}
