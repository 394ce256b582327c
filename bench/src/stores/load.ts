/**
 * Closed-loop load with a fixed number of deliveries in flight: `inFlight` workers each run one operation after the
 * other until the round's time is up. Every candidate is warmed up once, then all run in several interleaved rounds
 * (the order rotates each round, as in ../harness.ts); the figure is the median over rounds of operations per
 * second. Client calls (round trips, statements) are summed over all rounds and divided by the operations.
 */
import { performance } from 'node:perf_hooks';
import { median } from '../harness.js';

export interface LoadCandidate {
  key: string;
  inFlight: number;
  /** One operation on a fresh event id. */
  op: (eventId: string) => Promise<unknown>;
  /** Cumulative client calls so far (round trips, or statements in process). */
  calls: () => number;
  /** Cumulative transactions so far, for in-process SQL. */
  transactions?: () => number;
  /** Called before each run (warm-up and timed). */
  reset?: () => void;
}

export interface LoadOptions {
  rounds: number;
  roundMs: number;
  warmupMs: number;
}

export interface LoadResult {
  key: string;
  inFlight: number;
  /** Median over rounds of operations per second. */
  opsPerSecond: number;
  roundsOps: number[];
  /** Operations over all timed rounds. */
  ops: number;
  calls: number;
  transactions: number;
  /** Set when an operation failed: the candidate is dropped from later rounds. */
  error?: string;
}

/** Fresh event ids: ULID-sized (26 characters), unique per run. */
export function eventIds(tag: string): () => string {
  let seq = 0;
  const prefix = `ev${tag}`.slice(0, 16);
  return () => prefix + (seq++).toString(36).padStart(26 - prefix.length, '0');
}

async function runFor(
  candidate: LoadCandidate,
  ms: number,
  nextId: () => string,
): Promise<{ ops: number; ms: number }> {
  let ops = 0;
  const start = performance.now();
  const deadline = start + ms;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    try {
      while (failure === undefined && performance.now() < deadline) {
        await candidate.op(nextId());
        ops++;
      }
    } catch (error) {
      failure ??= { error };
    }
  };
  // Every worker has stopped before this returns, also after a failure, so nothing spills into the next candidate.
  await Promise.all(Array.from({ length: candidate.inFlight }, worker));
  if (failure) throw failure.error;
  return { ops, ms: performance.now() - start };
}

export async function measureLoad(
  candidates: readonly LoadCandidate[],
  options: LoadOptions,
  nextId: () => string,
  progress: (line: string) => void,
  /** Runs after the warm-up, right before the timed rounds (e.g. to snapshot server-side counters). */
  beforeRounds?: () => Promise<void>,
): Promise<LoadResult[]> {
  const results: LoadResult[] = candidates.map((candidate) => ({
    key: candidate.key,
    inFlight: candidate.inFlight,
    opsPerSecond: Number.NaN,
    roundsOps: [],
    ops: 0,
    calls: 0,
    transactions: 0,
  }));
  const attempt = async (index: number, ms: number, timed: boolean): Promise<void> => {
    const candidate = candidates[index]!;
    const result = results[index]!;
    if (result.error !== undefined) return;
    // In-process stores never leave the microtask queue: yield to the event loop between runs, so that signals
    // (Ctrl-C stops the servers) and timers are handled at least that often.
    await new Promise<void>((resolve) => setImmediate(resolve));
    candidate.reset?.();
    const calls = candidate.calls();
    const transactions = candidate.transactions?.() ?? 0;
    try {
      const run = await runFor(candidate, ms, nextId);
      if (!timed) return;
      result.roundsOps.push((run.ops * 1000) / run.ms);
      result.ops += run.ops;
      result.calls += candidate.calls() - calls;
      result.transactions += (candidate.transactions?.() ?? 0) - transactions;
    } catch (error) {
      result.error = String((error as Error)?.message ?? error).split('\n')[0]!;
      progress(`${candidate.key}, ${candidate.inFlight} in flight: failed (${result.error}); dropped`);
    }
  };

  progress(`warming up ${candidates.length} runs`);
  for (let index = 0; index < candidates.length; index++) await attempt(index, options.warmupMs, false);
  await beforeRounds?.();
  for (let round = 0; round < options.rounds; round++) {
    progress(`round ${round + 1} of ${options.rounds}`);
    for (let k = 0; k < candidates.length; k++) await attempt((k + round) % candidates.length, options.roundMs, true);
  }
  for (const result of results) {
    if (result.roundsOps.length > 0) result.opsPerSecond = median(result.roundsOps);
  }
  return results;
}
