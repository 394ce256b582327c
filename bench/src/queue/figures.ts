/** The queue section's arithmetic, apart from any process or server so that it can be tested. */
import { median, medianInterval } from '../harness.js';
import type { Handled } from './protocol.js';

/** Events per second among `times` (ms) that fall in [from, to). */
export function windowRate(times: readonly number[], from: number, to: number): number {
  if (to <= from) return Number.NaN;
  let count = 0;
  for (const at of times) if (at >= from && at < to) count++;
  return (count * 1000) / (to - from);
}

/** The rate a fleet of `processes` × `concurrency` slots reaches when nothing but the handler's time bounds it. */
export function idealRate(processes: number, concurrency: number, handlerMs: number): number {
  return (processes * concurrency * 1000) / handlerMs;
}

/** Per round, `a[i] / b[i]`: ratios measured in the same round (NaN where either is missing). */
export function roundRatios(a: readonly number[], b: readonly number[]): number[] {
  return a.map((value, round) => {
    const base = b[round];
    return base === undefined || !(base > 0) ? Number.NaN : value / base;
  });
}

export interface Summary {
  median: number;
  /** The distribution-free 95% interval of the median; undefined below 6 values. */
  interval: { low: number; high: number } | undefined;
  n: number;
}

/** Median and 95% interval of the finite values. */
export function summarize(values: readonly number[]): Summary {
  const finite = values.filter(Number.isFinite);
  return {
    median: finite.length > 0 ? median(finite) : Number.NaN,
    interval: medianInterval(finite),
    n: finite.length,
  };
}

/**
 * What the fleet got wrong, stream by stream: each stream's events were enqueued in seq order 0, 1, 2…, so a worker
 * fleet that keeps per-stream order and runs every event once hands them to the handlers in exactly that order.
 * `next` holds, per stream index, the seq expected next; it carries over from one call to the next.
 */
export interface OrderCheck {
  next: Map<number, number>;
  /** An event handled again (its seq below the one expected). */
  repeated: number;
  /** An event handled before an earlier one of its stream (its seq above the one expected). */
  early: number;
  /** A few examples, for the report. */
  examples: string[];
}

export function newOrderCheck(): OrderCheck {
  return { next: new Map(), repeated: 0, early: 0, examples: [] };
}

/**
 * Feeds handled events (in any order across streams) into `check`. Within one stream the events are taken in the
 * order of their handler's end: a stream's next event starts only after the previous one finished, so its handler
 * ends at least the handler's time later, well apart from clock noise.
 */
export function checkOrder(check: OrderCheck, events: readonly Handled[]): void {
  const sorted = [...events].sort((a, b) => a[0] - b[0]);
  for (const [, stream, seq] of sorted) {
    const expected = check.next.get(stream) ?? 0;
    if (seq === expected) {
      check.next.set(stream, seq + 1);
      continue;
    }
    if (seq < expected) check.repeated++;
    else {
      check.early++;
      check.next.set(stream, seq + 1);
    }
    if (check.examples.length < 3) check.examples.push(`stream ${stream}: seq ${seq} where ${expected} was next`);
  }
}

/** CPU busy fraction of the whole machine between two `os.cpus()` readings (every process, this run's or not). */
export function busyFraction(
  before: readonly { times: Record<'user' | 'nice' | 'sys' | 'idle' | 'irq', number> }[],
  after: readonly { times: Record<'user' | 'nice' | 'sys' | 'idle' | 'irq', number> }[],
): number {
  let busy = 0;
  let total = 0;
  after.forEach((cpu, index) => {
    const prior = before[index];
    if (!prior) return;
    const delta = (key: 'user' | 'nice' | 'sys' | 'idle' | 'irq') => cpu.times[key] - prior.times[key];
    const used = delta('user') + delta('nice') + delta('sys') + delta('irq');
    busy += used;
    total += used + delta('idle');
  });
  return total > 0 ? busy / total : Number.NaN;
}

/** What bounds a fleet measurement, read from its own figures. */
export type FleetBound = 'handler' | 'cpu' | 'engine';

/**
 * `handler` when the fleet reached 90% of its slots' ideal rate (the handler's time bounds it: the engine keeps
 * up); else `cpu` when the machine was 90% busy or more (the cores were full: a quieter or larger machine may carry
 * more); else `engine`: the engine's own cadence (round trips per job). (pg-boss's worker loop used to wait its
 * polling interval after every fetch, which bounded it at one job per slot per interval; the engine now fetches the
 * next job at once, packages/queue-pgboss/src/fetch-loop.ts.)
 */
export function fleetBound(eventsPerSecond: number, ideal: number, machineBusy: number): FleetBound {
  if (eventsPerSecond >= 0.9 * ideal) return 'handler';
  if (machineBusy >= 0.9) return 'cpu';
  return 'engine';
}

/** A fleet of P processes "scales" when it runs at least this share of P × one process's rate, in the same round. */
export const SCALING_TARGET = 0.8;

/**
 * The scaling verdict of P processes from the per-round ratios P ÷ 1: `met` when the whole 95% interval is at or
 * above SCALING_TARGET × P, `missed` when all of it is below, `unsure` otherwise (no interval: fewer than 6 rounds).
 * Below the target on a machine whose cores were full (`bound` cpu) it is `unsure` too: the machine, not the
 * engine, may have held the fleet back, so this machine cannot carry a verdict.
 */
export function judgeScaling(ratios: Summary, processes: number, bound: FleetBound): boolean | 'unsure' {
  const target = SCALING_TARGET * processes;
  if (!ratios.interval) return 'unsure';
  if (ratios.interval.low >= target) return true;
  if (ratios.interval.high < target) return bound === 'cpu' ? 'unsure' : false;
  return 'unsure';
}
