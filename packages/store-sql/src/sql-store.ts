import type { DedupeStore } from '@kyb-webhooks/core';

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
   * passed (DEFAULT_RETAIN_MS, 30 days, unless the receiver was configured otherwise).
   */
  olderThanMs?: number;
}

/**
 * A {@link DedupeStore} kept in a SQL table, with the two chores a table needs: creating it, and deleting the records
 * nobody will ask about again.
 *
 * @example
 * ```ts
 * const store: SqlDedupeStore = createPostgresStore({ pool })
 * await store.ensureSchema()
 * setInterval(() => store.purgeCompleted().catch(logError), 86_400_000).unref()
 * ```
 */
export interface SqlDedupeStore extends DedupeStore {
  /** The table, as configured (possibly schema-qualified). */
  readonly table: string;
  /**
   * Create the table and its index if missing. Idempotent, so it can run at every start-up; the same statements
   * ship as `sql/<dialect>.sql` for those who migrate by hand.
   */
  ensureSchema(): Promise<void>;
  /**
   * Delete completed records whose retention ended (and leases that expired: their holder crashed and no retry
   * came), using the database's clock. Claims already treat those records as absent, so this only reclaims space:
   * run it on a schedule, e.g. daily. Resolves to the number of records deleted.
   */
  purgeCompleted(options?: PurgeOptions): Promise<number>;
}
