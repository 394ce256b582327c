// The memory store under its maxEntries bound: which records and cursors the minute sweep returns, and which ones
// overflow drops first (the oldest by claim or by last advance, never a running handler's lease, and, once the store
// is full of running handlers, only after a batch more arrived). Every outcome is read back through claim and getCursor.
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from './memory-store.js';

const LONG = 3_600_000;

function store(maxEntries: number, start = 0) {
  const clock = { now: start };
  const memory = createMemoryStore({ now: () => clock.now, maxEntries });
  return { memory, clock };
}

type Memory = ReturnType<typeof createMemoryStore>;

async function lease(memory: Memory, eventId: string, leaseMs = 60_000): Promise<string> {
  const claim = await memory.claim(eventId, { leaseMs });
  if (claim.status !== 'acquired') throw new Error(`expected to acquire ${eventId}, got ${claim.status}`);
  return claim.token;
}

async function settle(memory: Memory, eventId: string, retainMs = LONG): Promise<void> {
  expect(await memory.complete(eventId, await lease(memory, eventId), { retainMs })).toBe(true);
}

async function status(memory: Memory, eventId: string): Promise<string> {
  return (await memory.claim(eventId, { leaseMs: 60_000 })).status;
}

describe('the sweep', () => {
  it('drops records whose retention ends at the sweep, so they push out no older live record', async () => {
    // The first claim (at 1s) sweeps and sets the next sweep a minute later, at 61s.
    const { memory, clock } = store(100, 1_000);
    await settle(memory, 'live');
    for (let i = 0; i < 50; i++) await settle(memory, `old${i}`, 60_000); // expire at 61s
    clock.now = 61_000;
    await settle(memory, 'trigger'); // sweeps: the 50 are gone, 'live' and 'trigger' remain
    for (let i = 0; i < 98; i++) await settle(memory, `new${i}`);
    // 100 live records, none over the cap: the oldest, 'live', is still known.
    expect(await status(memory, 'live')).toBe('completed');
  });

  it('drops cursors whose retention ends at the sweep, so they push out no older live cursor', async () => {
    const { memory, clock } = store(100, 1_000);
    await memory.advanceCursor('live', 1, { retainMs: LONG });
    for (let i = 0; i < 50; i++) await memory.advanceCursor(`old${i}`, 1, { retainMs: 60_000 }); // expire at 61s
    clock.now = 61_000;
    await memory.advanceCursor('trigger', 1, { retainMs: LONG });
    for (let i = 0; i < 98; i++) await memory.advanceCursor(`new${i}`, 1, { retainMs: LONG });
    expect(await memory.getCursor('live')).toBe(1);
  });
});

describe('eviction order', () => {
  it('counts a record claimed again after its lease ended as new, not by its first claim', async () => {
    const { memory, clock } = store(3);
    await lease(memory, 'A', 100); // its handler died: the lease ends at 100
    await settle(memory, 'B');
    await settle(memory, 'C');
    clock.now = 200;
    await settle(memory, 'A'); // redelivered and completed: now the newest
    await settle(memory, 'D'); // over the cap by one: the oldest, B, goes
    // (Read last, B's fresh claim would itself overflow the cap.)
    expect([await status(memory, 'A'), await status(memory, 'C'), await status(memory, 'B')]).toEqual([
      'completed',
      'completed',
      'acquired',
    ]);
  });

  it('counts a cursor advanced again as the newest, so the next overflow spares it', async () => {
    const { memory } = store(100);
    for (let i = 0; i < 100; i++) await memory.advanceCursor(`s${i}`, 1, { retainMs: LONG });
    await memory.advanceCursor('s0', 2, { retainMs: LONG });
    await memory.advanceCursor('s100', 1, { retainMs: LONG }); // the overflow plus a batch of 1: s1 and s2 go
    expect([
      await memory.getCursor('s0'),
      await memory.getCursor('s1'),
      await memory.getCursor('s2'),
      await memory.getCursor('s3'),
    ]).toEqual([2, null, null, 1]);
  });

  it('drops a lease that ends at the very time of the overflow before any completed record', async () => {
    const { memory, clock } = store(3);
    await lease(memory, 'A', 100); // ends at 100
    await settle(memory, 'B');
    await settle(memory, 'C');
    clock.now = 100;
    await settle(memory, 'D'); // over the cap by one: the ended lease goes, B stays
    expect([await status(memory, 'B'), await status(memory, 'C'), await status(memory, 'D')]).toEqual([
      'completed',
      'completed',
      'completed',
    ]);
  });
});

describe('full of running handlers', () => {
  it('evicts again only once a batch (1% of the cap) more records arrived', async () => {
    const { memory } = store(1_000);
    const tokens: string[] = [];
    for (let i = 0; i < 1_001; i++) tokens.push(await lease(memory, `L${i}`)); // a pass found only leases
    expect(await memory.complete('L0', tokens[0]!, { retainMs: LONG })).toBe(true);
    // 1,001 + 9 records: under the 1,011 the store waits for, so nothing is walked or dropped, L0 stays known.
    for (let i = 0; i < 9; i++) await lease(memory, `X${i}`);
    expect(await status(memory, 'L0')).toBe('completed');
    // The 1,011th: the next pass drops the one record not running, L0 (the leases stay).
    await lease(memory, 'X9');
    expect([await status(memory, 'L0'), await status(memory, 'L1'), await status(memory, 'X9')]).toEqual([
      'acquired',
      'in_progress',
      'in_progress',
    ]);
  });

  it('keeps only the records it was given: an id never claimed is still free after the leases were moved', async () => {
    const { memory } = store(3);
    for (const id of ['A', 'B', 'C', 'D']) await lease(memory, id); // a pass moved every lease to the back
    expect([await status(memory, 'S'), await status(memory, 'A'), await status(memory, 'D')]).toEqual([
      'acquired',
      'in_progress',
      'in_progress',
    ]);
  });
});
