import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_PURGE_BATCH_SIZE,
  inBatches,
  MAX_PURGE_PAUSE_RATIO,
  purgePlan,
  type PurgeOptions,
} from './sql-store.js';

/** Runs inBatches under fake timers over batches that each take `batchMs`; answers when each batch started. */
async function batchStarts(pauseRatio: number, chosen: number[], batchMs: number) {
  vi.useFakeTimers({ toFake: ['setTimeout', 'setImmediate', 'performance'] });
  const t0 = performance.now();
  const starts: number[] = [];
  const purge = inBatches({ size: 10, pauseRatio }, async () => {
    starts.push(performance.now() - t0);
    await new Promise((resolve) => setTimeout(resolve, batchMs));
    return { chosen: chosen[starts.length - 1]!, deleted: chosen[starts.length - 1]! - 1 };
  });
  await vi.runAllTimersAsync();
  const deleted = await purge;
  return { starts, deleted, endedAt: performance.now() - t0 };
}

describe('inBatches', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('starts the next batch once the event loop has run, with no pause, at pauseRatio 0', async () => {
    const { starts, deleted, endedAt } = await batchStarts(0, [10, 10, 4], 30);
    expect(starts).toEqual([0, 30, 60]);
    expect(deleted).toBe(9 + 9 + 3);
    expect(endedAt).toBe(90);
  });

  it('waits pauseRatio times as long as a batch took before the next, and not after the last', async () => {
    const { starts, deleted, endedAt } = await batchStarts(2, [10, 10, 4], 30);
    expect(starts).toEqual([0, 30 + 60, 2 * (30 + 60)]);
    expect(deleted).toBe(21);
    expect(endedAt).toBe(2 * (30 + 60) + 30);
  });

  it('stops after a batch that chose fewer rows than the batch size, whatever it deleted', async () => {
    const { starts } = await batchStarts(0.5, [9], 10);
    expect(starts).toEqual([0]);
  });
});

describe('purgePlan', () => {
  it('defaults to batches of DEFAULT_PURGE_BATCH_SIZE rows, each followed by a pause as long as it took', () => {
    expect(purgePlan({})).toEqual({ size: DEFAULT_PURGE_BATCH_SIZE, pauseRatio: 1 });
    expect(purgePlan({ pauseRatio: 0 })).toEqual({ size: DEFAULT_PURGE_BATCH_SIZE, pauseRatio: 0 });
    expect(purgePlan({ batchSize: 7, pauseRatio: 0.5 })).toEqual({ size: 7, pauseRatio: 0.5 });
    expect(purgePlan({ pauseRatio: MAX_PURGE_PAUSE_RATIO }).pauseRatio).toBe(100);
  });

  it('refuses a pauseRatio that is not a number from 0 to 100, saying what it is', () => {
    for (const pauseRatio of [-1, 100.5, Number.NaN, Number.POSITIVE_INFINITY, '1']) {
      expect(() => purgePlan({ pauseRatio } as unknown as PurgeOptions)).toThrow(
        new RangeError(
          'purgeCompleted: pauseRatio must be a number from 0 to 100 (the wait after each batch, as a multiple of the time the batch took); the default is 1.',
        ),
      );
    }
  });
});
