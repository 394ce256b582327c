import { describe, expect, it } from 'vitest';
import { countsFlat, p99, purgeSlowdown, purgeSlowdownAgainstBoth, quantileRanks, timeFlat } from './verdicts.js';

describe('countsFlat', () => {
  it.each([
    [2, 2, true],
    [2.4, 2, true],
    [2.4 + 1e-12, 2, true],
    [2.5, 2, false],
    [3, 2, false],
  ])('%s per event at the largest size against %s at 0 → %s', (largest, empty, met) => {
    expect(countsFlat(largest, empty)).toBe(met);
  });
});

describe('timeFlat', () => {
  it('is met when the whole interval lies at or below 1.2', () => {
    expect(timeFlat([1.01, 0.98, 1.03, 1.0, 0.99, 1.02, 1.0]).outcome).toBe(true);
  });
  it('is missed when the whole interval lies above 1.2', () => {
    expect(timeFlat([1.5, 1.6, 1.4, 1.7, 1.5, 1.45, 1.55]).outcome).toBe(false);
  });
  it('is unsure when the interval straddles 1.2', () => {
    expect(timeFlat([0.9, 1.1, 1.3, 1.25, 1.15, 1.4, 1.0]).outcome).toBe('unsure');
  });
  it('is unsure without an interval (too few rounds)', () => {
    expect(timeFlat([1, 1, 1]).outcome).toBe('unsure');
  });
});

describe('quantileRanks', () => {
  it('brackets the 99th percentile of a large sample', () => {
    expect(quantileRanks(10_000, 0.99)).toEqual({ low: 9879, high: 9920 });
  });
  it('has no interval for a sample too small for the tail', () => {
    expect(quantileRanks(100, 0.99)).toBeUndefined();
  });
  it('covers the true quantile about 95% of the time', () => {
    // Uniform 0…1 samples: the true p99 is 0.99. A fixed LCG keeps the test deterministic.
    let seed = 12345;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    let covered = 0;
    for (let trial = 0; trial < 400; trial++) {
      const result = p99(Array.from({ length: 2000 }, random));
      if (result.low! <= 0.99 && 0.99 <= result.high!) covered++;
    }
    expect(covered / 400).toBeGreaterThan(0.9);
  });
});

describe('p99', () => {
  it('takes the nearest rank', () => {
    expect(p99(Array.from({ length: 1000 }, (_, i) => i + 1)).value).toBe(990);
  });
  it('gives an interval around it for a large sample', () => {
    const result = p99(Array.from({ length: 10_000 }, (_, i) => i + 1));
    expect(result.low).toBe(9880);
    expect(result.high).toBe(9921);
  });
});

describe('purgeSlowdown', () => {
  const without = { value: 250, low: 240, high: 260, n: 5000 };
  it('is met when the widest ratio is at or below 2', () => {
    expect(purgeSlowdown({ value: 300, low: 280, high: 320, n: 5000 }, without)).toMatchObject({
      ratio: 1.2,
      outcome: true,
    });
  });
  it('is missed when the narrowest ratio is above 2', () => {
    expect(purgeSlowdown({ value: 700, low: 600, high: 800, n: 5000 }, without).outcome).toBe(false);
  });
  it('is unsure when the ratio interval straddles 2', () => {
    expect(purgeSlowdown({ value: 500, low: 480, high: 520, n: 5000 }, without).outcome).toBe('unsure');
  });
  it('is unsure when a sample has no interval', () => {
    expect(purgeSlowdown({ value: 300, n: 50 }, without).outcome).toBe('unsure');
  });
});

describe('purgeSlowdownAgainstBoth', () => {
  const during = { value: 300, low: 280, high: 320, n: 5000 };
  const [low, high] = [
    { value: 250, low: 240, high: 260, n: 5000 },
    { value: 100, low: 90, high: 110, n: 5000 },
  ];
  it('is met only when met against the claims before the purge and those after it', () => {
    const verdict = purgeSlowdownAgainstBoth(during, low, { value: 260, low: 250, high: 270, n: 5000 });
    expect(verdict.outcome).toBe(true);
    expect(verdict.before.ratio).toBeCloseTo(1.2);
    expect(verdict.after.ratio).toBeCloseTo(300 / 260);
  });
  it('is unsure when one baseline says met and the other MISSED, whichever comes first', () => {
    expect(purgeSlowdownAgainstBoth(during, low, high).outcome).toBe('unsure');
    expect(purgeSlowdownAgainstBoth(during, high, low).outcome).toBe('unsure');
  });
  it('is unsure when one baseline says met and the other unsure', () => {
    expect(purgeSlowdownAgainstBoth(during, low, { value: 150, low: 145, high: 155, n: 5000 }).outcome).toBe('unsure');
  });
  it('is MISSED when MISSED against both', () => {
    expect(purgeSlowdownAgainstBoth(during, high, { value: 120, low: 110, high: 130, n: 5000 }).outcome).toBe(false);
  });
});
