import { describe, expect, it } from 'vitest';
import { backfillVerdict, extraRoundTrips, roundTripsMet } from './verdicts.js';

describe('extraRoundTrips', () => {
  it.each([
    ['store calls alone', { calls: { off: 2, enforce: 3 }, inProcess: false }, 1],
    [
      'wire counts higher than the store calls',
      { calls: { off: 2, enforce: 3 }, wire: { off: 2, enforce: 5 }, inProcess: false },
      3,
    ],
    [
      'wire counts lower than the store calls',
      { calls: { off: 2, enforce: 3 }, wire: { off: 2, enforce: 2.5 }, inProcess: false },
      1,
    ],
    [
      'in-process statements ignored',
      { calls: { off: 2, enforce: 3 }, wire: { off: 2, enforce: 6 }, inProcess: true },
      1,
    ],
  ])('%s', (_, counts, expected) => {
    expect(extraRoundTrips(counts)).toBe(expected);
  });
});

describe('roundTripsMet', () => {
  it.each([
    [1, true],
    [1 + 1e-12, true],
    [1.001, false],
    [3, false],
    [0, true],
  ])('%d extra round trips per event → %s', (extra, met) => {
    expect(roundTripsMet(extra)).toBe(met);
  });
});

describe('backfillVerdict', () => {
  it.each([
    ['whole interval at or above ½', { median: 1.2, low: 0.5, high: 1.5 }, true],
    ['whole interval below ½', { median: 0.4, low: 0.3, high: 0.49 }, false],
    ['interval holding ½', { median: 0.6, low: 0.45, high: 0.7 }, 'unsure'],
    ['no interval (too few rounds)', { median: 2, low: undefined, high: undefined }, 'unsure'],
  ] as const)('%s', (_, ratio, expected) => {
    expect(backfillVerdict(ratio)).toBe(expected);
  });
});
