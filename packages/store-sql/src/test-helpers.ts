// Test-only helpers shared by the store-sql tests; package.json "files" leaves this file out of the package.
import { ulid } from '@kyb-webhooks/testing';
import { expect, vi } from 'vitest';
import type { SqlDedupeStore } from './sql-store.js';

/** A table name of its own for each test file, so files running in parallel never share records. */
export function testTable(): string {
  return `kyb_test_${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`;
}

/** Wrap a driver object so that every `query` call is counted: one call is one round trip. */
export function countQueries<T extends { query: (...args: never[]) => unknown }>(
  db: T,
): { db: T; count: () => number } {
  let calls = 0;
  const wrapped = {
    query: (...args: Parameters<T['query']>) => {
      calls++;
      return (db.query as (...a: unknown[]) => unknown).apply(db, args);
    },
  } as unknown as T;
  return { db: wrapped, count: () => calls };
}

/**
 * Run `fn` with the application's clock a day off (Date only; timers stay real). A store that computed expiry from
 * the application's clock would then see leases as a day too long or already expired.
 */
export async function withSkewedAppClock<R>(offsetMs: number, fn: () => Promise<R>): Promise<R> {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() + offsetMs);
  try {
    return await fn();
  } finally {
    vi.useRealTimers();
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The purge scenario every SQL store must pass: a record completed with a short retention is purged once it
 * elapsed, a long one and an open lease are kept; with `olderThanMs` the long completed one goes too, and the
 * lease stays. `ids` lists the table's event ids.
 */
export async function expectPurgeCompleted(
  store: SqlDedupeStore,
  ids: () => Promise<string[]> | string[],
): Promise<void> {
  const [short, long, open] = [ulid(), ulid(), ulid()];
  for (const [id, retainMs] of [
    [short, 200],
    [long, 60_000],
  ] as const) {
    const claim = await store.claim(id, { leaseMs: 5_000 });
    if (claim.status === 'acquired') await store.complete(id, claim.token, { retainMs });
  }
  await store.claim(open, { leaseMs: 60_000 });
  await sleep(300);
  expect(await store.purgeCompleted()).toBe(1);
  expect(await store.purgeCompleted()).toBe(0);
  expect(await ids()).toEqual([long, open].sort());
  expect(await store.purgeCompleted({ olderThanMs: 100 })).toBe(1);
  expect(await ids()).toEqual([open]);
  expect(await store.claim(long, { leaseMs: 1_000 })).toMatchObject({ status: 'acquired' });
}

/**
 * The cursor purge every SQL store must pass: a cursor advanced with a short retention is purged once it elapsed, a
 * long one is kept; with `olderThanMs` the long one goes too. `streams` lists the cursors' stream ids.
 */
export async function expectPurgeCursors(
  store: SqlDedupeStore,
  streams: () => Promise<string[]> | string[],
): Promise<void> {
  const [short, long] = [`req_${ulid()}`, `req_${ulid()}`];
  expect(await store.advanceCursor(short, 3, { retainMs: 200 })).toBe(true);
  const eventId = ulid();
  const claim = await store.claim(eventId, { leaseMs: 5_000 });
  if (claim.status !== 'acquired') throw new Error('expected to acquire a fresh event');
  const options = { retainMs: 60_000, streamId: long, seq: 0, firstSeq: 0 } as const;
  expect(await store.completeInOrder(eventId, claim.token, options)).toBe('completed');
  await sleep(300);
  // The event record completed with 60 s stays; the short cursor goes, and is then read as none.
  expect(await store.purgeCompleted()).toBe(1);
  expect(await streams()).toEqual([long]);
  expect(await store.getCursor(short)).toBeNull();
  // olderThanMs takes the completed record, never a live cursor: that would restart its stream from firstSeq.
  expect(await store.purgeCompleted({ olderThanMs: 100 })).toBe(1);
  expect(await streams()).toEqual([long]);
  expect(await store.getCursor(long)).toBe(0);
}

/**
 * The batched purge every SQL store must pass: 25 expired records, 4 expired cursors and a live record, purged 10
 * rows per batch, all go (25 + 4 counted) and the live one stays; `statements` counts the statements the store sent,
 * which must be `perBatch` (default: one DELETE per batch: 10, 10, 5 records; 4 cursors; 0 skips, 3 + 1 + 1). A
 * batchSize out of range is refused before anything is deleted.
 */
export async function expectPurgeInBatches(
  store: SqlDedupeStore,
  ids: () => Promise<string[]> | string[],
  statements: () => number,
  perBatch = 3 + 1 + 1,
): Promise<void> {
  const expired = Array.from({ length: 25 }, () => ulid());
  for (const id of expired) {
    const claim = await store.claim(id, { leaseMs: 5_000 });
    if (claim.status === 'acquired') await store.complete(id, claim.token, { retainMs: 100 });
  }
  for (let i = 0; i < 4; i++) await store.advanceCursor(`req_${ulid()}`, i, { retainMs: 100 });
  const live = ulid();
  await store.claim(live, { leaseMs: 60_000 });
  await sleep(300);
  for (const batchSize of [0, 1.5, 100_001, Number.NaN])
    await expect(store.purgeCompleted({ batchSize })).rejects.toThrow(
      'purgeCompleted: batchSize must be a whole number of rows from 1 to 100000; the default is 100.',
    );
  await expect(store.purgeCompleted({ pauseRatio: -1 })).rejects.toThrow('purgeCompleted: pauseRatio must be a number');
  expect(await ids()).toHaveLength(26);
  const before = statements();
  // No pause between batches (the default pauses; the other purge tests take it): the same rows, the same statements.
  expect(await store.purgeCompleted({ batchSize: 10, pauseRatio: 0 })).toBe(29);
  expect(statements() - before).toBe(perBatch);
  expect(await ids()).toEqual([live]);
}
