// The memory store's skips, as listSkips shows them: recorded as given, by seq, until their retention ends, once
// per seq, and gone with their stream's cursor when the maxEntries bound drops it.
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from './memory-store.js';

const RETAIN = 3_600_000;

function store(maxEntries?: number) {
  const clock = { now: 0 };
  const memory = createMemoryStore({ now: () => clock.now, ...(maxEntries ? { maxEntries } : {}) });
  return { memory, clock };
}

describe('listSkips', () => {
  it('returns a skip without an eventId when none was given', async () => {
    const { memory } = store();
    expect(await memory.skipSeq!('s', 0, { reason: 'purged', retainMs: RETAIN })).toBe(true);
    const [skip] = await memory.listSkips!('s');
    expect(skip).toStrictEqual({ seq: 0, reason: 'purged', skippedAt: 0 });
  });

  it('stops listing a skip once its retention passed, before any sweep', async () => {
    const { memory, clock } = store();
    await memory.skipSeq!('s', 0, { reason: 'purged', retainMs: 1_000, eventId: 'E0' });
    clock.now = 999;
    expect(await memory.listSkips!('s')).toEqual([{ seq: 0, reason: 'purged', eventId: 'E0', skippedAt: 0 }]);
    clock.now = 1_000;
    expect(await memory.listSkips!('s')).toEqual([]);
  });

  it('lists by seq a stream that restarted lower after its cursor expired', async () => {
    const { memory, clock } = store();
    // A stream numbered from 1 skips its seq 1 for long; its cursor then moves on for a second only.
    await memory.skipSeq!('s', 1, { reason: 'first', retainMs: RETAIN, firstSeq: 1 });
    await memory.advanceCursor('s', 2, { retainMs: 1_000 });
    clock.now = 1_000;
    // No cursor any more: the stream starts again, from 0 this time, and skips it.
    expect(await memory.skipSeq!('s', 0, { reason: 'second', retainMs: RETAIN, firstSeq: 0 })).toBe(true);
    expect((await memory.listSkips!('s')).map((skip) => [skip.seq, skip.reason])).toEqual([
      [0, 'second'],
      [1, 'first'],
    ]);
  });

  it('keeps one skip per seq: skipped again after its cursor expired, the newer decision replaces the older', async () => {
    const { memory, clock } = store();
    await memory.skipSeq!('s', 0, { reason: 'first', retainMs: RETAIN });
    await memory.advanceCursor('s', 1, { retainMs: 1_000 });
    clock.now = 1_000;
    expect(await memory.skipSeq!('s', 0, { reason: 'second', retainMs: RETAIN })).toBe(true);
    expect(await memory.listSkips!('s')).toEqual([{ seq: 0, reason: 'second', skippedAt: 1_000 }]);
  });

  it('forgets the skips of a stream whose cursor the maxEntries bound dropped', async () => {
    const { memory } = store(100);
    await memory.skipSeq!('s0', 0, { reason: 'purged', retainMs: RETAIN });
    for (let i = 1; i <= 100; i++) await memory.advanceCursor(`s${i}`, 1, { retainMs: RETAIN });
    expect({ cursor: await memory.getCursor('s0'), skips: await memory.listSkips!('s0') }).toEqual({
      cursor: null,
      skips: [],
    });
  });

  it('refuses an empty stream id, as getCursor does', async () => {
    const { memory } = store();
    await expect(memory.listSkips!('')).rejects.toBeInstanceOf(RangeError);
  });
});

describe('skipSeq', () => {
  it('names retainMs when it is beyond what a store keeps', async () => {
    const { memory } = store();
    await expect(memory.skipSeq!('s', 0, { reason: 'purged', retainMs: Infinity })).rejects.toThrow(
      /^retainMs must be a positive number of milliseconds/,
    );
  });
});
