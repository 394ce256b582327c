/**
 * Claim latency while `purgeCompleted` deletes a table's expired records, against the same table without a purge,
 * measured both before the purge and after it. Claims run one at a time on fresh ids (each then completed, untimed,
 * as a receiver would); the purge runs beside them on another connection of the same pool, in batches of
 * `batchSize`, until it has deleted every expired row. Two baselines, because on a shared machine one sample of
 * claims' p99 moved 0.5–2.3 ms between runs of the same code: a verdict that rests on one of them can be the
 * baseline's luck (see `purgeSlowdownAgainstBoth`).
 */
import { performance } from 'node:perf_hooks';
import { DEFAULT_LEASE_MS, DEFAULT_RETAIN_MS } from '@kyb-webhooks/core';
import type { SizedStore } from './engines.js';
import { p99, type P99 } from './verdicts.js';

/** One purge configuration the section measures: `purgeCompleted`'s options. */
export interface PurgeRun {
  batchSize: number;
  pauseRatio: number;
}

/**
 * The purge runs `KYB_BENCH_SCALE_PURGES` asks for, `batchSize[:pauseRatio]` separated by commas (`100,1000,100:3`),
 * or `defaults` when it is unset; anything else throws, naming the format.
 */
export function purgeRuns(spec: string | undefined, defaults: readonly PurgeRun[]): PurgeRun[] {
  if (spec === undefined || spec.trim() === '') return [...defaults];
  return spec.split(',').map((item) => {
    const match = /^\s*(\d+)(?::(\d+(?:\.\d+)?))?\s*$/.exec(item);
    if (!match) {
      throw new Error(
        `KYB_BENCH_SCALE_PURGES: "${item}" is not batchSize[:pauseRatio]; write e.g. 100,1000,100:3 (purgeCompleted's options).`,
      );
    }
    return { batchSize: Number(match[1]), pauseRatio: Number(match[2] ?? 0) };
  });
}

/** How reports name a run: `batchSize 100`, or `batchSize 100, pauseRatio 3` when it pauses. */
export function purgeName(run: PurgeRun): string {
  return `batchSize ${run.batchSize.toLocaleString('en-US')}${run.pauseRatio > 0 ? `, pauseRatio ${run.pauseRatio}` : ''}`;
}

export interface PurgeResult extends PurgeRun {
  /** Expired records loaded. */
  rows: number;
  /** What purgeCompleted resolved to (records, cursors and skips deleted); absent when it failed. */
  deleted?: number;
  /** Why purgeCompleted failed, when it did. */
  purgeError?: string;
  /** Claims that failed while the purge ran (a receiver answers those 503), and the first one's error. */
  failedClaims: number;
  claimError?: string;
  purgeMs: number;
  /** Claims before the purge started, on the table full of expired records. */
  before: P99;
  during: P99;
  /** As many claims once the purge has ended and the server has settled (`SizedStore.settle`), as before it. */
  after: P99;
}

/** One claim's latency in µs; the claim is then completed outside the timing. */
async function timedClaim(store: SizedStore, eventId: string): Promise<number> {
  const start = performance.now();
  const claim = await store.store.claim(eventId, { leaseMs: DEFAULT_LEASE_MS });
  const us = (performance.now() - start) * 1000;
  if (claim.status !== 'acquired') throw new Error(`claim of a fresh id returned ${claim.status}`);
  await store.store.complete(eventId, claim.token, { retainMs: DEFAULT_RETAIN_MS });
  return us;
}

/**
 * `claims` timed claims without a purge (after `warmup` untimed ones), then as many as fit while one
 * `purgeCompleted({ batchSize, pauseRatio })` runs to completion, then `claims` more without it.
 */
export async function measurePurge(
  store: SizedStore,
  rows: number,
  options: { claims: number; warmup: number } & PurgeRun,
  nextId: () => string,
  progress: (line: string) => void,
): Promise<PurgeResult> {
  if (!store.purge) throw new Error('this store has no purgeCompleted');
  for (let i = 0; i < options.warmup; i++) await timedClaim(store, nextId());
  const before = await timedClaims(store, options.claims, nextId);
  progress(`${options.claims} claims without a purge; purging ${rows.toLocaleString('en-US')} expired rows`);

  let done = false;
  const start = performance.now();
  let end = start;
  const purge = settle(store.purge({ batchSize: options.batchSize, pauseRatio: options.pauseRatio })).finally(() => {
    done = true;
    end = performance.now();
  });
  const during: number[] = [];
  let failedClaims = 0;
  let claimError: string | undefined;
  // Claims until the purge has ended. A claim that fails is what a receiver answers 503 to: counted, not fatal.
  while (!done) {
    try {
      during.push(await timedClaim(store, nextId()));
    } catch (error) {
      failedClaims++;
      claimError ??= firstLine(error);
    }
  }
  const outcome = await purge;
  progress(`purged in ${((end - start) / 1000).toFixed(1)} s; settling the server, then ${options.claims} claims`);
  // As before the purge (the settling after the bulk load): the server's own clean-up of what the purge deleted
  // (InnoDB's purge threads, a VACUUM) is done before the claims "after" are timed.
  await store.settle?.();
  const after = await timedClaims(store, options.claims, nextId);
  return {
    rows,
    batchSize: options.batchSize,
    pauseRatio: options.pauseRatio,
    ...outcome,
    purgeMs: end - start,
    before: p99(before),
    during: p99(during),
    after: p99(after),
    failedClaims,
    ...(claimError === undefined ? {} : { claimError }),
  };
}

async function timedClaims(store: SizedStore, claims: number, nextId: () => string): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < claims; i++) latencies.push(await timedClaim(store, nextId()));
  return latencies;
}

const firstLine = (error: unknown): string => String((error as Error)?.message ?? error).split('\n')[0]!;

/** The purge's count, or its error: a purge that fails is reported beside the claims' figures, not thrown. */
async function settle(purge: Promise<number>): Promise<{ deleted?: number; purgeError?: string }> {
  try {
    return { deleted: await purge };
  } catch (error) {
    return { purgeError: firstLine(error) };
  }
}
