/**
 * The scale section's report: one table of cost by size, one of the purge, and a verdict line per target, built
 * with the bench's own table and verdict helpers (../report.ts).
 */
import { int, ratio, table, us, verdict } from '../report.js';
import type { Engine } from './engines.js';
import type { SizeCost } from './flat-cost.js';
import { purgeName, type PurgeResult } from './purge.js';
import {
  countsFlat,
  MAX_GROWTH,
  MAX_PURGE_SLOWDOWN,
  purgeSlowdownAgainstBoth,
  timeFlat,
  type P99,
} from './verdicts.js';

/** One engine's measured sizes, with how long each bulk load took. */
export interface EngineCost {
  engine: Engine;
  describe: string;
  sizes: SizeCost[];
  /** ms per loaded size, by rows. */
  loads: { rows: number; ms: number }[];
}

/** 1,000,000 → "1M", 100,000 → "100k". */
export function count(rows: number): string {
  if (rows >= 1_000_000 && rows % 100_000 === 0) return `${rows / 1_000_000}M`;
  if (rows >= 1000 && rows % 100 === 0) return `${rows / 1000}k`;
  return int(rows);
}

const interval = (low?: number, high?: number): string =>
  low === undefined || high === undefined ? '—' : `${ratio(low)} … ${ratio(high)}`;

const perEvent = (value: number): string => value.toFixed(2);

/** Round trips and statements per event, as the engine counts them (SQLite: statements in process, no round trip). */
function counts(engine: Engine, size: SizeCost): [string, string] {
  if (engine.id === 'sqlite') {
    return ['— (in process)', `${perEvent(size.calls)} + ${perEvent(size.transactions ?? 0)} txn`];
  }
  return [perEvent(size.calls), perEvent(size.calls)];
}

function costRows(costs: readonly EngineCost[]): string[][] {
  return costs.flatMap(({ engine, sizes }) =>
    sizes.map((size, index) => [
      index === 0 ? engine.name : '',
      count(size.rows),
      us(size.medianUs),
      index === 0 ? '1.00×' : ratio(size.ratio.median),
      index === 0 ? '' : interval(size.ratio.low, size.ratio.high),
      ...counts(engine, size),
    ]),
  );
}

function costVerdicts(costs: readonly EngineCost[]): string[] {
  const lines: string[] = [];
  for (const { engine, sizes } of costs) {
    const empty = sizes[0]!;
    const largest = sizes[sizes.length - 1]!;
    const what = engine.id === 'sqlite' ? 'statements' : `round trips (${engine.unit})`;
    const statements = (size: SizeCost) => size.calls + (size.transactions ?? 0);
    lines.push(
      verdict(
        countsFlat(statements(largest), statements(empty)),
        `${engine.name}: ${perEvent(statements(largest))} ${what} per event at ${count(largest.rows)} records, ` +
          `${perEvent(statements(empty))} at 0 (target ≤ ${MAX_GROWTH}×, exact counts at the client)`,
      ),
    );
    const judged = timeFlat(largest.ratios);
    lines.push(
      verdict(
        judged.outcome,
        `${engine.name}: ${count(largest.rows)} ≤ ${MAX_GROWTH}× 0 in µs per claim → complete: ` +
          `${ratio(judged.median)} (95% interval ${interval(judged.interval?.low, judged.interval?.high)}, ` +
          `${largest.ratios.length} paired rounds)`,
      ),
    );
  }
  return lines;
}

const p99Cell = (value: P99): string =>
  `${us(value.value)}${value.low === undefined ? '' : ` (${us(value.low)} … ${us(value.high!)})`}`;

function purgeRows(purges: readonly { engine: Engine; result: PurgeResult }[]): string[][] {
  return purges.map(({ engine, result }) => {
    const slowdown = purgeSlowdownAgainstBoth(result.during, result.before, result.after);
    return [
      engine.name,
      count(result.rows),
      int(result.batchSize),
      String(result.pauseRatio),
      (result.purgeMs / 1000).toFixed(1),
      result.deleted === undefined ? 'failed' : int((result.deleted * 1000) / result.purgeMs),
      `${int(result.before.n)} · ${p99Cell(result.before)}`,
      `${int(result.during.n)} · ${p99Cell(result.during)}`,
      `${int(result.after.n)} · ${p99Cell(result.after)}`,
      `${ratio(slowdown.before.ratio)} (${interval(slowdown.before.low, slowdown.before.high)})`,
      `${ratio(slowdown.after.ratio)} (${interval(slowdown.after.low, slowdown.after.high)})`,
    ];
  });
}

function purgeVerdicts(purges: readonly { engine: Engine; result: PurgeResult }[]): string[] {
  return purges.flatMap(({ engine, result }) => {
    const { before, after, outcome } = purgeSlowdownAgainstBoth(result.during, result.before, result.after);
    const name = `${engine.name}, ${purgeName(result)}`;
    const purged =
      result.deleted === undefined
        ? `the purge failed after ${(result.purgeMs / 1000).toFixed(1)} s`
        : `the purge deleted ${int(result.deleted)} in ${(result.purgeMs / 1000).toFixed(1)} s, ` +
          `${int((result.deleted * 1000) / result.purgeMs)} rows/s`;
    const lines = [
      verdict(
        outcome,
        `${name}: claim p99 while purging ${count(result.rows)} expired rows ≤ ${MAX_PURGE_SLOWDOWN}× without, ` +
          `against the claims before it and after it (both must agree): ${ratio(before.ratio)} and ` +
          `${ratio(after.ratio)} (${us(result.during.value)} against ${us(result.before.value)} and ` +
          `${us(result.after.value)} µs; widest intervals ${interval(before.low, before.high)} and ` +
          `${interval(after.low, after.high)}); ${purged}`,
      ),
    ];
    if (result.purgeError !== undefined)
      lines.push(verdict(false, `${name}: purgeCompleted failed: ${result.purgeError}`));
    if (result.failedClaims > 0) {
      lines.push(
        verdict(false, `${name}: ${int(result.failedClaims)} claims failed during the purge: ${result.claimError}`),
      );
    }
    return lines;
  });
}

function loadLines(costs: readonly EngineCost[]): string[] {
  return costs.map(
    ({ engine, loads }) =>
      `  ${engine.name} bulk load: ` +
      loads.map((load) => `${count(load.rows)} in ${(load.ms / 1000).toFixed(1)} s`).join(', '),
  );
}

/** The whole report. */
export function scaleReport(input: {
  costs: readonly EngineCost[];
  purges: readonly { engine: Engine; result: PurgeResult }[];
  rounds: number;
  roundMs: number;
  failures: readonly string[];
  skipped: readonly string[];
  footer: readonly string[];
}): string {
  const parts = [
    table(
      `Scale · claim → complete of a new event, one at a time, by records already retained · median µs of ` +
        `${input.rounds} paired ${input.roundMs} ms rounds; × empty: per-round ratio to the empty store, median and 95% interval`,
      ['engine', 'records', 'µs/event', '× empty', '95% interval', 'round trips/event', 'statements/event'],
      costRows(input.costs),
    ),
    ...loadLines(input.costs),
    ...input.costs.map(({ engine, describe }) => `  ${engine.name}: ${describe}`),
  ];
  if (input.purges.length > 0) {
    parts.push(
      '',
      table(
        'Retention · claim latency (µs) before, during and after purgeCompleted({ batchSize, pauseRatio }) of expired rows · ' +
          'claims · p99 (95% interval)',
        [
          'engine',
          'expired',
          'batch',
          'pause',
          'purge s',
          'rows/s',
          'before',
          'during',
          'after',
          'p99 during ÷ before',
          'p99 during ÷ after',
        ],
        purgeRows(input.purges),
      ),
    );
  }
  parts.push(
    ...input.footer.map((line) => `  ${line}`),
    'Verdicts',
    ...costVerdicts(input.costs),
    ...purgeVerdicts(input.purges),
    ...input.failures.map((line) => verdict(false, `not measured: ${line}`)),
    ...input.skipped.map((line) => verdict('skipped', line)),
  );
  return parts.join('\n');
}
