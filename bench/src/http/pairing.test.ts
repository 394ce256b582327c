import { describe, expect, it } from 'vitest';
import { judgeAtMost, roundPlan } from './pairing.js';

describe('roundPlan', () => {
  it('pairs every replica of ours with every replica of the baseline, in both orders, once per 8 rounds', () => {
    const combos = Array.from({ length: 8 }, (_, round) => {
      const plan = roundPlan(round, 2);
      return `${plan.ours}-${plan.base}-${plan.baseFirst}`;
    });
    expect(new Set(combos).size).toBe(8);
  });

  it('alternates our replica from one round to the next', () => {
    expect(Array.from({ length: 4 }, (_, round) => roundPlan(round, 2).ours)).toEqual([0, 1, 0, 1]);
  });

  it('uses replica 0 throughout with a single replica', () => {
    const plans = Array.from({ length: 8 }, (_, round) => roundPlan(round, 1));
    expect(plans.every((plan) => plan.ours === 0 && plan.base === 0)).toBe(true);
  });
});

describe('judgeAtMost', () => {
  const ten = (from: number): number[] => Array.from({ length: 10 }, (_, i) => from + i); // interval: 2nd … 9th

  it.each([
    ['whole interval at or below the limit', ten(0), 15, true],
    ['whole interval above the limit', ten(20), 15, false],
    ['interval holding the limit', ten(10), 15, 'unsure'],
    ['too few rounds for an interval, median far below', [1, 2, 3], 15, 'unsure'],
  ] as const)('%s', (_, values, limit, outcome) => {
    expect(judgeAtMost(values, limit).outcome).toBe(outcome);
  });

  it('cannot be decided by one replica that stays slow: half the rounds 30 µs higher give unsure', () => {
    // Ours costs +10 over the baseline, but the rounds on one slow replica read +40.
    const rounds = Array.from({ length: 20 }, (_, round) => (round % 2 === 0 ? 10 : 40));
    expect(judgeAtMost(rounds, 15).outcome).toBe('unsure');
  });
});
