import type { ExtendOptions, ListStreamsOptions, StreamCursorStore, StreamPage } from '@kyb-webhooks/core/store';

/**
 * Options of {@link SqlDedupeStore.purgeCompleted}.
 *
 * @example
 * ```ts
 * await store.purgeCompleted({ olderThanMs: 7 * 86_400_000 }) // keep at most a week, whatever retainMs said
 * ```
 */
export interface PurgeOptions {
  /**
   * Also delete completed records that were completed more than this many ms ago, even if the retention they were
   * completed with is longer. Without it, a completed record goes once the `retainMs` it was completed with has
   * passed (DEFAULT_RETAIN_MS, 30 days, unless the receiver was configured otherwise). Stream cursors are not
   * affected: each goes only once its own retention (`ordering.cursorRetainMs`, 400 days by default) has passed,
   * since deleting a live one makes its stream's next event look like the stream's start.
   */
  olderThanMs?: number;
  /**
   * Rows deleted per batch, 1 to 100,000; default {@link DEFAULT_PURGE_BATCH_SIZE}. Each batch is committed
   * before the next starts, so a purge of millions of expired rows never holds its locks for longer than one batch
   * takes, and the event loop runs between batches. On PostgreSQL a batch is one statement that skips rows another
   * transaction has locked (`FOR UPDATE SKIP LOCKED`), so it never waits on a claim in progress either. On
   * MySQL/MariaDB a plain read chooses the batch's rows, which locks nothing, and DELETEs by primary key (at most 500
   * keys each) take those still expired, so it never locks a live row (a lease, a retained record) or a gap a claim
   * inserts into.
   */
  batchSize?: number;
  /**
   * How long to wait after each batch before the next starts, as a multiple of the time the batch took (gh-ost's
   * `--nice-ratio`, pt-archiver's `--sleep-coef`): 1 waits as long as the batch took, so the database spends at most
   * half of the purge's time on it. 0 to {@link MAX_PURGE_PAUSE_RATIO}; default {@link DEFAULT_PURGE_PAUSE_RATIO}, 1.
   * 0 starts the next batch as soon as the event loop has run: the fastest purge, the one that slows claims most.
   */
  pauseRatio?: number;
}

/**
 * Rows {@link SqlDedupeStore.purgeCompleted} deletes per batch unless `batchSize` says otherwise. 100, not more:
 * claims running beside a purge answer sooner the shorter its statements are. Measured by the bench's scale section
 * (1M expired rows, one claim at a time beside the purge, 2026-11-29): the claims' p99 during a MariaDB purge was
 * 1.5–2.6 ms in batches of 100 against 4.3–4.4 ms in batches of 1,000, for a purge that took 26–33 s instead of
 * 18–21 s; PostgreSQL's purge takes 5–7 s in batches of 100.
 *
 * @example
 * ```ts
 * await store.purgeCompleted({ batchSize: DEFAULT_PURGE_BATCH_SIZE * 10 }) // fewer round trips on a quiet table
 * ```
 */
export const DEFAULT_PURGE_BATCH_SIZE = 100;
/**
 * The largest `batchSize` {@link SqlDedupeStore.purgeCompleted} accepts.
 *
 * @example
 * ```ts
 * const batchSize = Math.min(wanted, MAX_PURGE_BATCH_SIZE)
 * ```
 */
export const MAX_PURGE_BATCH_SIZE = 100_000;

/**
 * The purge's batch size: `batchSize`, or the default; anything but a whole number from 1 to
 * {@link MAX_PURGE_BATCH_SIZE} is a RangeError, checked before any row is deleted.
 *
 * @example
 * ```ts
 * purgeBatchSize({ batchSize: 500 }) // 500
 * ```
 */
function purgeBatchSize(options: PurgeOptions): number {
  const size = options.batchSize ?? DEFAULT_PURGE_BATCH_SIZE;
  if (!Number.isInteger(size) || size < 1 || size > MAX_PURGE_BATCH_SIZE) {
    throw new RangeError(
      `purgeCompleted: batchSize must be a whole number of rows from 1 to ${MAX_PURGE_BATCH_SIZE}; the default is ${DEFAULT_PURGE_BATCH_SIZE}.`,
    );
  }
  return size;
}

/**
 * The `pauseRatio` {@link SqlDedupeStore.purgeCompleted} uses unless told otherwise: after each batch, a wait as long
 * as the batch took. Measured by the bench's scale section (1M expired rows, one claim at a time beside the purge,
 * servers on a shared 2-core machine, 2026-11-29): on MariaDB 10.11 the claims' p99 during the purge was 2.7–3.1 ms
 * with no pause (three runs), 1.6–2.1 ms at 1 (two) and 1.5–1.7 ms at 3 or 10, for a purge of 33–36 s, 46–55 s,
 * 96–104 s and 275 s; on PostgreSQL 15 it moved less (0.83–0.94 ms at 0, 0.70 ms at 1, 0.84–0.88 ms at 3 and 10;
 * 8–9 s, 14 s, 19 s and 90 s). So 1: most of what a pause gives, for a purge 1.3–1.6 times as long. 0 purges as
 * fast as the database goes. See the README for the baselines these compare with.
 *
 * @example
 * ```ts
 * await store.purgeCompleted({ pauseRatio: 0 }) // a one-off purge at a quiet hour, as fast as it goes
 * ```
 */
export const DEFAULT_PURGE_PAUSE_RATIO = 1;
/**
 * The largest `pauseRatio` {@link SqlDedupeStore.purgeCompleted} accepts: a purge up to about 101 times as long as
 * one without a pause.
 *
 * @example
 * ```ts
 * const pauseRatio = Math.min(wanted, MAX_PURGE_PAUSE_RATIO)
 * ```
 */
export const MAX_PURGE_PAUSE_RATIO = 100;

/** How a purge goes through a table: rows per batch, and the pause after each (see {@link PurgeOptions}). */
export interface PurgePlan {
  size: number;
  pauseRatio: number;
}

/**
 * The purge's plan from its options, each defaulted and checked ({@link purgeBatchSize}; `pauseRatio` a number from 0
 * to {@link MAX_PURGE_PAUSE_RATIO}) before any row is deleted; a value out of range is a RangeError.
 *
 * @example
 * ```ts
 * purgePlan({ batchSize: 500, pauseRatio: 1 }) // { size: 500, pauseRatio: 1 }
 * ```
 */
export function purgePlan(options: PurgeOptions): PurgePlan {
  const size = purgeBatchSize(options);
  const pauseRatio = options.pauseRatio ?? DEFAULT_PURGE_PAUSE_RATIO;
  if (typeof pauseRatio !== 'number' || !(pauseRatio >= 0 && pauseRatio <= MAX_PURGE_PAUSE_RATIO)) {
    throw new RangeError(
      `purgeCompleted: pauseRatio must be a number from 0 to ${MAX_PURGE_PAUSE_RATIO} (the wait after each batch, as a multiple of the time the batch took); the default is ${DEFAULT_PURGE_PAUSE_RATIO}.`,
    );
  }
  return { size, pauseRatio };
}

/**
 * What one batch of a purge did, when the rows it chose and the rows it deleted may differ: MySQL's batch chooses
 * its rows first and deletes them in a second statement, which leaves out any that a claim took over in between.
 *
 * @example
 * ```ts
 * const batch: PurgeBatch = { chosen: 1_000, deleted: 999 } // one row was claimed again meanwhile
 * ```
 */
export interface PurgeBatch {
  /** Rows the batch chose to delete: fewer than the batch size only once no more are left. */
  chosen: number;
  /** Rows it deleted. */
  deleted: number;
}

/**
 * Runs `deleteBatch` (deleting at most `plan.size` rows) until a batch deletes, or chooses, fewer than that, letting
 * the event loop run between batches and, with a `pauseRatio`, waiting that many times as long as the batch took;
 * resolves to the rows deleted in all. A batch answers the rows it deleted, or a {@link PurgeBatch} when it may
 * delete fewer than it chose.
 *
 * @example
 * ```ts
 * const deleted = await inBatches({ size: 1_000, pauseRatio: 0 }, async () => (await db.query(deleteAtMost1000)).rowCount ?? 0)
 * ```
 */
export async function inBatches(
  plan: PurgePlan,
  deleteBatch: () => Promise<number | PurgeBatch> | number | PurgeBatch,
): Promise<number> {
  let total = 0;
  for (;;) {
    const started = performance.now();
    const batch = await deleteBatch();
    const { chosen, deleted } = typeof batch === 'number' ? { chosen: batch, deleted: batch } : batch;
    total += deleted;
    if (chosen < plan.size) return total;
    const pauseMs = (performance.now() - started) * plan.pauseRatio;
    await new Promise((resolve) => (pauseMs > 0 ? setTimeout(resolve, pauseMs) : setImmediate(resolve)));
  }
}

/**
 * A dedupe store with stream cursors ({@link StreamCursorStore}) kept in two SQL tables, `<table>` and
 * `<table>_streams`, with the two chores tables need: creating them, and deleting the records nobody will ask about
 * again.
 *
 * @example
 * ```ts
 * const store: SqlDedupeStore = createPostgresStore({ pool })
 * await store.ensureSchema()
 * setInterval(() => store.purgeCompleted().catch(logError), 86_400_000).unref()
 * ```
 */
export interface SqlDedupeStore extends StreamCursorStore {
  /** The table, as configured (possibly schema-qualified). */
  readonly table: string;
  /**
   * See {@link StreamCursorStore.listStreams}; pages through the `(active_at, stream_id)` index of
   * `<table>_streams`.
   */
  listStreams(options: ListStreamsOptions): Promise<StreamPage>;
  /**
   * See {@link StreamCursorStore.extend}: one `UPDATE` of the lease's `expires_at`, by the database's clock, on the
   * conditions `complete` has (the token's live lease).
   */
  extend(eventId: string, token: string, options: ExtendOptions): boolean | Promise<boolean>;
  /**
   * Create the tables and the index if missing (the cursors' table too, so running it again after an upgrade adds
   * it). Idempotent, so it can run at every start-up; the same statements ship as `sql/<dialect>.sql` for those who
   * migrate by hand.
   */
  ensureSchema(): Promise<void>;
  /**
   * Delete completed records whose retention ended (and leases that expired: their holder crashed and no retry
   * came), using the database's clock. Claims already treat those records as absent, so this only reclaims space:
   * run it on a schedule, e.g. daily. Stream cursors and skips whose retention ended go too. Rows go in batches of
   * `batchSize` (100), a statement or two each, so a large purge never blocks claims for long, and each is followed
   * by a pause as long as it took (`pauseRatio`, 1), so the database works on it half the time it runs. Resolves to the
   * number of records, cursors and skips deleted.
   */
  purgeCompleted(options?: PurgeOptions): Promise<number>;
}

/**
 * Run a purge of the cursors' table, resolving to undefined when that table does not exist: a schema migrated by hand
 * before stream cursors existed has none, and purging events must keep working there. Postgres 42P01, MySQL and
 * MariaDB ER_NO_SUCH_TABLE (1146), SQLite "no such table".
 */
export async function ignoreMissingTable<T>(purge: () => Promise<T> | T): Promise<T | undefined> {
  try {
    return await purge();
  } catch (error) {
    const { code, errno, message } = (error ?? {}) as { code?: unknown; errno?: unknown; message?: unknown };
    if (code === '42P01' || errno === 1146 || /no such table/i.test(String(message))) return undefined;
    throw error;
  }
}
