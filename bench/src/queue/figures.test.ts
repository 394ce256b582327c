import { describe, expect, it } from 'vitest';
import {
  busyFraction,
  checkOrder,
  fleetBound,
  idealRate,
  judgeScaling,
  newOrderCheck,
  roundRatios,
  summarize,
  windowRate,
} from './figures.js';

describe('queue section figures', () => {
  it('counts the events of a window, its start in and its end out, per second', () => {
    expect(windowRate([999, 1000, 1500, 1999, 2000], 1000, 2000)).toBe(3);
    expect(windowRate([1000, 1100], 1000, 1500)).toBe(4);
    expect(windowRate([1000], 1000, 1000)).toBeNaN();
  });

  it('gives the ideal fleet rate of slots bounded by the handler alone', () => {
    expect(idealRate(1, 4, 50)).toBe(80);
    expect(idealRate(3, 4, 50)).toBe(240);
  });

  it('pairs ratios by round, NaN where the base is missing or zero', () => {
    expect(roundRatios([10, 20, 30], [5, 0])).toEqual([2, Number.NaN, Number.NaN]);
  });

  it('summarizes the finite values only, with an interval from 6 of them', () => {
    expect(summarize([1, Number.NaN, 3])).toEqual({ median: 2, interval: undefined, n: 2 });
    expect(summarize([6, 5, 4, 3, 2, 1])).toEqual({ median: 3.5, interval: { low: 1, high: 6 }, n: 6 });
    expect(summarize([]).median).toBeNaN();
  });

  it('checks per-stream order across batches: in order, repeated, early', () => {
    const check = newOrderCheck();
    // Stream 0's seq 1 arrives in the batch before seq 0's but ends later: taken in the order of the handlers' end.
    checkOrder(check, [
      [200, 0, 1],
      [100, 0, 0],
      [100, 1, 0],
    ]);
    expect(check).toMatchObject({ repeated: 0, early: 0 });
    checkOrder(check, [
      [300, 0, 1],
      [300, 1, 2],
    ]);
    expect(check).toMatchObject({ repeated: 1, early: 1 });
    expect(check.examples).toEqual(['stream 0: seq 1 where 2 was next', 'stream 1: seq 2 where 1 was next']);
    expect(check.next.get(1)).toBe(3);
  });

  it("measures the machine's busy fraction from two os.cpus() readings", () => {
    const reading = (user: number, idle: number) => ({ times: { user, nice: 0, sys: 0, idle, irq: 0 } });
    expect(busyFraction([reading(0, 0), reading(0, 0)], [reading(30, 70), reading(50, 50)])).toBeCloseTo(0.4);
  });
});

describe('fleetBound', () => {
  it('names the handler at 90% of the ideal rate, else the CPU at 90% busy, else the engine', () => {
    expect(fleetBound(75, 80, 0.99)).toBe('handler');
    expect(fleetBound(50, 80, 0.95)).toBe('cpu');
    expect(fleetBound(2, 80, 0.3)).toBe('engine');
  });
});

describe('judgeScaling', () => {
  const summary = (low: number, high: number) => ({ median: (low + high) / 2, interval: { low, high }, n: 6 });
  it('meets at or above 0.8 × P over the whole interval, misses below it, and is unsure across it', () => {
    expect(judgeScaling(summary(3.2, 4.1), 4, 'handler')).toBe(true);
    expect(judgeScaling(summary(2.0, 3.1), 4, 'engine')).toBe(false);
    expect(judgeScaling(summary(3.0, 3.5), 4, 'engine')).toBe('unsure');
  });

  it('is unsure below the target when the cores were full, and without an interval', () => {
    expect(judgeScaling(summary(1.5, 2.0), 4, 'cpu')).toBe('unsure');
    expect(judgeScaling({ median: 4, interval: undefined, n: 1 }, 4, 'handler')).toBe('unsure');
  });
});
