/**
 * SQLite's busy timeout does not cover every lock conflict between processes: SQLite never waits when waiting could
 * deadlock, that is when a connection that already reads wants to write while another one holds the write lock.
 * Switching a fresh file to WAL does exactly that (it reads the header in a read transaction, then upgrades it to
 * write the new file format), so processes opening one fresh file at once get SQLITE_BUSY at once, whatever the busy
 * timeout. The steps that can meet it (the WAL switch, schema creation) are retried here, with backoff, for a bounded
 * time; a fresh attempt starts with no transaction, so it does wait through the busy timeout.
 */

/**
 * How long and how often a step that met SQLITE_BUSY is retried: up to `maxMs` in all, sleeping `firstDelayMs`
 * at first and doubling up to `maxDelayMs`, each sleep jittered so that processes that collided do not collide again
 * in lockstep. Then the last error is thrown.
 */
export interface BusyRetryBounds {
  maxMs: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

/** The bounds the SQLite store uses: as long as better-sqlite3's default busy timeout (5 s), in short steps. */
export const SQLITE_BUSY_RETRY: Readonly<BusyRetryBounds> = Object.freeze({
  maxMs: 5_000,
  firstDelayMs: 2,
  maxDelayMs: 100,
});

/** True for SQLITE_BUSY and its extended codes (SQLITE_BUSY_RECOVERY, SQLITE_BUSY_SNAPSHOT, SQLITE_BUSY_TIMEOUT). */
export function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * Runs `step`, and again after a jittered, growing pause each time it throws SQLITE_BUSY, until it succeeds, throws
 * anything else, or `bounds.maxMs` have passed (then the last SQLITE_BUSY is thrown). `step` must be safe to repeat:
 * a failed step left nothing behind (a statement or transaction that failed was rolled back).
 */
export async function retryWhileBusy<T>(
  step: () => T,
  bounds: BusyRetryBounds = SQLITE_BUSY_RETRY,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<T> {
  const started = Date.now();
  let delay = bounds.firstDelayMs;
  for (;;) {
    try {
      return step();
    } catch (error) {
      if (!isSqliteBusy(error) || Date.now() - started >= bounds.maxMs) throw error;
    }
    await sleep(delay / 2 + Math.random() * delay);
    delay = Math.min(delay * 2, bounds.maxDelayMs);
  }
}
