import { describe, expect, it } from 'vitest';
import { median, medianInterval } from './harness.js';

describe('medianInterval', () => {
  it('takes the 2nd smallest and 2nd largest of 10 values at 95% (binomial tail 1.1% each side)', () => {
    expect(medianInterval([3, 1, 4, 1, 5, 9, 2, 6, 5, 3])).toEqual({ low: 1, high: 6 });
  });

  it('takes the 6th smallest and 6th largest of 20 values at 95%', () => {
    const values = Array.from({ length: 20 }, (_, i) => 20 - i); // 20 … 1, unsorted order on purpose
    expect(medianInterval(values)).toEqual({ low: 6, high: 15 });
  });

  it('narrows as the confidence drops and always contains the median', () => {
    const values = Array.from({ length: 30 }, (_, i) => (i * 7919) % 101);
    const wide = medianInterval(values, 0.99)!;
    const narrow = medianInterval(values, 0.8)!;
    expect(narrow.high - narrow.low).toBeLessThan(wide.high - wide.low);
    for (const { low, high } of [wide, narrow]) {
      expect(low).toBeLessThanOrEqual(median(values));
      expect(high).toBeGreaterThanOrEqual(median(values));
    }
  });

  it('gives no interval when there are too few values for the confidence', () => {
    expect(medianInterval([1, 2, 3, 4, 5])).toBeUndefined();
    expect(medianInterval([1, 2, 3, 4, 5, 6])).toEqual({ low: 1, high: 6 });
  });
});
