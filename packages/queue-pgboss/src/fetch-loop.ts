/*
 * The worker loop of the pg-boss queue. pg-boss's own work() waits pollingIntervalSeconds after every fetch, even one
 * that found a job (its burst modes need batches of more than one, or its stats cache), so each worker slot ran at most
 * one job per interval: 2 events a second per process at the defaults, however deep the backlog (measured by the
 * queue bench, issue 29 §4). Here a slot that found a job fetches the next one at once; only an empty or failed fetch
 * waits the interval. A job is settled fenced by the claim it was fetched with (`{ id, retryCount }`), so a slot whose
 * job pg-boss expired and handed to another worker cannot complete or fail that other claim.
 */
import type { PgBossJobLike } from './pgboss-queue.js';

/** The pg-boss calls the loop makes: a `PgBoss` has them as they are. */
export interface FetchingBoss {
  fetch(name: string, options: { batchSize: number; includeMetadata: true }): Promise<PgBossJobLike[] | null>;
  complete(name: string, id: { id: string; retryCount: number }): Promise<unknown>;
  fail(name: string, id: { id: string; retryCount: number }, data: object): Promise<unknown>;
}

/** What one subscription's slots work with. */
export interface FetchLoopParts {
  boss: FetchingBoss;
  queueName: string;
  pollingIntervalMs: number;
  /** Runs one job; a rejection fails it (pg-boss stores the serialized error as its output and retries it). */
  run(job: PgBossJobLike): Promise<void>;
  /** A fetch or a settle that failed (the database unreachable, …); the slot goes on. */
  onError(error: unknown): void;
}

/**
 * Starts `concurrency` slots, each fetching and running one job at a time; `stop()` ends them and resolves once the
 * jobs they were running are settled.
 *
 * @example
 * ```ts
 * const loop = startFetchLoop({ boss, queueName, pollingIntervalMs: 2_000, run, onError }, 4)
 * await loop.stop()
 * ```
 */
export function startFetchLoop(parts: FetchLoopParts, concurrency: number): { stop(): Promise<void> } {
  const stopped = new AbortController();
  const slots = Array.from({ length: concurrency }, () => runSlot(parts, stopped.signal));
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopped.abort();
      return (stopping ??= Promise.all(slots).then(() => undefined));
    },
  };
}

async function runSlot(parts: FetchLoopParts, stopped: AbortSignal): Promise<void> {
  while (!stopped.aborted) {
    let job: PgBossJobLike | undefined;
    try {
      [job] = (await parts.boss.fetch(parts.queueName, { batchSize: 1, includeMetadata: true })) ?? [];
    } catch (error) {
      parts.onError(error);
    }
    if (job) await runAndSettle(parts, job);
    else await pause(parts.pollingIntervalMs, stopped);
  }
}

async function runAndSettle(parts: FetchLoopParts, job: PgBossJobLike): Promise<void> {
  const claim = { id: job.id, retryCount: job.retryCount };
  let failure: Error | undefined;
  try {
    await parts.run(job);
  } catch (error) {
    failure = error instanceof Error ? error : new Error(String(error));
  }
  try {
    if (failure) await parts.boss.fail(parts.queueName, claim, failure);
    else await parts.boss.complete(parts.queueName, claim);
  } catch (error) {
    // The job stays active until pg-boss expires it, then runs again: the store answers a processed event duplicate.
    parts.onError(error);
  }
}

/** Waits `ms`, or less when the loop is stopped. */
function pause(ms: number, stopped: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (stopped.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      stopped.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    stopped.addEventListener('abort', done, { once: true });
  });
}
