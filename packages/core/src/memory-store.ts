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
  /** Most records kept; the oldest are dropped first once exceeded. Default 100,000. */
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
  // A Map keeps insertion order, so the first keys are the oldest when trimming.
  const records = new Map<string, MemoryRecord>();

  function live(eventId: string): MemoryRecord | undefined {
    const record = records.get(eventId);
    if (record && record.expiresAt <= now()) {
      records.delete(eventId);
      return undefined;
    }
    return record;
  }

  let claimsSinceSweep = 0;

  // Amortised upkeep: a full sweep of expired records every few thousand claims, and on overflow the oldest
  // records go first (a Map iterates in insertion order), so no single claim ever walks the whole store.
  function trim(): void {
    if (++claimsSinceSweep >= 4096) {
      claimsSinceSweep = 0;
      const time = now();
      for (const [key, record] of records) if (record.expiresAt <= time) records.delete(key);
    }
    while (records.size > maxEntries) records.delete(records.keys().next().value as string);
  }

  return {
    async claim(eventId: string, { leaseMs }: ClaimOptions): Promise<ClaimResult> {
      const existing = live(eventId);
      if (existing) return { status: existing.state };
      const token = createLeaseToken();
      records.set(eventId, { state: 'in_progress', token, expiresAt: now() + leaseMs });
      trim();
      return { status: 'acquired', token };
    },
    async complete(eventId: string, token: string, { retainMs }: CompleteOptions): Promise<boolean> {
      const existing = live(eventId);
      if (!existing || existing.state !== 'in_progress' || existing.token !== token) return false;
      records.delete(eventId); // re-insert so retention order follows completion time
      records.set(eventId, { state: 'completed', token, expiresAt: now() + retainMs });
      return true;
    },
    async release(eventId: string, token: string): Promise<boolean> {
      const existing = live(eventId);
      if (!existing || existing.state !== 'in_progress' || existing.token !== token) return false;
      records.delete(eventId);
      return true;
    },
  };
}
