/**
 * A small timing harness: warm-up, then several interleaved rounds in which every candidate runs N operations in
 * a row; the figure is the median over rounds of the µs per operation. Interleaving spreads drift (CPU frequency,
 * GC pressure, other processes on this 2-core machine) over all candidates instead of letting it hit one.
 */
import { performance } from 'node:perf_hooks';

export interface Candidate {
  name: string;
  /** One operation. */
  fn: () => unknown;
  /** `fn` returns a promise: every call is awaited before the next (no overlap). */
  async?: boolean;
  /**
   * Operations per round, for candidates that consume a pre-built pool (one fresh delivery per call); the others
   * are calibrated to the round time. Use {@link plannedCalls} to size the pool.
   */
  iterations?: number;
  /** Warm-up operations for a candidate with fixed `iterations`; default one round. */
  warmupIterations?: number;
}

export interface HarnessOptions {
  rounds: number;
  /** Target duration of one round of one calibrated candidate. */
  roundMs: number;
  /** Warm-up time of a calibrated candidate (JIT, caches, key imports). */
  warmupMs: number;
}

export interface Measurement {
  name: string;
  /** Median over rounds of µs per operation. */
  medianUs: number;
  roundsUs: number[];
  iterations: number;
}

let sink: unknown;
/** Keeps results alive so the optimizer cannot drop the work. */
export function consumed(): unknown {
  return sink;
}

/** How many times `fn` will be called: warm-up plus all rounds. */
export function plannedCalls(
  candidate: Pick<Candidate, 'iterations' | 'warmupIterations'>,
  options: HarnessOptions,
): number {
  const iterations = candidate.iterations ?? 0;
  return (candidate.warmupIterations ?? iterations) + options.rounds * iterations;
}

async function runBatch(candidate: Candidate, n: number): Promise<number> {
  const { fn } = candidate;
  const start = performance.now();
  if (candidate.async) {
    for (let i = 0; i < n; i++) sink = await fn();
  } else {
    for (let i = 0; i < n; i++) sink = fn();
  }
  return performance.now() - start;
}

async function warmUpAndCalibrate(candidate: Candidate, options: HarnessOptions): Promise<number> {
  if (candidate.iterations !== undefined) {
    await runBatch(candidate, candidate.warmupIterations ?? candidate.iterations);
    return candidate.iterations;
  }
  let ops = 0;
  let elapsed = 0;
  let batch = 1;
  while (elapsed < options.warmupMs) {
    elapsed += await runBatch(candidate, batch);
    ops += batch;
    batch = Math.min(batch * 2, 10_000);
  }
  const perOpMs = elapsed / ops;
  return Math.max(1, Math.round(options.roundMs / perOpMs));
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Measures the candidates together; results come back in the order given. */
export async function measure(candidates: readonly Candidate[], options: HarnessOptions): Promise<Measurement[]> {
  const iterations: number[] = [];
  for (const candidate of candidates) iterations.push(await warmUpAndCalibrate(candidate, options));
  const samples: number[][] = candidates.map(() => []);
  for (let round = 0; round < options.rounds; round++) {
    // Rotate the order every round so no candidate always runs first (right after another's garbage).
    for (let k = 0; k < candidates.length; k++) {
      const index = (k + round) % candidates.length;
      const n = iterations[index]!;
      const ms = await runBatch(candidates[index]!, n);
      samples[index]!.push((ms * 1000) / n);
    }
  }
  return candidates.map((candidate, index) => ({
    name: candidate.name,
    medianUs: median(samples[index]!),
    roundsUs: samples[index]!,
    iterations: iterations[index]!,
  }));
}

/**
 * A distribution-free confidence interval for the median of `values`: with probability at least `confidence`, the
 * true median lies in [low, high]. It takes the k-th smallest and k-th largest value, k from the binomial(n, ½)
 * law of how many values fall below the median, so it assumes nothing of the noise's shape (a noisy machine's
 * runs have long tails). Undefined when there are too few values for that confidence (fewer than 6 at 95%).
 *
 * @example
 * ```ts
 * medianInterval([3, 1, 4, 1, 5, 9, 2, 6, 5, 3]) // { low: 1, high: 6 }: the 2nd smallest and 2nd largest
 * ```
 */
export function medianInterval(
  values: readonly number[],
  confidence = 0.95,
): { low: number; high: number } | undefined {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const tail = (1 - confidence) / 2;
  let k = 0;
  let below = 0; // P(X ≤ j) for X ~ binomial(n, ½)
  let ways = 1; // n choose j
  for (let j = 0; j < n; j++) {
    below += ways * 0.5 ** n;
    if (below > tail) break;
    k = j + 1;
    ways = (ways * (n - j)) / (j + 1);
  }
  return k === 0 ? undefined : { low: sorted[k - 1]!, high: sorted[n - k]! };
}

export { median };
