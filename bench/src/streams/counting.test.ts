import { createMemoryStore, isStreamCursorStore, type StreamCursorStore } from '@kyb-webhooks/core';
import { describe, expect, it } from 'vitest';
import { countingStore, describeCalls, diffCounts, perEvent, totalCalls } from './counting.js';

describe('countingStore', () => {
  it('counts every call by method and hands back what the store answered', async () => {
    const counting = countingStore(createMemoryStore());
    const claim = await counting.store.claim('ev1', { leaseMs: 60_000 });
    expect(claim.status).toBe('acquired');
    if (claim.status !== 'acquired') return;
    const outcome = await counting.store.completeInOrder('ev1', claim.token, {
      retainMs: 60_000,
      streamId: 's1',
      seq: 0,
      firstSeq: 0,
    });
    expect(outcome).toBe('completed');
    expect(await counting.store.getCursor('s1')).toBe(0);
    expect(counting.counts()).toEqual({ claim: 1, completeInOrder: 1, getCursor: 1 });
  });

  it('sends the calls to the store given to use(), keeping the counts', async () => {
    const first = createMemoryStore();
    const second = createMemoryStore();
    const counting = countingStore(first);
    await first.advanceCursor('s1', 5);
    counting.use(second);
    expect(await counting.store.getCursor('s1')).toBeNull();
    counting.use(first);
    expect(await counting.store.getCursor('s1')).toBe(5);
    expect(counting.counts()).toEqual({ getCursor: 2 });
  });

  it('is a stream cursor store only when its target is one', () => {
    const full = countingStore(createMemoryStore());
    const { getCursor: _dropped, ...partial } = createMemoryStore();
    expect(isStreamCursorStore(full.store)).toBe(true);
    expect(isStreamCursorStore(countingStore(partial as unknown as StreamCursorStore).store)).toBe(false);
  });
});

describe('count arithmetic', () => {
  it('takes differences, per-event rates, totals and a sorted description', () => {
    const calls = diffCounts({ claim: 30, getCursor: 20, complete: 10 }, { claim: 10, complete: 10 });
    expect(calls).toEqual({ claim: 20, getCursor: 20, complete: 0 });
    const rates = perEvent(calls, 20);
    expect(totalCalls(rates)).toBe(2);
    expect(describeCalls(rates)).toBe('claim 1.00 · getCursor 1.00');
  });
});
