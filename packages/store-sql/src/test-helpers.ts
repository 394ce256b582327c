// Test-only helpers shared by the store-sql tests; package.json "files" leaves this file out of the package.
import { vi } from 'vitest';

/** A table name of its own for each test file, so files running in parallel never share records. */
export function testTable(): string {
  return `kyb_test_${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`;
}

/** Wrap a driver object so that every `query` call is counted: one call is one round trip. */
export function countQueries<T extends { query: (...args: never[]) => unknown }>(db: T): { db: T; count: () => number } {
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
