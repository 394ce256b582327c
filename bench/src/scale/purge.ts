/**
 * Claim latency while `purgeCompleted` deletes a table's expired records, against the same table without a purge.
 * Claims run one at a time on fresh ids (each then completed, untimed, as a receiver would); the purge runs beside
 * them on another connection of the same pool, in its default batches, until it has deleted every expired row.
 */
import { performance } from 'node:perf_hooks';
import { DEFAULT_LEASE_MS, DEFAULT_RETAIN_MS } from '@kyb-webhooks/core';
import type { SizedStore } from './engines.js';
import { p99, type P99 } from './verdicts.js';

export interface PurgeResult {
  /** Expired records loaded. */
  rows: number;
  batchSize: number;
  /** What purgeCompleted resolved to (records, cursors and skips deleted). */
  deleted: number;
  purgeMs: number;
  without: P99;
  during: P99;
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
 * `purgeCompleted({ batchSize })` runs to completion.
 */
export async function measurePurge(
  store: SizedStore,
  rows: number,
  options: { claims: number; warmup: number; batchSize: number },
  nextId: () => string,
  progress: (line: string) => void,
): Promise<PurgeResult> {
  if (!store.purge) throw new Error('this store has no purgeCompleted');
  for (let i = 0; i < options.warmup; i++) await timedClaim(store, nextId());
  const without: number[] = [];
  for (let i = 0; i < options.claims; i++) without.push(await timedClaim(store, nextId()));
  progress(`${options.claims} claims without a purge; purging ${rows.toLocaleString('en-US')} expired rows`);

  let done = false;
  const start = performance.now();
  let end = start;
  const purge = store.purge({ batchSize: options.batchSize }).finally(() => {
    done = true;
    end = performance.now();
  });
  const during: number[] = [];
  // Claims until the purge has finished; a purge that fails stops the loop too, and its error is thrown below.
  while (!done) during.push(await timedClaim(store, nextId()));
  const deleted = await purge;
  return {
    rows,
    batchSize: options.batchSize,
    deleted,
    purgeMs: end - start,
    without: p99(without),
    during: p99(during),
  };
}
