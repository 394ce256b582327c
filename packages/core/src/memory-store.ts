import { createLeaseToken, type ClaimOptions, type ClaimResult, type CompleteOptions, type DedupeStore } from './dedupe.js';

interface MemoryRecord {
  eventId: string;
  state: 'in_progress' | 'completed';
  token: string;
  expiresAt: number;
  /** Set when the record left the map (expired, evicted, released), so a lease token can tell without a lookup. */
  dropped: boolean;
}

/** Expired records are dropped on lookup anyway; the sweep only returns their memory, so once a minute is plenty. */
const SWEEP_INTERVAL_MS = 60_000;

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
  // Leases not yet completed or released, by token: completing one is a lookup in this small map instead of the
  // big one, which matters on every delivery once the store holds 100k records.
  const leases = new Map<string, MemoryRecord>();
  let nextSweepAt = 0;

  function drop(record: MemoryRecord): void {
    records.delete(record.eventId);
    record.dropped = true;
  }

  /** The record of `eventId` unless it expired, which is dropped on the way. */
  function live(eventId: string, time: number): MemoryRecord | undefined {
    const record = records.get(eventId);
    if (record !== undefined && record.expiresAt <= time) {
      drop(record);
      return undefined;
    }
    return record;
  }

  // Amortised upkeep, so no single claim walks the whole store: a sweep of expired records (and of leases nobody
  // settled) at most once a minute, and on overflow the oldest records go first (a Map iterates in insertion order).
  // Overflow evicts a batch, not one record per claim: a deleted Map entry stays a hole that every new iterator
  // skips until the table is rebuilt, so taking `keys().next()` on each claim at the cap grew to ~100 µs a claim.
  function trim(time: number): void {
    if (time >= nextSweepAt) {
      nextSweepAt = time + SWEEP_INTERVAL_MS;
      for (const record of records.values()) if (record.expiresAt <= time) drop(record);
      for (const [token, record] of leases) if (record.dropped || record.expiresAt <= time) leases.delete(token);
    }
    if (records.size > maxEntries) {
      let excess = records.size - maxEntries + evictionBatch;
      for (const record of records.values()) {
        if (excess-- <= 0) break;
        drop(record);
      }
    }
  }

  /** The unexpired lease `token` holds on `eventId`, taken out of the lease map; undefined when it holds none. */
  function takeLease(eventId: string, token: string, time: number): MemoryRecord | undefined {
    const record = leases.get(token);
    if (record === undefined || record.eventId !== eventId) return undefined;
    leases.delete(token);
    if (record.dropped) return undefined;
    if (record.expiresAt <= time) {
      drop(record);
      return undefined;
    }
    return record;
  }

  return {
    async claim(eventId: string, { leaseMs }: ClaimOptions): Promise<ClaimResult> {
      const time = now();
      const existing = live(eventId, time);
      if (existing) return existing.state === 'completed' ? COMPLETED : IN_PROGRESS;
      const token = createLeaseToken();
      const record: MemoryRecord = { eventId, state: 'in_progress', token, expiresAt: time + leaseMs, dropped: false };
      records.set(eventId, record);
      leases.set(token, record);
      trim(time);
      return { status: 'acquired', token };
    },
    async complete(eventId: string, token: string, { retainMs }: CompleteOptions): Promise<boolean> {
      const time = now();
      const record = takeLease(eventId, token, time);
      if (!record) return false;
      record.state = 'completed';
      record.expiresAt = time + retainMs;
      return true;
    },
    async release(eventId: string, token: string): Promise<boolean> {
      const record = takeLease(eventId, token, now());
      if (!record) return false;
      drop(record);
      return true;
    },
  };
}

const COMPLETED: ClaimResult = Object.freeze({ status: 'completed' });
const IN_PROGRESS: ClaimResult = Object.freeze({ status: 'in_progress' });
