// Memory the memory store gives back, in bytes of heap after full collections (as receiver.memory.test.ts measures):
// skips are invisible to listSkips once their retention ends, and the minute sweep must also let go of them, or a
// store that outlives many streams would keep every reason it was ever given.
import { describe, expect, it } from 'vitest';
import { heapAfterCollection } from '../../test-heap.js';
import { createMemoryStore } from './memory-store.js';

const STREAMS = 4_000;
/** A reason of 500 two-byte characters: about 1 KB of heap, so the skips' reasons dominate what is measured. */
const reason = (i: number) => `${i} `.padEnd(500, '→');

describe('memory store, memory', () => {
  it('gives back the skips whose retention ended at the sweep, whether or not their stream goes on', async () => {
    const clock = { now: 1_000 };
    const store = createMemoryStore({ now: () => clock.now }); // the next sweep is at 61s
    for (let i = 0; i < STREAMS; i++) {
      // Every stream skips seq 0 until 61s; every other one then skips seq 1 for an hour (its cursor stays too).
      await store.skipSeq!(`s${i}`, 0, { reason: reason(i), retainMs: 60_000 });
      if (i % 2 === 1) await store.skipSeq!(`s${i}`, 1, { reason: 'kept', retainMs: 3_600_000 });
    }
    const before = heapAfterCollection();
    clock.now = 61_000;
    await store.claim('trigger', { leaseMs: 1_000 }); // sweeps
    const freed = before - heapAfterCollection();
    // At least the 4,000 reasons of about 1 KB each, less a margin for what the collections move.
    expect(freed).toBeGreaterThan(STREAMS * 900);
    expect(await store.listSkips!('s1')).toEqual([{ seq: 1, reason: 'kept', skippedAt: 1_000 }]);
  });

  it('gives back every trace of the streams whose skips and cursors all ended', async () => {
    const clock = { now: 1_000 };
    const store = createMemoryStore({ now: () => clock.now }); // the next sweep is at 61s
    await store.claim('first', { leaseMs: 1_000 });
    const before = heapAfterCollection();
    for (let i = 0; i < 20_000; i++) await store.skipSeq!(`stream-${i}`, 0, { reason: 'gone', retainMs: 60_000 });
    clock.now = 61_000;
    await store.claim('trigger', { leaseMs: 1_000 }); // sweeps
    const kept = heapAfterCollection() - before;
    // Measured: about 28 KB kept of the 20,000 streams (Map and heap slack); a stream's empty list costs ~110 bytes.
    expect(kept).toBeLessThan(20_000 * 20);
    expect(await store.listSkips!('stream-0')).toEqual([]);
  });
});
