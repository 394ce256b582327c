import { describe, expect, it } from 'vitest';
import { createMemoryStore } from './memory-store.js';

describe('memory store', () => {
  it('claims once, then reports in_progress, then completed after complete()', async () => {
    const store = createMemoryStore();
    const first = await store.claim('A', { leaseMs: 1000 });
    expect(first.status).toBe('acquired');
    expect(await store.claim('A', { leaseMs: 1000 })).toEqual({ status: 'in_progress' });
    if (first.status !== 'acquired') throw new Error('unreachable');
    expect(await store.complete('A', 'not-the-token', { retainMs: 1000 })).toBe(false);
    expect(await store.complete('A', first.token, { retainMs: 1000 })).toBe(true);
    expect(await store.claim('A', { leaseMs: 1000 })).toEqual({ status: 'completed' });
  });

  it('lets an expired lease be claimed again and refuses the old token afterwards', async () => {
    let now = 0;
    const store = createMemoryStore({ now: () => now });
    const first = await store.claim('A', { leaseMs: 100 });
    now = 100;
    const second = await store.claim('A', { leaseMs: 100 });
    expect(second.status).toBe('acquired');
    if (first.status !== 'acquired' || second.status !== 'acquired') throw new Error('unreachable');
    expect(second.token).not.toBe(first.token);
    expect(await store.complete('A', first.token, { retainMs: 100 })).toBe(false);
    expect(await store.release('A', first.token)).toBe(false);
    expect(await store.release('A', second.token)).toBe(true);
    expect((await store.claim('A', { leaseMs: 100 })).status).toBe('acquired');
  });

  it('forgets completed records after their retention', async () => {
    let now = 0;
    const store = createMemoryStore({ now: () => now });
    const claim = await store.claim('A', { leaseMs: 100 });
    if (claim.status !== 'acquired') throw new Error('unreachable');
    await store.complete('A', claim.token, { retainMs: 1000 });
    now = 999;
    expect((await store.claim('A', { leaseMs: 100 })).status).toBe('completed');
    now = 1000;
    expect((await store.claim('A', { leaseMs: 100 })).status).toBe('acquired');
  });

  it('stays within maxEntries by dropping the oldest records', async () => {
    const store = createMemoryStore({ maxEntries: 3 });
    for (const id of ['A', 'B', 'C', 'D']) {
      const claim = await store.claim(id, { leaseMs: 10_000 });
      if (claim.status === 'acquired') await store.complete(id, claim.token, { retainMs: 60_000 });
    }
    expect((await store.claim('A', { leaseMs: 10_000 })).status).toBe('acquired');
    expect((await store.claim('D', { leaseMs: 10_000 })).status).toBe('completed');
  });

  it('never evicts a lease still held: a redelivery during the handler is in_progress, and its completion counts', async () => {
    let time = 0;
    const store = createMemoryStore({ maxEntries: 100, now: () => time });
    const running = await store.claim('RUNNING', { leaseMs: 60_000 });
    if (running.status !== 'acquired') throw new Error('expected a lease');
    for (let i = 0; i < 300; i++) {
      time += 1;
      const claim = await store.claim(`E${i}`, { leaseMs: 60_000 });
      if (claim.status === 'acquired') await store.complete(`E${i}`, claim.token, { retainMs: 600_000 });
    }
    expect((await store.claim('RUNNING', { leaseMs: 60_000 })).status).toBe('in_progress');
    expect(await store.complete('RUNNING', running.token, { retainMs: 600_000 })).toBe(true);
    expect((await store.claim('RUNNING', { leaseMs: 60_000 })).status).toBe('completed');
    // The completed ones still go oldest first; only the lease was spared.
    expect((await store.claim('E0', { leaseMs: 60_000 })).status).toBe('acquired');
  });

  it('full of running handlers, still acquires new claims, and evicts again once their leases ended', async () => {
    let time = 0;
    const store = createMemoryStore({ maxEntries: 100, now: () => time });
    for (let i = 0; i < 150; i++) expect((await store.claim(`L${i}`, { leaseMs: 1_000 })).status).toBe('acquired');
    // Every lease is held: none was dropped, so each is still in progress.
    for (const id of ['L0', 'L75', 'L149'])
      expect((await store.claim(id, { leaseMs: 1_000 })).status).toBe('in_progress');
    time += 2_000; // the leases end (their handlers crashed)
    for (let i = 0; i < 300; i++) {
      const claim = await store.claim(`E${i}`, { leaseMs: 1_000 });
      if (claim.status === 'acquired') await store.complete(`E${i}`, claim.token, { retainMs: 600_000 });
    }
    // Back within the cap: the oldest completed records went again, the newest stayed.
    expect((await store.claim('E0', { leaseMs: 1_000 })).status).toBe('acquired');
    expect((await store.claim('E299', { leaseMs: 1_000 })).status).toBe('completed');
  });

  it('at a large cap, evicts the oldest 1% at once and keeps every newer record', async () => {
    const store = createMemoryStore({ maxEntries: 1000 });
    const settle = async (id: string) => {
      const claim = await store.claim(id, { leaseMs: 10_000 });
      if (claim.status === 'acquired') await store.complete(id, claim.token, { retainMs: 60_000 });
    };
    for (let i = 0; i < 1001; i++) await settle(`E${i}`);
    // 1001 > 1000: the overflow plus a batch of 10 went, E0 … E10; E11 onwards are still known.
    for (const id of ['E0', 'E10']) expect((await store.claim(id, { leaseMs: 10_000 })).status).toBe('acquired');
    for (const id of ['E11', 'E500', 'E1000'])
      expect((await store.claim(id, { leaseMs: 10_000 })).status).toBe('completed');
  });

  it('settles a lease only for its own event, once, and never after the record left', async () => {
    let time = 0;
    const store = createMemoryStore({ now: () => time });
    const a = await store.claim('A', { leaseMs: 1_000 });
    const b = await store.claim('B', { leaseMs: 1_000 });
    if (a.status !== 'acquired' || b.status !== 'acquired') throw new Error('expected two leases');
    // B's token does not settle A, and trying leaves B's lease intact.
    expect(await store.complete('A', b.token, { retainMs: 60_000 })).toBe(false);
    expect(await store.complete('B', b.token, { retainMs: 60_000 })).toBe(true);
    expect(await store.complete('B', b.token, { retainMs: 60_000 })).toBe(false);
    expect(await store.release('B', b.token)).toBe(false);
    expect((await store.claim('B', { leaseMs: 1_000 })).status).toBe('completed');
    // A released: its token is spent, and the next delivery gets a new lease.
    expect(await store.release('A', a.token)).toBe(true);
    expect(await store.complete('A', a.token, { retainMs: 60_000 })).toBe(false);
    const again = await store.claim('A', { leaseMs: 1_000 });
    expect(again.status).toBe('acquired');
    // That lease expires and a third delivery takes over: the old token can no longer complete it.
    time = 1_000;
    const third = await store.claim('A', { leaseMs: 1_000 });
    if (again.status !== 'acquired' || third.status !== 'acquired') throw new Error('expected a new lease');
    expect(await store.complete('A', again.token, { retainMs: 60_000 })).toBe(false);
    expect(await store.complete('A', third.token, { retainMs: 60_000 })).toBe(true);
  });

  it('gives every lease its own token, unlike those of any other store', async () => {
    const first = createMemoryStore();
    const second = createMemoryStore();
    const tokens = [];
    for (const store of [first, second]) {
      for (const id of ['A', 'B']) {
        const claim = await store.claim(id, { leaseMs: 1_000 });
        if (claim.status !== 'acquired') throw new Error('expected a lease');
        tokens.push(claim.token);
      }
    }
    expect(new Set(tokens).size).toBe(4);
    // The other store's token for the same event id settles nothing here.
    expect(await first.complete('A', tokens[2]!, { retainMs: 1_000 })).toBe(false);
    expect(await first.complete('A', tokens[0]!, { retainMs: 1_000 })).toBe(true);
  });

  it('gives exactly one of 100 concurrent claims the lease', async () => {
    const store = createMemoryStore();
    const results = await Promise.all(Array.from({ length: 100 }, () => store.claim('A', { leaseMs: 1000 })));
    expect(results.filter((result) => result.status === 'acquired')).toHaveLength(1);
  });

  it('keeps stream cursors bounded by maxEntries too, dropping the least recently advanced first', async () => {
    const store = createMemoryStore({ maxEntries: 100 });
    for (let i = 0; i < 150; i++) await store.advanceCursor(`req_${i}`, 1);
    // Advanced again, so it is the newest, not the oldest.
    await store.advanceCursor('req_0', 2);
    for (let i = 150; i < 200; i++) await store.advanceCursor(`req_${i}`, 1);
    const kept = (await Promise.all(Array.from({ length: 200 }, (_, i) => store.getCursor(`req_${i}`)))).filter(
      (c) => c !== null,
    );
    expect(kept.length).toBeLessThanOrEqual(100);
    expect(await store.getCursor('req_0')).toBe(2);
    expect(await store.getCursor('req_1')).toBeNull();
    expect(await store.getCursor('req_199')).toBe(1);
  });

  it('sweeps expired cursors, so a stream idle past its retention reads as none', async () => {
    let now = 0;
    const store = createMemoryStore({ now: () => now });
    await store.advanceCursor('req_a', 3, { retainMs: 1_000 });
    now = 999;
    expect(await store.getCursor('req_a')).toBe(3);
    now = 1_000;
    expect(await store.getCursor('req_a')).toBeNull();
    expect(await store.advanceCursor('req_a', 1, { retainMs: 1_000 })).toBe(true);
  });

  it.each(['max', 'maxSize', 'capacity', 'limit', 'maxKeys'])('points %s to maxEntries', (name) => {
    expect(() => createMemoryStore({ [name]: 10 } as never)).toThrow('did you mean `maxEntries`?');
  });

  it('points clock to now', () => {
    expect(() => createMemoryStore({ clock: () => 0 } as never)).toThrow('did you mean `now`?');
  });
});
