// The backfill's bookkeeping (BackfillGate, backfill-guard.ts): how long a gap the API could not fill is remembered,
// when it is forgotten, and how many gaps and stalls it keeps, oldest dropped first, so a flood of streams cannot grow
// it without bound.
import { describe, expect, it } from 'vitest';
import { rejection } from '../errors.js';
import { BackfillGate } from './backfill-guard.js';

const NOW = Date.UTC(2026, 10, 26, 20, 0, 0);

describe('BackfillGate: remembered gaps', () => {
  it('remembers a gap the API could not fill for retryAfterMs, saying how long is left', () => {
    const clock = { ms: NOW };
    const gate = new BackfillGate(5_000, () => clock.ms);
    gate.settled('dr_a', 1, rejection('out_of_order'));
    clock.ms += 1_000;
    expect(gate.recentFailure('dr_a', 1)).toEqual({
      failure: expect.objectContaining({ code: 'out_of_order' }),
      retryInMs: 4_000,
    });
    expect(gate.recentFailure('dr_a', 2)).toBeUndefined();
    expect(gate.recentFailure('dr_b', 1)).toBeUndefined();
  });

  it('forgets it for good once retryAfterMs passed, even when the clock is then stepped back', () => {
    const clock = { ms: NOW };
    const gate = new BackfillGate(5_000, () => clock.ms);
    gate.settled('dr_a', 1, rejection('out_of_order'));
    clock.ms += 5_000;
    expect(gate.recentFailure('dr_a', 1)).toBeUndefined();
    clock.ms -= 4_000; // an NTP correction
    expect(gate.recentFailure('dr_a', 1)).toBeUndefined();
  });

  it('forgets it when a backfill from the same cursor succeeds', () => {
    const gate = new BackfillGate(5_000, () => NOW);
    gate.settled('dr_a', 1, rejection('backfill_unavailable'));
    gate.settled('dr_a', 1, undefined);
    expect(gate.recentFailure('dr_a', 1)).toBeUndefined();
  });

  it('does not remember an answer that is no verdict on the gap (a handler failed), nor anything with retryAfterMs 0', () => {
    const gate = new BackfillGate(5_000, () => NOW);
    gate.settled('dr_a', 1, rejection('handler_failed'));
    expect(gate.recentFailure('dr_a', 1)).toBeUndefined();
    const never = new BackfillGate(0, () => NOW);
    never.settled('dr_a', 1, rejection('out_of_order'));
    expect(never.recentFailure('dr_a', 1)).toBeUndefined();
  });

  it('keeps exactly the 10,000 newest gaps', () => {
    const gate = new BackfillGate(5_000, () => NOW);
    gate.settled('dr_first', 1, rejection('out_of_order'));
    for (let i = 0; i < 10_000; i++) gate.settled(`dr_${i}`, 1, rejection('out_of_order'));
    expect(gate.recentFailure('dr_first', 1)).toBeUndefined();
    expect(gate.recentFailure('dr_0', 1)?.failure.code).toBe('out_of_order');
    expect(gate.recentFailure('dr_9999', 1)?.failure.code).toBe('out_of_order');
  });
});

describe('BackfillGate: stalls logged once', () => {
  it('says a stall is new the first time only, per stream and seq', () => {
    const gate = new BackfillGate(5_000, () => NOW);
    expect([gate.firstStall('dr_a', 1), gate.firstStall('dr_a', 1), gate.firstStall('dr_a', 2)]).toEqual([
      true,
      false,
      true,
    ]);
  });

  it('keeps the 10,000 newest stalls: an older one is logged again', () => {
    const gate = new BackfillGate(5_000, () => NOW);
    expect(gate.firstStall('dr_first', 1)).toBe(true);
    for (let i = 0; i < 10_000; i++) gate.firstStall(`dr_${i}`, 1);
    expect(gate.firstStall('dr_9999', 1)).toBe(false);
    expect(gate.firstStall('dr_first', 1)).toBe(true);
  });
});
