// settleWithin, the deadline under every store call and handler (issue 11 §5, mutation survivors): a plain value
// comes back as it is, without a timer, and work that settles in time leaves no timer behind (a pending timer per
// delivery would keep a serverless function or a test process alive until it fires).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { settleWithin, TIMED_OUT } from './deadline.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('settleWithin', () => {
  it('returns a value that is not a thenable as it is, not as a promise', () => {
    expect(settleWithin(42, 1_000)).toBe(42);
  });

  it('starts no timer for a value that is not a thenable', () => {
    vi.useFakeTimers();
    settleWithin({ status: 'acquired' }, 1_000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('clears its timer when the work resolves in time', async () => {
    vi.useFakeTimers();
    expect(await settleWithin(Promise.resolve('done'), 1_000)).toBe('done');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('clears its timer when the work rejects in time', async () => {
    vi.useFakeTimers();
    await expect(settleWithin(Promise.reject(new Error('store down')), 1_000)).rejects.toThrow('store down');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('answers TIMED_OUT when the work outlives the deadline', async () => {
    vi.useFakeTimers();
    const answer = settleWithin(new Promise(() => {}), 1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await answer).toBe(TIMED_OUT);
  });
});
