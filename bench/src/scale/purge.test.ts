import { describe, expect, it } from 'vitest';
import { purgeName, purgeRuns } from './purge.js';

describe('purgeRuns', () => {
  const defaults = [{ batchSize: 100, pauseRatio: 0 }];

  it('answers the defaults when KYB_BENCH_SCALE_PURGES is unset or blank', () => {
    expect(purgeRuns(undefined, defaults)).toEqual(defaults);
    expect(purgeRuns(' ', defaults)).toEqual(defaults);
  });

  it('reads batchSize[:pauseRatio] items separated by commas', () => {
    expect(purgeRuns('100, 1000,100:3,50:0.5', defaults)).toEqual([
      { batchSize: 100, pauseRatio: 0 },
      { batchSize: 1000, pauseRatio: 0 },
      { batchSize: 100, pauseRatio: 3 },
      { batchSize: 50, pauseRatio: 0.5 },
    ]);
  });

  it('refuses anything else, naming the format', () => {
    for (const spec of ['100;1000', '100:', ':3', '100:3:1', 'ten', '100,,1000']) {
      expect(() => purgeRuns(spec, defaults)).toThrow('is not batchSize[:pauseRatio]; write e.g. 100,1000,100:3');
    }
  });
});

describe('purgeName', () => {
  it('names the pause only when there is one', () => {
    expect(purgeName({ batchSize: 1000, pauseRatio: 0 })).toBe('batchSize 1,000');
    expect(purgeName({ batchSize: 100, pauseRatio: 3 })).toBe('batchSize 100, pauseRatio 3');
  });
});
