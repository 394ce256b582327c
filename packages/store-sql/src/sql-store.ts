import type { ListStreamsOptions, StreamCursorStore, StreamPage } from '@kyb-webhooks/core/store';

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
  /** See {@link StreamCursorStore.listStreams}; pages through the `(active_at, stream_id)` index of `<table>_streams`. */
  listStreams(options: ListStreamsOptions): Promise<StreamPage>;
  /**
   * Create the tables and the index if missing (the cursors' table too, so running it again after an upgrade adds it). Idempotent, so it can run at every start-up; the same statements
   * ship as `sql/<dialect>.sql` for those who migrate by hand.
   */
  ensureSchema(): Promise<void>;
  /**
   * Delete completed records whose retention ended (and leases that expired: their holder crashed and no retry
   * came), using the database's clock. Claims already treat those records as absent, so this only reclaims space:
   * run it on a schedule, e.g. daily. Stream cursors whose retention ended go too. Resolves to the number of records
   * and cursors deleted.
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
