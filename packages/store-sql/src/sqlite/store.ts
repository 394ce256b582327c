import {
  checkListStreamsOptions,
  checkSkipArguments,
  checkStreamArguments,
  checkStreamId,
  createLeaseToken,
  cursorRetention,
  inOrderCursorRetention,
  optionRules,
  readStreamPageToken,
  streamPageToken,
  validateOptions,
  type ClaimResult,
  type CompleteInOrderResult,
  type OptionsSpec,
  type SkippedSeq,
} from '@kyb-webhooks/core/store';
import { checkEventId, milliseconds } from '../limits.js';
import { ignoreMissingTable, inBatches, purgePlan, type PurgeOptions, type SqlDedupeStore } from '../sql-store.js';
import { doubleQuoted, parseTableName, skipsTableName, streamsTableName } from '../table-name.js';
import { retryWhileBusy } from './busy.js';
import { sqliteSchema } from './schema.js';

/**
 * The part of a better-sqlite3 statement the store uses.
 *
 * @example
 * ```ts
 * const statement: SqliteStatementLike = db.prepare('SELECT 1')
 * ```
 */
export interface SqliteStatementLike {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
  /** Every row; only `listStreams` needs it (better-sqlite3 and node:sqlite have it). */
  all?(...params: unknown[]): unknown[];
}

/**
 * The part of a better-sqlite3 `Database` the store uses.
 *
 * @example
 * ```ts
 * const database: SqliteDatabaseLike = new Database('./kyb-webhooks.sqlite')
 * ```
 */
export interface SqliteDatabaseLike {
  prepare(sql: string): SqliteStatementLike;
  exec(sql: string): unknown;
  transaction(fn: (...args: never[]) => unknown): { immediate(...args: unknown[]): unknown };
  close(): unknown;
}

/**
 * Options of {@link createSqliteStore}: an open better-sqlite3 `database`, or a `filename` for the store to open.
 *
 * @example
 * ```ts
 * const options: SqliteStoreOptions = { filename: './kyb-webhooks.sqlite', table: 'kyb_webhook_events' }
 * ```
 */
export type SqliteStoreOptions = (
  { database: SqliteDatabaseLike; filename?: never } | { filename: string; database?: never }
) & {
  /** Table name, optionally qualified by an attached database. Default `kyb_webhook_events`. */
  table?: string;
};

/**
 * A SQLite dedupe store; `close()` closes the database only when the store opened it from a `filename`.
 *
 * @example
 * ```ts
 * const store: SqliteDedupeStore = createSqliteStore({ filename: './kyb-webhooks.sqlite' })
 * process.on('SIGTERM', () => void store.close())
 * ```
 */
export interface SqliteDedupeStore extends SqlDedupeStore {
  close(): Promise<void>;
}

const OPTIONS_SPEC: OptionsSpec = {
  owner: 'createSqliteStore',
  example: "createSqliteStore({ filename: './kyb-webhooks.sqlite' })",
  options: {
    database: optionRules.methods(
      ['prepare', 'exec', 'transaction', 'close'],
      "pass a better-sqlite3 Database: new Database('./kyb-webhooks.sqlite')",
    ),
    filename: optionRules.nonEmptyString("a file path, e.g. './kyb-webhooks.sqlite'"),
    table: optionRules.parsedBy(parseTableName),
  },
  aliases: {
    db: 'database',
    client: 'database',
    path: 'filename',
    file: 'filename',
    url: 'filename',
    tableName: 'table',
  },
  refine(values, report) {
    if (values.database !== undefined && values.filename !== undefined) {
      report('database', 'and `filename` are both set: pass one (an open database, or a file for the store to open).');
    } else if (values.database === undefined && values.filename === undefined) {
      report(
        'database',
        "is missing: pass { database } (a better-sqlite3 Database) or { filename: './kyb-webhooks.sqlite' }.",
      );
    }
  },
};

/** SQLite's clock in Unix milliseconds: julianday works on every SQLite version, unixepoch('subsec') only on 3.42+. */
const NOW_MS = `CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`;

/**
 * A dedupe store in a SQLite file through better-sqlite3, for a single host (several processes may share the file).
 * A claim runs in a BEGIN IMMEDIATE transaction, which takes the database's write lock, so concurrent claims from
 * any process are serialised. Lease and retention are decided by SQLite's clock. better-sqlite3 is loaded only when
 * the store opens a `filename`, and is never needed when you pass a `database`. Once its statements are prepared (by
 * the first call), `claim`, `complete` and `release` answer synchronously, as better-sqlite3 does: the receiver then
 * spends no promise or timer on them, and `await` works on either answer.
 *
 * @example
 * ```ts
 * import { createSqliteStore } from '@kyb-webhooks/store-sql/sqlite'
 *
 * const store = createSqliteStore({ filename: './kyb-webhooks.sqlite' })
 * await store.ensureSchema()
 * const receiver = createReceiver({ secrets, attestation, store })
 * ```
 */
export function createSqliteStore(options: SqliteStoreOptions): SqliteDedupeStore {
  validateOptions(options, OPTIONS_SPEC);
  const table = options.table ?? 'kyb_webhook_events';
  const t = doubleQuoted(parseTableName(table));
  const s = doubleQuoted(streamsTableName(parseTableName(table)));
  const k = doubleQuoted(skipsTableName(parseTableName(table)));
  const owned = options.database === undefined;
  let opened: Promise<SqliteDatabaseLike> | undefined;
  let prepared: Promise<Statements> | undefined;
  // The dedupe statements once prepared, so claim, complete and release can answer with values (see the TSDoc): a
  // storeTimeoutMs deadline could not cut a synchronous statement short anyway.
  let ready: Statements | undefined;
  let cursorsPrepared: Promise<CursorStatements> | undefined;
  let skipsPrepared: Promise<SkipStatements> | undefined;

  interface Statements {
    claim: (eventId: string, token: string, leaseMs: number) => ClaimResult['status'];
    complete: SqliteStatementLike;
    release: SqliteStatementLike;
    extend: SqliteStatementLike;
  }

  interface CursorStatements {
    completeInOrder: (
      eventId: string,
      token: string,
      retainMs: number,
      cursorRetainMs: number,
      streamId: string,
      seq: number,
      firstSeq: number,
    ) => CompleteInOrderResult;
    getCursor: SqliteStatementLike;
    advanceCursor: SqliteStatementLike;
    listStreams: SqliteStatementLike;
  }

  interface SkipStatements {
    skipSeq: (
      streamId: string,
      seq: number,
      retainMs: number,
      firstSeq: number,
      reason: string,
      eventId: string | null,
    ) => boolean;
    listSkips: SqliteStatementLike;
  }

  /** The database, opened once even when the first calls come concurrently; a failed open is retried next call. */
  function db(): Promise<SqliteDatabaseLike> {
    if (!opened) {
      opened = options.database ? Promise.resolve(options.database) : openDatabase(options.filename!);
      opened.catch(() => (opened = undefined));
    }
    return opened;
  }

  // Prepared on first use, because preparing fails until ensureSchema (or a migration) made the table; a failure is
  // not remembered, so the call after ensureSchema succeeds.
  function statements(): Promise<Statements> {
    if (!prepared) {
      prepared = db().then(prepare);
      prepared.then(
        (statements) => (ready = statements),
        () => (prepared = undefined),
      );
    }
    return prepared;
  }

  /** `use` runs at once when the statements are prepared, after their preparation otherwise (the first calls). */
  function withStatements<T>(use: (statements: Statements) => T): T | Promise<T> {
    return ready ? use(ready) : statements().then(use);
  }

  // Apart from the dedupe statements, so that a table migrated by hand before stream cursors existed keeps working
  // for dedupe: only the cursor methods need the cursors' table.
  function cursorStatements(): Promise<CursorStatements> {
    if (!cursorsPrepared) {
      cursorsPrepared = db().then(prepareCursors);
      cursorsPrepared.catch(() => (cursorsPrepared = undefined));
    }
    return cursorsPrepared;
  }

  // Apart again, so that a schema made before skips existed keeps its cursors working until ensureSchema adds the table.
  function skipStatements(): Promise<SkipStatements> {
    if (!skipsPrepared) {
      skipsPrepared = db().then(prepareSkips);
      skipsPrepared.catch(() => (skipsPrepared = undefined));
    }
    return skipsPrepared;
  }

  function prepareSkips(database: SqliteDatabaseLike): SkipStatements {
    const cursor = database.prepare(`SELECT seq FROM ${s} WHERE stream_id = ? AND expires_at > ${NOW_MS}`);
    const setCursor = database.prepare(`INSERT INTO ${s} (stream_id, seq, expires_at, updated_at, active_at)
VALUES (?, ?, ${NOW_MS} + ?, ${NOW_MS}, ${NOW_MS})
ON CONFLICT (stream_id) DO UPDATE
  SET seq = excluded.seq, expires_at = excluded.expires_at, updated_at = excluded.updated_at, active_at = excluded.active_at`);
    const record = database.prepare(`INSERT INTO ${k} (stream_id, seq, reason, event_id, skipped_at, expires_at)
VALUES (?, ?, ?, ?, ${NOW_MS}, ${NOW_MS} + ?)
ON CONFLICT (stream_id, seq) DO UPDATE
  SET reason = excluded.reason, event_id = excluded.event_id, skipped_at = excluded.skipped_at, expires_at = excluded.expires_at`);
    // Cursor check and both writes in one IMMEDIATE transaction, as completeInOrder.
    const skipSeq = database.transaction(
      (
        streamId: string,
        seq: number,
        retainMs: number,
        firstSeq: number,
        reason: string,
        eventId: string | null,
      ): boolean => {
        const row = cursor.get(streamId) as { seq: number | bigint } | undefined;
        if (row === undefined ? seq !== firstSeq : Number(row.seq) !== seq - 1) return false;
        setCursor.run(streamId, seq, retainMs);
        record.run(streamId, seq, reason, eventId, retainMs);
        return true;
      },
    );
    return {
      skipSeq: (...args) => skipSeq.immediate(...args) as boolean,
      listSkips: database.prepare(
        `SELECT seq, reason, event_id, skipped_at FROM ${k} WHERE stream_id = ? AND expires_at > ${NOW_MS} ORDER BY seq`,
      ),
    };
  }

  function prepare(database: SqliteDatabaseLike): Statements {
    const take = database.prepare(`INSERT INTO ${t} (event_id, state, token, expires_at, updated_at)
VALUES (?, 'in_progress', ?, ${NOW_MS} + ?, ${NOW_MS})
ON CONFLICT (event_id) DO UPDATE
  SET state = 'in_progress', token = excluded.token, expires_at = excluded.expires_at, updated_at = excluded.updated_at
  WHERE expires_at <= ${NOW_MS}`);
    const find = database.prepare(`SELECT state FROM ${t} WHERE event_id = ?`);
    // Upsert and read in one IMMEDIATE transaction: it holds the write lock throughout, so what is read is what the
    // upsert left alone, even with other processes on the same file.
    const claim = database.transaction((eventId: string, token: string, leaseMs: number): ClaimResult['status'] => {
      if (take.run(eventId, token, leaseMs).changes === 1) return 'acquired';
      return (find.get(eventId) as { state: 'in_progress' | 'completed' }).state;
    });
    return {
      claim: (eventId, token, leaseMs) => claim.immediate(eventId, token, leaseMs) as ClaimResult['status'],
      complete: database.prepare(`UPDATE ${t}
SET state = 'completed', updated_at = ${NOW_MS}, expires_at = ${NOW_MS} + ?
WHERE event_id = ? AND token = ? AND state = 'in_progress' AND expires_at > ${NOW_MS}`),
      release: database.prepare(
        `DELETE FROM ${t} WHERE event_id = ? AND token = ? AND state = 'in_progress' AND expires_at > ${NOW_MS}`,
      ),
      extend: database.prepare(`UPDATE ${t} SET expires_at = ${NOW_MS} + ?
WHERE event_id = ? AND token = ? AND state = 'in_progress' AND expires_at > ${NOW_MS}`),
    };
  }

  function prepareCursors(database: SqliteDatabaseLike): CursorStatements {
    const holds = database.prepare(
      `SELECT 1 FROM ${t} WHERE event_id = ? AND token = ? AND state = 'in_progress' AND expires_at > ${NOW_MS}`,
    );
    const cursor = database.prepare(`SELECT seq FROM ${s} WHERE stream_id = ? AND expires_at > ${NOW_MS}`);
    const finish = database.prepare(`UPDATE ${t}
SET state = 'completed', updated_at = ${NOW_MS}, expires_at = ${NOW_MS} + ?
WHERE event_id = ?`);
    const setCursor = database.prepare(`INSERT INTO ${s} (stream_id, seq, expires_at, updated_at, active_at)
VALUES (?, ?, ${NOW_MS} + ?, ${NOW_MS}, ${NOW_MS})
ON CONFLICT (stream_id) DO UPDATE
  SET seq = excluded.seq, expires_at = excluded.expires_at, updated_at = excluded.updated_at, active_at = excluded.active_at`);
    // Lease check, cursor check and both writes in one IMMEDIATE transaction: the write lock is held from the first
    // read to the commit, so no other connection or process can move the cursor or take the lease in between.
    const completeInOrder = database.transaction(
      (
        eventId: string,
        token: string,
        retainMs: number,
        cursorRetainMs: number,
        streamId: string,
        seq: number,
        firstSeq: number,
      ): CompleteInOrderResult => {
        if (holds.get(eventId, token) === undefined) return 'lease_lost';
        const row = cursor.get(streamId) as { seq: number | bigint } | undefined;
        // Number(): a database in safe-integers mode reads seq as a BigInt, which never equals a number.
        if (row === undefined ? seq !== firstSeq : Number(row.seq) !== seq - 1) return 'cursor_moved';
        finish.run(retainMs, eventId);
        setCursor.run(streamId, seq, cursorRetainMs);
        return 'completed';
      },
    );
    return {
      completeInOrder: (...args) => completeInOrder.immediate(...args) as CompleteInOrderResult,
      getCursor: cursor,
      // One statement: an upsert that leaves a live cursor at or beyond seq alone; an expired one counts as none.
      advanceCursor: database.prepare(`INSERT INTO ${s} AS c (stream_id, seq, expires_at, updated_at, active_at)
VALUES (?, ?, ${NOW_MS} + ?, ${NOW_MS}, ${NOW_MS})
ON CONFLICT (stream_id) DO UPDATE
  SET seq = excluded.seq, expires_at = excluded.expires_at, updated_at = excluded.updated_at, active_at = excluded.active_at
  WHERE c.seq < excluded.seq OR c.expires_at <= ${NOW_MS}`),
      // Keyset paging on the (active_at, stream_id) index: the row after the last one listed, one more than a page.
      listStreams: database.prepare(`SELECT stream_id, seq, active_at FROM ${s}
WHERE expires_at > ${NOW_MS} AND active_at >= ? AND (active_at, stream_id) > (?, ?)
ORDER BY active_at, stream_id LIMIT ?`),
    };
  }

  return {
    table,
    claim(eventId, { leaseMs }) {
      checkEventId(eventId);
      const lease = milliseconds('leaseMs', leaseMs);
      const token = createLeaseToken();
      return withStatements((statements): ClaimResult => {
        const status = statements.claim(eventId, token, lease);
        return status === 'acquired' ? { status, token } : { status };
      });
    },
    complete(eventId, token, { retainMs }) {
      checkEventId(eventId);
      const retain = milliseconds('retainMs', retainMs);
      return withStatements((statements) => statements.complete.run(retain, eventId, token).changes === 1);
    },
    release(eventId, token) {
      checkEventId(eventId);
      return withStatements((statements) => statements.release.run(eventId, token).changes === 1);
    },
    extend(eventId, token, { leaseMs }) {
      checkEventId(eventId);
      const lease = milliseconds('leaseMs', leaseMs);
      return withStatements((statements) => statements.extend.run(lease, eventId, token).changes === 1);
    },
    async getCursor(streamId): Promise<number | null> {
      checkStreamId(streamId);
      const row = (await cursorStatements()).getCursor.get(streamId) as { seq: number } | undefined;
      return row === undefined ? null : Number(row.seq);
    },
    async completeInOrder(eventId, token, options): Promise<CompleteInOrderResult> {
      const { retainMs, streamId, seq, firstSeq } = options;
      checkEventId(eventId);
      checkStreamArguments(streamId, seq, firstSeq);
      const retain = milliseconds('retainMs', retainMs);
      const cursorRetain = milliseconds('cursorRetainMs', inOrderCursorRetention(options));
      return (await cursorStatements()).completeInOrder(eventId, token, retain, cursorRetain, streamId, seq, firstSeq);
    },
    async advanceCursor(streamId, seq, advance): Promise<boolean> {
      checkStreamArguments(streamId, seq);
      const retainMs = milliseconds('retainMs', cursorRetention(advance));
      return (await cursorStatements()).advanceCursor.run(streamId, seq, retainMs).changes === 1;
    },
    async skipSeq(streamId, seq, skip): Promise<boolean> {
      const { firstSeq } = checkSkipArguments(streamId, seq, skip);
      const retainMs = milliseconds('retainMs', skip.retainMs);
      return (await skipStatements()).skipSeq(streamId, seq, retainMs, firstSeq, skip.reason, skip.eventId ?? null);
    },
    async listSkips(streamId): Promise<SkippedSeq[]> {
      checkStreamId(streamId);
      const statement = (await skipStatements()).listSkips;
      if (typeof statement.all !== 'function') {
        throw new TypeError(
          'listSkips needs the statements of a better-sqlite3 (or node:sqlite) database: they have all().',
        );
      }
      const rows = statement.all(streamId) as {
        seq: number | bigint;
        reason: string;
        event_id: string | null;
        skipped_at: number | bigint;
      }[];
      return rows.map((row) => {
        const skip: SkippedSeq = { seq: Number(row.seq), reason: row.reason, skippedAt: Number(row.skipped_at) };
        if (row.event_id !== null) skip.eventId = row.event_id;
        return skip;
      });
    },
    async listStreams(listOptions) {
      const { activeSince, limit, after } = checkListStreamsOptions(listOptions);
      const from = after === undefined ? { activeAt: -1, streamId: '' } : readStreamPageToken(after);
      const statement = (await cursorStatements()).listStreams;
      if (typeof statement.all !== 'function') {
        throw new TypeError(
          'listStreams needs the statements of a better-sqlite3 (or node:sqlite) database: they have all().',
        );
      }
      const rows = statement.all(activeSince, from.activeAt, from.streamId, limit + 1) as {
        stream_id: string;
        seq: number;
        active_at: number;
      }[];
      const streams = rows
        .slice(0, limit)
        .map((row) => ({ streamId: row.stream_id, seq: Number(row.seq), activeAt: Number(row.active_at) }));
      const last = streams[streams.length - 1];
      return { streams, next: rows.length > limit && last ? streamPageToken(last.activeAt, last.streamId) : undefined };
    },
    async ensureSchema(): Promise<void> {
      const database = await db();
      // One IMMEDIATE transaction: the write lock is taken up front (waiting through the busy timeout), the table
      // and its index appear together, and a SQLITE_BUSY that SQLite returns without waiting is retried (./busy.ts).
      const create = database.transaction(() => database.exec(sqliteSchema(table)));
      await retryWhileBusy(() => create.immediate());
    },
    async purgeCompleted(purge: PurgeOptions = {}): Promise<number> {
      const plan = purgePlan(purge);
      const expired = `expires_at <= ${NOW_MS}`;
      const database = await db();
      // The tables are WITHOUT ROWID: a batch names its rows by primary key. Each batch is a write transaction of its
      // own, and other connections (processes sharing the file) get the lock between batches.
      const batch = (from: string, key: string, where: string, values: unknown[] = []) => {
        const statement = database.prepare(
          `DELETE FROM ${from} WHERE (${key}) IN (SELECT ${key} FROM ${from} WHERE ${where} LIMIT ${plan.size})`,
        );
        return inBatches(plan, () => statement.run(...values).changes);
      };
      const records =
        purge.olderThanMs === undefined
          ? await batch(t, 'event_id', expired)
          : await batch(t, 'event_id', `${expired} OR (state = 'completed' AND updated_at <= ${NOW_MS} - ?)`, [
              milliseconds('olderThanMs', purge.olderThanMs),
            ]);
      // Stream cursors go only once their own retention passed, whatever olderThanMs says (see PurgeOptions); a file
      // set up by hand before cursors existed has none to purge.
      const cursors = await ignoreMissingTable(() => batch(s, 'stream_id', expired));
      const skips = await ignoreMissingTable(() => batch(k, 'stream_id, seq', expired));
      return records + (cursors ?? 0) + (skips ?? 0);
    },
    async close(): Promise<void> {
      if (owned && opened) (await opened).close();
    },
  };
}

/** How long a statement waits for another process's lock before SQLITE_BUSY (better-sqlite3's default, made explicit). */
const BUSY_TIMEOUT_MS = 5_000;

/**
 * Open a file with better-sqlite3, loaded only now so that the other stores never need it installed. WAL lets
 * readers and the one writer proceed together. The busy timeout is set by the constructor, before any statement;
 * the WAL switch does not honour it (see ./busy.ts), so it is retried, and made only by the first process: the
 * journal mode is stored in the file, and asserting it again would contend for the whole file for nothing.
 */
async function openDatabase(filename: string): Promise<SqliteDatabaseLike> {
  type Constructor = new (filename: string, options: { timeout: number }) => SqliteDatabaseLike;
  const module = (await import('better-sqlite3')) as unknown as { default?: Constructor };
  const Database = module.default ?? (module as unknown as Constructor);
  const db = new Database(filename, { timeout: BUSY_TIMEOUT_MS });
  try {
    await retryWhileBusy(() => {
      const { journal_mode: mode } = db.prepare('PRAGMA journal_mode').get() as { journal_mode: string };
      if (mode.toLowerCase() !== 'wal') db.exec('PRAGMA journal_mode = WAL');
    });
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}
