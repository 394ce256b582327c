// The memory store's stream cursors and bounds, as a receiver with ordering on relies on them: in-order completion
// and its refusals, a cursor that never goes back, argument checks, the maxEntries bound on cursors, expiry, and
// listStreams. One case per test.
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from './memory-store.js';

const START = Date.UTC(2026, 10, 23, 9, 0, 0);
const LEASE = { leaseMs: 60_000 };
const RETAIN = 3_600_000;

function store(maxEntries?: number) {
  const clock = { now: START };
  const memory = createMemoryStore({ now: () => clock.now, ...(maxEntries ? { maxEntries } : {}) });
  return { memory, clock };
}

async function tokenFor(memory: ReturnType<typeof createMemoryStore>, eventId: string): Promise<string> {
  const claim = await memory.claim(eventId, LEASE);
  if (claim.status !== 'acquired') throw new Error(`expected to acquire ${eventId}`);
  return claim.token;
}

describe('completeInOrder', () => {
  it('completes the first seq of a new stream and moves its cursor', async () => {
    const { memory } = store();
    const outcome = await memory.completeInOrder('E0', await tokenFor(memory, 'E0'), {
      retainMs: RETAIN,
      streamId: 's',
      seq: 0,
      firstSeq: 0,
    });
    expect({ outcome, cursor: await memory.getCursor('s') }).toEqual({ outcome: 'completed', cursor: 0 });
  });

  it('answers cursor_moved for a seq that is not next, and moves nothing', async () => {
    const { memory } = store();
    const outcome = await memory.completeInOrder('E2', await tokenFor(memory, 'E2'), {
      retainMs: RETAIN,
      streamId: 's',
      seq: 2,
      firstSeq: 0,
    });
    expect({ outcome, cursor: await memory.getCursor('s') }).toEqual({ outcome: 'cursor_moved', cursor: null });
  });

  it('answers lease_lost for a token that holds no lease', async () => {
    const { memory } = store();
    await tokenFor(memory, 'E0');
    expect(
      await memory.completeInOrder('E0', 'not-the-token', { retainMs: RETAIN, streamId: 's', seq: 0, firstSeq: 0 }),
    ).toBe('lease_lost');
  });

  it('names cursorRetainMs when it is not a positive number', async () => {
    const { memory } = store();
    const token = await tokenFor(memory, 'E0');
    await expect(
      memory.completeInOrder('E0', token, { retainMs: RETAIN, cursorRetainMs: -1, streamId: 's', seq: 0, firstSeq: 0 }),
    ).rejects.toThrow(/^cursorRetainMs must be a positive number of milliseconds/);
  });

  it('refuses a seq that is not a whole number', async () => {
    const { memory } = store();
    const token = await tokenFor(memory, 'E0');
    await expect(
      memory.completeInOrder('E0', token, { retainMs: RETAIN, streamId: 's', seq: 1.5, firstSeq: 0 }),
    ).rejects.toBeInstanceOf(RangeError);
  });
});

describe('advanceCursor', () => {
  it('moves the cursor forward', async () => {
    const { memory } = store();
    expect({
      moved: await memory.advanceCursor('s', 3, { retainMs: RETAIN }),
      cursor: await memory.getCursor('s'),
    }).toEqual({ moved: true, cursor: 3 });
  });

  it('never moves it back or to where it is', async () => {
    const { memory } = store();
    await memory.advanceCursor('s', 3, { retainMs: RETAIN });
    expect([
      await memory.advanceCursor('s', 3, { retainMs: RETAIN }),
      await memory.advanceCursor('s', 2, { retainMs: RETAIN }),
      await memory.getCursor('s'),
    ]).toEqual([false, false, 3]);
  });

  it('names retainMs when it is not a positive number', async () => {
    const { memory } = store();
    await expect(memory.advanceCursor('s', 1, { retainMs: 0 })).rejects.toThrow(
      /^retainMs must be a positive number of milliseconds/,
    );
  });

  it('refuses a negative seq', async () => {
    const { memory } = store();
    await expect(memory.advanceCursor('s', -1, { retainMs: RETAIN })).rejects.toBeInstanceOf(RangeError);
  });

  it('refuses an empty stream id, as getCursor does', async () => {
    const { memory } = store();
    await expect(memory.getCursor('')).rejects.toBeInstanceOf(RangeError);
  });
});

describe('bounds', () => {
  it('keeps at most maxEntries cursors, dropping the oldest (and a batch of 1% more)', async () => {
    const { memory } = store(100);
    for (let i = 0; i < 101; i++) await memory.advanceCursor(`s${i}`, 1, { retainMs: RETAIN });
    expect([
      await memory.getCursor('s0'),
      await memory.getCursor('s1'),
      await memory.getCursor('s2'),
      await memory.getCursor('s100'),
    ]).toEqual([null, null, 1, 1]);
  });

  it('keeps exactly maxEntries cursors without dropping any', async () => {
    const { memory } = store(100);
    for (let i = 0; i < 100; i++) await memory.advanceCursor(`s${i}`, 1, { retainMs: RETAIN });
    expect(await memory.getCursor('s0')).toBe(1);
  });

  it('forgets a cursor once its retention passed', async () => {
    const { memory, clock } = store();
    await memory.advanceCursor('s', 1, { retainMs: 1_000 });
    clock.now += 1_000;
    expect(await memory.getCursor('s')).toBeNull();
  });

  it('sweeps expired records, so they do not push out a live one at maxEntries', async () => {
    const { memory, clock } = store(100);
    for (let i = 0; i < 100; i++)
      await memory.complete(`old${i}`, await tokenFor(memory, `old${i}`), { retainMs: 1_000 });
    clock.now += 3_600_000;
    await memory.complete('live', await tokenFor(memory, 'live'), { retainMs: RETAIN });
    for (let i = 0; i < 99; i++) await tokenFor(memory, `new${i}`);
    expect((await memory.claim('live', LEASE)).status).toBe('completed');
  });
});

describe('listStreams', () => {
  it('lists the streams active since a time, page by page', async () => {
    const { memory, clock } = store();
    await memory.advanceCursor('old', 1, { retainMs: RETAIN });
    clock.now += 10_000;
    await memory.advanceCursor('a', 1, { retainMs: RETAIN });
    await memory.advanceCursor('b', 2, { retainMs: RETAIN });
    const first = await memory.listStreams!({ activeSince: START + 5_000, limit: 1 });
    const second = await memory.listStreams!({
      activeSince: START + 5_000,
      limit: 1,
      ...(first.next ? { after: first.next } : {}),
    });
    const ids = [...first.streams, ...second.streams].map((stream) => stream.streamId).sort();
    expect({ ids, last: second.next }).toEqual({ ids: ['a', 'b'], last: undefined });
  });

  it('stops listing a stream at the very time its cursor expires, before any sweep', async () => {
    const { memory, clock } = store();
    await memory.advanceCursor('short', 1, { retainMs: 1_000 });
    await memory.advanceCursor('long', 1, { retainMs: RETAIN });
    clock.now += 1_000;
    const page = await memory.listStreams!({ activeSince: START, limit: 10 });
    expect(page.streams.map((stream) => stream.streamId)).toEqual(['long']);
  });

  it('lists streams active at one time by stream id', async () => {
    const { memory } = store();
    for (const id of ['d', 'b', 'e', 'a', 'c']) await memory.advanceCursor(id, 1, { retainMs: RETAIN });
    const page = await memory.listStreams!({ activeSince: START, limit: 10 });
    expect(page.streams.map((stream) => stream.streamId)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('pages by activity first: a later stream comes on the next page whatever its id', async () => {
    const { memory, clock } = store();
    await memory.advanceCursor('z', 1, { retainMs: RETAIN });
    clock.now += 1_000;
    await memory.advanceCursor('a', 2, { retainMs: RETAIN });
    const first = await memory.listStreams!({ activeSince: START, limit: 1 });
    expect(first.next).toBeDefined();
    const second = await memory.listStreams!({ activeSince: START, limit: 1, after: first.next! });
    expect([...first.streams, ...second.streams]).toEqual([
      { streamId: 'z', seq: 1, activeAt: START },
      { streamId: 'a', seq: 2, activeAt: START + 1_000 },
    ]);
  });
});
