import { optionRules } from '../option-rules.js';
import { validateOptions, type OptionsSpec } from '../option-validation.js';
import {
  createLeaseToken,
  isStoreDuration,
  storeDurationMs,
  type ClaimOptions,
  type ClaimResult,
  type CompleteOptions,
  type ExtendOptions,
} from './dedupe.js';
import {
  checkListStreamsOptions,
  checkSkipArguments,
  checkStreamArguments,
  checkStreamId,
  cursorRetention,
  inOrderCursorRetention,
  type SkippedSeq,
  type ListStreamsOptions,
  type StreamActivity,
  type StreamCursorStore,
  type StreamPage,
} from './stream-store.js';
import { readStreamPageToken, streamPageToken } from './stream-page-token.js';

/** An event claimed and not settled yet: the token that may settle it, until the lease ends. */
interface MemoryLease {
  token: string;
  expiresAt: number;
}

/**
 * A record: a lease while claimed, then only the time its completion expires. A completed record is most of a
 * full store (100,000 by default) and lives long, so it keeps no object of its own: with a lease object and its
 * token kept per completed event, a full store held 200,000 more objects in the old generation for every major GC
 * of a busy server to walk. In an Express server under load, claim + complete cost ~13 µs of CPU per delivery that
 * way and ~5 µs this way (paired runs; in process both are under 1 µs).
 */
type MemoryRecord = MemoryLease | number;

const expiryOf = (record: MemoryRecord): number => (typeof record === 'number' ? record : record.expiresAt);

interface MemoryCursor {
  seq: number;
  expiresAt: number;
  /** When the cursor was last written, for listStreams. */
  activeAt: number;
}

/** Expired records are dropped on lookup anyway; the sweep only returns their memory, so once a minute is plenty. */
const SWEEP_INTERVAL_MS = 60_000;

const MEMORY_STORE_SPEC: OptionsSpec = {
  owner: 'createMemoryStore',
  example: 'createMemoryStore({ maxEntries: 100_000 })',
  options: {
    now: optionRules.func('a clock in milliseconds, like Date.now'),
    maxEntries: optionRules.positiveInteger(),
  },
  aliases: {
    max: 'maxEntries',
    maxSize: 'maxEntries',
    capacity: 'maxEntries',
    limit: 'maxEntries',
    maxKeys: 'maxEntries',
    clock: 'now',
  },
};

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /** Clock in milliseconds; defaults to `Date.now`. */
  now?: () => number;
  /**
   * Most records kept. Once exceeded, the oldest are dropped first, 1% of the cap at a time so that eviction stays
   * cheap. A lease still held (an event whose handler is running) is never dropped, so the store can pass the cap by
   * the events in flight. Default 100,000.
   */
  maxEntries?: number;
}

/**
 * The built-in memory store: a {@link StreamCursorStore} whose claim, complete and release answer with values, not
 * promises (nothing to wait for in one process), so the receiver spends no promise or deadline timer on them.
 * `await` works on them as on any store.
 *
 * @example
 * ```ts
 * const store: MemoryStore = createMemoryStore()
 * const claim = store.claim('01J9Z3…', { leaseMs: 60_000 }) // { status: 'acquired', token } at once
 * ```
 */
export interface MemoryStore extends StreamCursorStore {
  claim(eventId: string, options: ClaimOptions): ClaimResult;
  complete(eventId: string, token: string, options: CompleteOptions): boolean;
  release(eventId: string, token: string): boolean;
  extend(eventId: string, token: string, options: ExtendOptions): boolean;
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
export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  validateOptions(options, MEMORY_STORE_SPEC);
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? 100_000;
  const { records, cursors, skips, live, trim, lease, cursorOf, setCursor } = createMemoryTables(maxEntries);
  // A lease token is this store's random prefix plus a counter: as unguessable and unique as a random UUID per
  // claim (no two stores share a prefix), which cost several µs per delivery under HTTP load (the bench's HTTP section).
  // Made on the first claim, not here: Cloudflare Workers forbid random values in global scope, where a receiver (and
  // its default memory store) is commonly created.
  let tokenPrefix: string | undefined;
  let leaseCount = 0;

  // claim, complete and release answer synchronously (the DedupeStore contract allows it): the receiver then spends
  // no promise, microtask or deadline timer on them, which an in-process store does not need. Durations are checked
  // on every call: the receiver passes checked ones, a direct caller may not (a NaN lease would never expire).
  const store: MemoryStore = {
    claim(eventId: string, { leaseMs }: ClaimOptions): ClaimResult {
      if (!isStoreDuration(leaseMs)) storeDurationMs('leaseMs', leaseMs);
      const time = now();
      const existing = live(eventId, time);
      if (existing !== undefined) return typeof existing === 'number' ? COMPLETED : IN_PROGRESS;
      const token = `${(tokenPrefix ??= createLeaseToken())}.${++leaseCount}`;
      records.set(eventId, { token, expiresAt: time + leaseMs });
      trim(time);
      return { status: 'acquired', token };
    },
    complete(eventId: string, token: string, { retainMs }: CompleteOptions): boolean {
      if (!isStoreDuration(retainMs)) storeDurationMs('retainMs', retainMs);
      const time = now();
      if (!lease(eventId, token, time)) return false;
      // Same key: the Map keeps the claim's position, so eviction order stays the order of claims.
      records.set(eventId, time + retainMs);
      return true;
    },
    release(eventId: string, token: string): boolean {
      if (!lease(eventId, token, now())) return false;
      records.delete(eventId);
      return true;
    },
    extend(eventId: string, token: string, { leaseMs }: ExtendOptions): boolean {
      if (!isStoreDuration(leaseMs)) storeDurationMs('leaseMs', leaseMs);
      const time = now();
      const held = lease(eventId, token, time);
      if (!held) return false;
      held.expiresAt = time + leaseMs;
      return true;
    },
    async getCursor(streamId) {
      checkStreamId(streamId);
      return cursorOf(streamId, now());
    },
    // Synchronous from the lease check to both writes: nothing can interleave, which is this store's atomicity.
    async completeInOrder(eventId, token, options) {
      const { retainMs, streamId, seq, firstSeq } = options;
      checkStreamArguments(streamId, seq, firstSeq);
      const cursorRetainMs = storeDurationMs('cursorRetainMs', inOrderCursorRetention(options));
      const time = now();
      if (!lease(eventId, token, time)) return 'lease_lost';
      const cursor = cursorOf(streamId, time);
      if (cursor === null ? seq !== firstSeq : cursor !== seq - 1) return 'cursor_moved';
      records.set(eventId, time + retainMs);
      setCursor(streamId, seq, time + cursorRetainMs, time);
      return 'completed';
    },
    async advanceCursor(streamId, seq, advance) {
      checkStreamArguments(streamId, seq);
      const retainMs = storeDurationMs('retainMs', cursorRetention(advance));
      const time = now();
      const cursor = cursorOf(streamId, time);
      if (cursor !== null && cursor >= seq) return false;
      setCursor(streamId, seq, time + retainMs, time);
      return true;
    },
    // Synchronous from the cursor check to both writes, as completeInOrder.
    async skipSeq(streamId, seq, options) {
      const { firstSeq } = checkSkipArguments(streamId, seq, options);
      const retainMs = storeDurationMs('retainMs', options.retainMs);
      const time = now();
      const cursor = cursorOf(streamId, time);
      if (cursor === null ? seq !== firstSeq : cursor !== seq - 1) return false;
      const skip: SkippedSeq & { expiresAt: number } = {
        seq,
        reason: options.reason,
        skippedAt: time,
        expiresAt: time + retainMs,
      };
      if (options.eventId !== undefined) skip.eventId = options.eventId;
      const list = (skips.get(streamId) ?? []).filter((earlier) => earlier.expiresAt > time && earlier.seq !== seq);
      list.push(skip);
      skips.set(streamId, list);
      setCursor(streamId, seq, time + retainMs, time);
      return true;
    },
    async listSkips(streamId) {
      checkStreamId(streamId);
      const time = now();
      return (skips.get(streamId) ?? [])
        .filter((skip) => skip.expiresAt > time)
        .sort((a, b) => a.seq - b.seq)
        .map(({ expiresAt: _expiresAt, ...skip }) => skip);
    },
    async listStreams(options) {
      return listActiveStreams(cursors, options, now());
    },
  };
  return store;
}

/** A page of {@link StreamCursorStore.listStreams} from the live cursors, oldest activity first. */
function listActiveStreams(
  cursors: ReadonlyMap<string, MemoryCursor>,
  options: ListStreamsOptions,
  time: number,
): StreamPage {
  const { activeSince, limit, after } = checkListStreamsOptions(options);
  const from = after === undefined ? undefined : readStreamPageToken(after);
  // A scan and a sort per page: listing is the rare recovery path, and the cursors are capped at maxEntries.
  const active: StreamActivity[] = [];
  for (const [streamId, cursor] of cursors) {
    if (cursor.expiresAt <= time || cursor.activeAt < activeSince) continue;
    if (from && (cursor.activeAt < from.activeAt || (cursor.activeAt === from.activeAt && streamId <= from.streamId)))
      continue;
    active.push({ streamId, seq: cursor.seq, activeAt: cursor.activeAt });
  }
  active.sort((a, b) => a.activeAt - b.activeAt || (a.streamId < b.streamId ? -1 : a.streamId > b.streamId ? 1 : 0));
  const streams = active.slice(0, limit);
  const last = streams[streams.length - 1];
  return { streams, next: active.length > limit && last ? streamPageToken(last.activeAt, last.streamId) : undefined };
}

/** The tables of one memory store and their upkeep: event records, stream cursors and skips, bounded by `maxEntries`. */
interface MemoryTables {
  records: Map<string, MemoryRecord>;
  cursors: Map<string, MemoryCursor>;
  skips: Map<string, (SkippedSeq & { expiresAt: number })[]>;
  /** The record of `eventId` unless it expired, which is dropped on the way. */
  live(eventId: string, time: number): MemoryRecord | undefined;
  /** Amortised upkeep: a sweep of expired entries at most once a minute, and eviction of the oldest on overflow. */
  trim(time: number): void;
  /** The unexpired lease `token` holds on `eventId`, or undefined. */
  lease(eventId: string, token: string, time: number): MemoryLease | undefined;
  /** The unexpired cursor of `streamId`'s seq, or null. */
  cursorOf(streamId: string, time: number): number | null;
  /** Set a cursor, re-inserted so that the Map's order stays oldest-first for eviction. */
  setCursor(streamId: string, seq: number, expiresAt: number, time: number): void;
}

function createMemoryTables(maxEntries: number): MemoryTables {
  // 1% of the cap (1,000 by default) beyond the overflow is evicted at once.
  const evictionBatch = Math.floor(maxEntries / 100);
  // A Map keeps insertion order, so the first keys are the oldest when trimming. A record keeps the position of
  // its claim when it completes (a lease is short next to the retention), which spares a delete and re-insert.
  const records = new Map<string, MemoryRecord>();
  // Stream cursors, kept apart from the records so that a stream id can never be mistaken for an event id. Only
  // completeInOrder (after a claim, so for authenticated events) and advanceCursor write them; the same cap bounds them.
  const cursors = new Map<string, MemoryCursor>();
  // Skips recorded by skipSeq, per stream: written only when onUnfillable decided for an authenticated delivery, so
  // few; each expires with the retention it was written with, and a stream's list goes when its cursor is evicted.
  const skips = new Map<string, (SkippedSeq & { expiresAt: number })[]>();
  let nextSweepAt = 0;
  // After an eviction pass that found only running handlers' leases, the size the store must reach before the next.
  let evictAgainAt = 0;

  /** The record of `eventId` unless it expired, which is dropped on the way. */
  function live(eventId: string, time: number): MemoryRecord | undefined {
    const record = records.get(eventId);
    if (record !== undefined && expiryOf(record) <= time) {
      records.delete(eventId);
      return undefined;
    }
    return record;
  }

  // Amortised upkeep, so no single claim walks the whole store: a sweep of expired records at most once a minute,
  // and on overflow the oldest records go first (a Map iterates in insertion order). Overflow evicts a batch, not
  // one record per claim: a deleted Map entry stays a hole that every new iterator skips until the table is
  // rebuilt, so taking `keys().next()` on each claim at the cap grew to ~100 µs a claim.
  // Each pass is a function of its own: a claim runs the three checks and rarely a pass, and the JIT compiles a
  // function whole, so loops inside trim were compiled into the code every claim runs (docs/architecture.md §11).
  function trim(time: number): void {
    if (time >= nextSweepAt) sweep(time);
    if (cursors.size > maxEntries) evictCursors();
    if (records.size > maxEntries && records.size >= evictAgainAt) evictRecords(time);
  }

  function sweep(time: number): void {
    nextSweepAt = time + SWEEP_INTERVAL_MS;
    for (const [eventId, record] of records) if (expiryOf(record) <= time) records.delete(eventId);
    for (const [streamId, cursor] of cursors) if (cursor.expiresAt <= time) cursors.delete(streamId);
    for (const [streamId, list] of skips) {
      const live = list.filter((skip) => skip.expiresAt > time);
      if (live.length === 0) skips.delete(streamId);
      else skips.set(streamId, live);
    }
  }

  function evictCursors(): void {
    let excess = cursors.size - maxEntries + evictionBatch;
    for (const streamId of cursors.keys()) {
      if (excess-- <= 0) break;
      cursors.delete(streamId);
      skips.delete(streamId);
    }
  }

  function evictRecords(time: number): void {
    let excess = records.size - maxEntries + evictionBatch;
    const held: [string, MemoryLease][] = [];
    for (const [eventId, record] of records) {
      if (excess <= 0) break;
      // A lease still held is a handler still running: dropping it would let a redelivery run the event beside
      // it and lose its completion. It moves to the back instead, so the next pass does not walk it again.
      if (typeof record === 'object' && record.expiresAt > time) held.push([eventId, record]);
      else excess--;
      records.delete(eventId);
    }
    for (const [eventId, lease] of held) records.set(eventId, lease);
    // Full of running handlers: walking the map on every claim would cost O(n) each; wait for another batch first.
    evictAgainAt = excess > 0 ? records.size + evictionBatch : 0;
  }

  /**
   * The unexpired lease `token` holds on `eventId`, or undefined. Settling looks the record up in the big map again:
   * it was touched by the claim a moment ago, so the lookup is cheap, and a second map of leases cost more to keep.
   */
  function lease(eventId: string, token: string, time: number): MemoryLease | undefined {
    const record = live(eventId, time);
    return typeof record === 'object' && record.token === token ? record : undefined;
  }

  /** The unexpired cursor of `streamId`'s seq, or null. */
  function cursorOf(streamId: string, time: number): number | null {
    const cursor = cursors.get(streamId);
    return cursor !== undefined && cursor.expiresAt > time ? cursor.seq : null;
  }

  /** Set a cursor, re-inserted so that the Map's order stays oldest-first for eviction. */
  function setCursor(streamId: string, seq: number, expiresAt: number, time: number): void {
    cursors.delete(streamId);
    cursors.set(streamId, { seq, expiresAt, activeAt: time });
    trim(time);
  }

  return { records, cursors, skips, live, trim, lease, cursorOf, setCursor };
}

const COMPLETED: ClaimResult = Object.freeze({ status: 'completed' });
const IN_PROGRESS: ClaimResult = Object.freeze({ status: 'in_progress' });
