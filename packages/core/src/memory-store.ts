import { createLeaseToken, type ClaimOptions, type ClaimResult, type CompleteOptions, type DedupeStore } from './dedupe.js';

interface MemoryRecord {
  state: 'in_progress' | 'completed';
  token: string;
  expiresAt: number;
}

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /** Clock in milliseconds; defaults to `Date.now`. */
  now?: () => number;
  /**
   * Most records kept. Once exceeded, the oldest are dropped first, 1% of the cap at a time so that eviction stays
   * cheap. Default 100,000.
   */
  maxEntries?: number;
}

/**
 * The default dedupe store: one process, lost on restart. Fine for a single instance and for tests; use a
 * Redis or SQL store when several processes receive webhooks or when dedupe must survive a restart.
 *
 * @example
 * ```ts
 * const receiver = createReceiver({ secrets, store: createMemoryStore() })
 * ```
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): DedupeStore {
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? 100_000;
  // 1% of the cap (1,000 by default) beyond the overflow is evicted at once.
  const evictionBatch = Math.floor(maxEntries / 100);
  // A Map keeps insertion order, so the first keys are the oldest when trimming. A record keeps the position of
  // its claim when it completes (a lease is short next to the retention), which spares a delete and re-insert.
  const records = new Map<string, MemoryRecord>();
  let claimsSinceSweep = 0;

  /** The record of `eventId` unless it expired, which is dropped on the way. */
  function live(eventId: string, time: number): MemoryRecord | undefined {
    const record = records.get(eventId);
    if (record !== undefined && record.expiresAt <= time) {
      records.delete(eventId);
      return undefined;
    }
    return record;
  }

  // Amortised upkeep: a full sweep of expired records every few thousand claims, and on overflow the oldest
  // records go first (a Map iterates in insertion order), so no single claim ever walks the whole store.
  // Overflow evicts a batch, not one record per claim: a deleted Map entry stays a hole that every new iterator
  // skips until the table is rebuilt, so taking `keys().next()` on each claim at the cap grew to ~100 µs a claim.
  function trim(time: number): void {
    if (++claimsSinceSweep >= 4096) {
      claimsSinceSweep = 0;
      for (const [key, record] of records) if (record.expiresAt <= time) records.delete(key);
    }
    if (records.size > maxEntries) {
      let excess = records.size - maxEntries + evictionBatch;
      for (const key of records.keys()) {
        if (excess-- <= 0) break;
        records.delete(key);
      }
    }
  }

  function holds(record: MemoryRecord | undefined, token: string): record is MemoryRecord {
    return record !== undefined && record.state === 'in_progress' && record.token === token;
  }

  return {
    async claim(eventId: string, { leaseMs }: ClaimOptions): Promise<ClaimResult> {
      const time = now();
      const existing = live(eventId, time);
      if (existing) return existing.state === 'completed' ? COMPLETED : IN_PROGRESS;
      const token = createLeaseToken();
      records.set(eventId, { state: 'in_progress', token, expiresAt: time + leaseMs });
      trim(time);
      return { status: 'acquired', token };
    },
    async complete(eventId: string, token: string, { retainMs }: CompleteOptions): Promise<boolean> {
      const time = now();
      const existing = live(eventId, time);
      if (!holds(existing, token)) return false;
      existing.state = 'completed';
      existing.expiresAt = time + retainMs;
      return true;
    },
    async release(eventId: string, token: string): Promise<boolean> {
      if (!holds(live(eventId, now()), token)) return false;
      records.delete(eventId);
      return true;
    },
  };
}

const COMPLETED: ClaimResult = Object.freeze({ status: 'completed' });
const IN_PROGRESS: ClaimResult = Object.freeze({ status: 'in_progress' });
