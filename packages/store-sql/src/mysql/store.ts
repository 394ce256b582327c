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
  type OptionRule,
  type OptionsSpec,
  type SkippedSeq,
} from '@kyb-webhooks/core/store';
import { checkEventId, milliseconds } from '../limits.js';
import { ignoreMissingTable, purgePlan, type PurgeOptions, type SqlDedupeStore } from '../sql-store.js';
import { parseTableName, skipsTableName, streamsTableName } from '../table-name.js';
import { isDeadlock, MAX_DEADLOCK_ATTEMPTS, retryingDeadlocks } from './deadlock.js';
import { purgeMySqlTable } from './purge.js';
import { backquoted, mysqlSchema } from './schema.js';

/**
 * What the store needs from mysql2: the promise API's `query(sql, values)`. A `mysql2/promise` pool (or connection)
 * fits; the store never ends it. `query`, not `execute`: one round trip, no server-side statement per connection.
 *
 * @example
 * ```ts
 * const db: MySqlQueryable = mysql.createPool(process.env.DATABASE_URL ?? 'mysql://kyb@127.0.0.1:3306/shop')
 * ```
 */
export interface MySqlQueryable {
  query(sql: string, values?: unknown[]): Promise<[unknown, unknown]>;
}

/**
 * Options of {@link createMySqlStore}.
 *
 * @example
 * ```ts
 * const options: MySqlStoreOptions = { pool: mysql.createPool(url), table: 'kyb_webhook_events' }
 * ```
 */
export interface MySqlStoreOptions {
  /** A `mysql2/promise` pool: `mysql.createPool(url)`. */
  pool: MySqlQueryable;
  /** Table name, optionally database-qualified. Default `kyb_webhook_events`. */
  table?: string;
}

interface OkPacket {
  affectedRows: number;
  insertId: number | string | bigint;
}

const POOL_FIX = "pass a pool from mysql.createPool(url) of 'mysql2/promise'";
const hasQuery = optionRules.methods(['query'], POOL_FIX);
const poolRule: OptionRule = (value, path, report) => {
  const problem = hasQuery(value, path, report);
  if (problem !== undefined) return problem;
  // Only mysql2's callback API has promise(); its query() returns no promise, which would fail on every claim.
  if (typeof (value as { promise?: unknown }).promise === 'function') {
    return "is a callback-style mysql2 pool: pass pool.promise(), or create it with createPool from 'mysql2/promise'.";
  }
  return undefined;
};

const OPTIONS_SPEC: OptionsSpec = {
  owner: 'createMySqlStore',
  example: "createMySqlStore({ pool: mysql.createPool(process.env.DATABASE_URL) }) with mysql from 'mysql2/promise'",
  options: {
    pool: optionRules.required(poolRule, `${POOL_FIX}.`),
    table: optionRules.parsedBy(parseTableName),
  },
  aliases: { client: 'pool', connection: 'pool', db: 'pool', database: 'pool', tableName: 'table' },
};

// UTC_TIMESTAMP(3) is the database's clock and, unlike NOW(), ignores the session time zone, which may differ
// between the connections of a pool. MySQL evaluates it once per statement.
const NOW = 'UTC_TIMESTAMP(3)';
/** The same clock in Unix milliseconds, for the cursors' active_at: DATETIME arithmetic, so no time zone enters. */
const NOW_MS = `(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', ${NOW}) DIV 1000)`;

/** What the claim statement reports through LAST_INSERT_ID(expr) when the event already had a record. */
const TAKEN_OVER = 1;
const FOUND_IN_PROGRESS = 2;
const FOUND_COMPLETED = 3;

/** Most streams remembered as having a cursor row ready for their first event; older ones are forgotten first. */
const MAX_READY_STREAMS = 1024;

/**
 * A dedupe store in MySQL 8 or MariaDB 10.5+ through mysql2. Claiming is ONE statement: INSERT … ON DUPLICATE KEY
 * UPDATE that takes over only an expired record, so the happy path is exactly two round trips per event (claim,
 * complete). Lease and retention are decided by the database's clock. Errors are thrown (the receiver answers 503
 * `store_unavailable`).
 *
 * @example
 * ```ts
 * import mysql from 'mysql2/promise'
 * import { createMySqlStore } from '@kyb-webhooks/store-sql/mysql'
 *
 * const store = createMySqlStore({ pool: mysql.createPool(process.env.DATABASE_URL ?? 'mysql://kyb@127.0.0.1:3306/shop') })
 * await store.ensureSchema()
 * const receiver = createReceiver({ secrets, attestation, store })
 * ```
 */
export function createMySqlStore(options: MySqlStoreOptions): SqlDedupeStore {
  validateOptions(options, OPTIONS_SPEC);
  const pool = options.pool;
  const table = options.table ?? 'kyb_webhook_events';
  const t = backquoted(parseTableName(table));
  const s = backquoted(streamsTableName(parseTableName(table)));
  const k = backquoted(skipsTableName(parseTableName(table)));
  const expired = `expires_at <= ${NOW}`;

  // mysql2's affectedRows cannot tell a fresh insert from a duplicate left alone (both are 1 with CLIENT_FOUND_ROWS),
  // so on a duplicate the statement reports what it found through LAST_INSERT_ID(expr), which the server returns
  // as the OK packet's insertId; a fresh insert returns insertId 0 (the table has no AUTO_INCREMENT column). The
  // code is computed first, from the record as it was; expires_at is assigned last because the other assignments
  // test it (MySQL assigns left to right).
  const found = `IF(${expired}, ${TAKEN_OVER}, IF(state = 'completed', ${FOUND_COMPLETED}, ${FOUND_IN_PROGRESS}))`;
  const claimSql = `INSERT INTO ${t} (event_id, state, token, expires_at, updated_at)
VALUES (?, 'in_progress', ?, ${NOW} + INTERVAL ? MICROSECOND, ${NOW})
ON DUPLICATE KEY UPDATE
  token = IF(LAST_INSERT_ID(${found}) = ${TAKEN_OVER}, ?, token),
  state = IF(${expired}, 'in_progress', state),
  updated_at = IF(${expired}, ${NOW}, updated_at),
  expires_at = IF(${expired}, ${NOW} + INTERVAL ? MICROSECOND, expires_at)`;

  // Only when the insertId is not one of the codes above (a proxy that drops it, a table someone altered): read the
  // record and compare tokens, which tells who won just as surely, for one more round trip.
  const whoWonSql = `SELECT token, state, expires_at > ${NOW} AS live FROM ${t} WHERE event_id = ?`;

  const completeSql = `UPDATE ${t}
SET state = 'completed', updated_at = ${NOW}, expires_at = ${NOW} + INTERVAL ? MICROSECOND
WHERE event_id = ? AND token = ? AND state = 'in_progress' AND expires_at > ${NOW}`;

  const releaseSql = `DELETE FROM ${t}
WHERE event_id = ? AND token = ? AND state = 'in_progress' AND expires_at > ${NOW}`;

  const extendSql = `UPDATE ${t}
SET expires_at = ${NOW} + INTERVAL ? MICROSECOND
WHERE event_id = ? AND token = ? AND state = 'in_progress' AND expires_at > ${NOW}`;

  // completeInOrder is ONE multi-table UPDATE: InnoDB locks the event row and the cursor row and writes both or
  // neither. It needs the cursor row to exist, so a stream's first event needs an expired placeholder (which reads
  // as no cursor) before it: getCursor inserts it when told `firstEvent`, else completeInOrder does. A cursor that
  // expired counts as none: only firstSeq may start it again. mysql2 connects with CLIENT_FOUND_ROWS, so
  // affectedRows counts the matched rows: 2 when it applied, 0 when not.
  const completeInOrderSql = `UPDATE ${t} e JOIN ${s} c ON c.stream_id = ?
SET e.state = 'completed', e.updated_at = ${NOW}, e.expires_at = ${NOW} + INTERVAL ? MICROSECOND,
  c.seq = ?, c.updated_at = ${NOW}, c.active_at = ${NOW_MS}, c.expires_at = ${NOW} + INTERVAL ? MICROSECOND
WHERE e.event_id = ? AND e.token = ? AND e.state = 'in_progress' AND e.expires_at > ${NOW}
  AND IF(c.expires_at > ${NOW}, c.seq = ? - 1, ? = ?)`;
  // IGNORE only turns the duplicate key into a warning here: the id and seq were checked before, so nothing else can be.
  const placeholderSql = `INSERT IGNORE INTO ${s} (stream_id, seq, expires_at, updated_at, active_at) VALUES (?, -1, ${NOW}, ${NOW}, ${NOW_MS})`;
  const leaseSql = `SELECT 1 AS held FROM ${t}
WHERE event_id = ? AND token = ? AND state = 'in_progress' AND expires_at > ${NOW}`;
  const getCursorSql = `SELECT seq FROM ${s} WHERE stream_id = ? AND expires_at > ${NOW}`;
  const moveCursorSql = `UPDATE ${s} SET seq = ?, updated_at = ${NOW}, active_at = ${NOW_MS}, expires_at = ${NOW} + INTERVAL ? MICROSECOND
WHERE stream_id = ? AND (seq < ? OR expires_at <= ${NOW})`;
  const startCursorSql = `INSERT IGNORE INTO ${s} (stream_id, seq, expires_at, updated_at, active_at)
VALUES (?, ?, ${NOW} + INTERVAL ? MICROSECOND, ${NOW}, ${NOW_MS})`;
  // skipSeq is ONE multi-table UPDATE, as completeInOrder: InnoDB locks the cursor row and the skip row and writes both
  // or neither. Both rows must exist first: the skip's as an expired placeholder (it reads as no skip, and is purged),
  // the cursor's as completeInOrder's placeholder when the skip may start the stream. affectedRows counts matched rows
  // (CLIENT_FOUND_ROWS): 2 when it applied, 0 when the cursor was elsewhere.
  const skipPlaceholderSql = `INSERT IGNORE INTO ${k} (stream_id, seq, reason, event_id, skipped_at, expires_at) VALUES (?, ?, '', NULL, 0, ${NOW})`;
  const skipSeqSql = `UPDATE ${s} c JOIN ${k} x ON x.stream_id = c.stream_id AND x.seq = ?
SET x.reason = ?, x.event_id = ?, x.skipped_at = ${NOW_MS}, x.expires_at = ${NOW} + INTERVAL ? MICROSECOND,
  c.seq = ?, c.updated_at = ${NOW}, c.active_at = ${NOW_MS}, c.expires_at = ${NOW} + INTERVAL ? MICROSECOND
WHERE c.stream_id = ? AND IF(c.expires_at > ${NOW}, c.seq = ? - 1, ? = ?)`;
  const listSkipsSql = `SELECT seq, reason, event_id, skipped_at FROM ${k} WHERE stream_id = ? AND expires_at > ${NOW} ORDER BY seq`;

  // Keyset paging on the (active_at, stream_id) index: the row after the last one listed, one more than a page.
  const listStreamsSql = `SELECT stream_id, seq, active_at FROM ${s}
WHERE expires_at > ${NOW} AND active_at >= ? AND (active_at, stream_id) > (?, ?)
ORDER BY active_at, stream_id LIMIT ?`;

  async function completeInOrderOnce(
    id: Buffer,
    token: string,
    retainUs: number,
    cursorRetainUs: number,
    streamId: Buffer,
    seq: number,
    firstSeq: number,
    rowReady: boolean,
  ): Promise<CompleteInOrderResult> {
    const values = [streamId, retainUs, seq, cursorRetainUs, id, token, seq, seq, firstSeq];
    const update = async () =>
      ((await pool.query(completeInOrderSql, values)) as [OkPacket, unknown])[0].affectedRows > 0;
    // A stream's first event needs the cursor row before the UPDATE. When a hinted getCursor just made sure of it
    // (`rowReady`), the UPDATE goes alone: one statement. Otherwise the placeholder goes first (a no-op when the row is
    // there): two statements, instead of a refused UPDATE and two more.
    if (seq === firstSeq && !rowReady) await pool.query(placeholderSql, [streamId]);
    if (await update()) return 'completed';
    if (seq === firstSeq && rowReady) {
      // The row may have gone since getCursor (purgeCompleted deletes the expired placeholder): put it back, and if it
      // was missing, that was why the UPDATE was refused, so run it again. If it was there, the refusal stands.
      const [inserted] = (await pool.query(placeholderSql, [streamId])) as [OkPacket, unknown];
      if (inserted.affectedRows === 1 && (await update())) return 'completed';
    }
    // Refused: tell a lost lease from a cursor elsewhere (one more round trip, only off the happy path). Nothing was
    // written either way; if the lease ended between the two statements the answer is lease_lost, which is as true.
    const [rows] = (await pool.query(leaseSql, [id, token])) as [unknown[], unknown];
    return rows.length > 0 ? 'cursor_moved' : 'lease_lost';
  }

  // Streams whose cursor row a hinted getCursor found or created (in this process): their first event's completeInOrder
  // skips the placeholder, which is what makes enforce's first event cost one round trip more than ordering off, not
  // two. Only a hint, taken once: a stream missing here pays the placeholder, and completeInOrder copes with a row
  // that vanished. Bounded, because getCursor may be told of streams whose event never completes (late, duplicate).
  const readyStreams = new Set<string>();
  function markReady(streamId: string): void {
    readyStreams.delete(streamId);
    if (readyStreams.size >= MAX_READY_STREAMS) readyStreams.delete(readyStreams.values().next().value!);
    readyStreams.add(streamId);
  }

  async function claimOnce(id: Buffer, token: string, leaseUs: number): Promise<ClaimResult | undefined> {
    const [ok] = (await pool.query(claimSql, [id, token, leaseUs, token, leaseUs])) as [OkPacket, unknown];
    const code = Number(ok.insertId);
    if (code === 0 && ok.affectedRows === 1) return { status: 'acquired', token };
    if (code === TAKEN_OVER && ok.affectedRows === 2) return { status: 'acquired', token };
    if (code === FOUND_IN_PROGRESS) return { status: 'in_progress' };
    if (code === FOUND_COMPLETED) return { status: 'completed' };
    const [rows] = (await pool.query(whoWonSql, [id])) as [{ token: string; state: string; live: number }[], unknown];
    const record = rows[0];
    if (!record || !Number(record.live)) return undefined; // released or expired meanwhile: claim again
    if (record.token === token && record.state === 'in_progress') return { status: 'acquired', token };
    return { status: record.state === 'completed' ? 'completed' : 'in_progress' };
  }

  return {
    table,
    async claim(eventId, { leaseMs }): Promise<ClaimResult> {
      checkEventId(eventId);
      const leaseUs = milliseconds('leaseMs', leaseMs) * 1000;
      const token = createLeaseToken();
      // Bytes, not a string: they reach the VARBINARY key as X'…' whatever the connection's character set.
      const id = Buffer.from(eventId, 'utf8');
      for (let attempt = 1; attempt <= MAX_DEADLOCK_ATTEMPTS; attempt++) {
        try {
          const result = await claimOnce(id, token, leaseUs);
          if (result) return result;
        } catch (error) {
          // InnoDB may pick a claim as a deadlock victim when many race for one new key; the statement was rolled
          // back as a whole, so running it again is safe.
          if (!isDeadlock(error) || attempt === MAX_DEADLOCK_ATTEMPTS) throw error;
        }
      }
      throw new Error(`Could not claim the event after ${MAX_DEADLOCK_ATTEMPTS} attempts under contention.`);
    },
    async complete(eventId, token, { retainMs }): Promise<boolean> {
      checkEventId(eventId);
      const retainUs = milliseconds('retainMs', retainMs) * 1000;
      const values = [retainUs, Buffer.from(eventId, 'utf8'), token];
      // A deadlock victim's UPDATE was rolled back as a whole: running it again answers as it would have.
      const [ok] = (await retryingDeadlocks(() => pool.query(completeSql, values))) as [OkPacket, unknown];
      return ok.affectedRows === 1;
    },
    async release(eventId, token): Promise<boolean> {
      checkEventId(eventId);
      const values = [Buffer.from(eventId, 'utf8'), token];
      const [ok] = (await retryingDeadlocks(() => pool.query(releaseSql, values))) as [OkPacket, unknown];
      return ok.affectedRows === 1;
    },
    async extend(eventId, token, { leaseMs }): Promise<boolean> {
      checkEventId(eventId);
      const values = [milliseconds('leaseMs', leaseMs) * 1000, Buffer.from(eventId, 'utf8'), token];
      // CLIENT_FOUND_ROWS: a row matched counts, even were its expires_at unchanged.
      const [ok] = (await retryingDeadlocks(() => pool.query(extendSql, values))) as [OkPacket, unknown];
      return ok.affectedRows === 1;
    },
    async getCursor(streamId, hint): Promise<number | null> {
      checkStreamId(streamId);
      const stream = Buffer.from(streamId, 'utf8');
      if (hint?.firstEvent === true) {
        // The placeholder completeInOrder needs, in the read's round trip: if it was inserted, no row existed, so there
        // is no cursor (the placeholder reads as none). If a row was there, it may be a cursor: read it.
        try {
          const [inserted] = (await pool.query(placeholderSql, [stream])) as [OkPacket, unknown];
          markReady(streamId);
          if (inserted.affectedRows === 1) return null;
        } catch (error) {
          // A deadlock victim inserted nothing, and the hint is optional: the plain read answers the same.
          if (!isDeadlock(error)) throw error;
        }
      }
      const [rows] = (await pool.query(getCursorSql, [stream])) as [{ seq: number | string }[], unknown];
      return rows[0] === undefined ? null : Number(rows[0].seq);
    },
    async completeInOrder(eventId, token, options): Promise<CompleteInOrderResult> {
      const { retainMs, streamId, seq, firstSeq } = options;
      checkEventId(eventId);
      checkStreamArguments(streamId, seq, firstSeq);
      const retainUs = milliseconds('retainMs', retainMs) * 1000;
      const cursorRetainUs = milliseconds('cursorRetainMs', inOrderCursorRetention(options)) * 1000;
      const [id, stream] = [Buffer.from(eventId, 'utf8'), Buffer.from(streamId, 'utf8')];
      const rowReady = seq === firstSeq && readyStreams.delete(streamId);
      return retryingDeadlocks(() =>
        completeInOrderOnce(id, token, retainUs, cursorRetainUs, stream, seq, firstSeq, rowReady),
      );
    },
    async advanceCursor(streamId, seq, advance): Promise<boolean> {
      checkStreamArguments(streamId, seq);
      const retainUs = milliseconds('retainMs', cursorRetention(advance)) * 1000;
      const stream = Buffer.from(streamId, 'utf8');
      const move = async () =>
        ((await pool.query(moveCursorSql, [seq, retainUs, stream, seq])) as [OkPacket, unknown])[0].affectedRows > 0;
      if (await move()) return true;
      const [inserted] = (await pool.query(startCursorSql, [stream, seq, retainUs])) as [OkPacket, unknown];
      if (inserted.affectedRows === 1) return true;
      // Another caller created the cursor between the two statements: now that it exists, the UPDATE decides.
      return move();
    },
    async skipSeq(streamId, seq, skip): Promise<boolean> {
      const { firstSeq } = checkSkipArguments(streamId, seq, skip);
      const retainUs = milliseconds('retainMs', skip.retainMs) * 1000;
      const stream = Buffer.from(streamId, 'utf8');
      // Bytes, as the event ids: the reason reaches its VARBINARY column unchanged whatever the connection's charset.
      const reason = Buffer.from(skip.reason, 'utf8');
      const eventId = skip.eventId === undefined ? null : Buffer.from(skip.eventId, 'utf8');
      const values = [seq, reason, eventId, retainUs, seq, retainUs, stream, seq, seq, firstSeq];
      // Each statement runs with autocommit and is idempotent, so a deadlock victim's step runs again from the top.
      return retryingDeadlocks(async () => {
        if (seq === firstSeq) await pool.query(placeholderSql, [stream]);
        await pool.query(skipPlaceholderSql, [stream, seq]);
        const [ok] = (await pool.query(skipSeqSql, values)) as [OkPacket, unknown];
        return ok.affectedRows > 0;
      });
    },
    async listSkips(streamId): Promise<SkippedSeq[]> {
      checkStreamId(streamId);
      const [rows] = (await pool.query(listSkipsSql, [Buffer.from(streamId, 'utf8')])) as [
        {
          seq: number | string;
          reason: Buffer | string;
          event_id: Buffer | string | null;
          skipped_at: number | string;
        }[],
        unknown,
      ];
      const text = (value: Buffer | string) => (Buffer.isBuffer(value) ? value.toString('utf8') : String(value));
      return rows.map((row) => {
        const skip: SkippedSeq = { seq: Number(row.seq), reason: text(row.reason), skippedAt: Number(row.skipped_at) };
        if (row.event_id !== null) skip.eventId = text(row.event_id);
        return skip;
      });
    },
    async listStreams(listOptions) {
      const { activeSince, limit, after } = checkListStreamsOptions(listOptions);
      const from = after === undefined ? { activeAt: -1, streamId: '' } : readStreamPageToken(after);
      const values = [activeSince, from.activeAt, Buffer.from(from.streamId, 'utf8'), limit + 1];
      const [rows] = (await pool.query(listStreamsSql, values)) as [
        { stream_id: Buffer | string; seq: number | string; active_at: number | string }[],
        unknown,
      ];
      const streams = rows.slice(0, limit).map((row) => ({
        streamId: Buffer.isBuffer(row.stream_id) ? row.stream_id.toString('utf8') : String(row.stream_id),
        seq: Number(row.seq),
        activeAt: Number(row.active_at),
      }));
      const last = streams[streams.length - 1];
      return { streams, next: rows.length > limit && last ? streamPageToken(last.activeAt, last.streamId) : undefined };
    },
    async ensureSchema(): Promise<void> {
      // One statement per query: mysql2 refuses several in one unless the pool enables multipleStatements.
      for (const statement of mysqlSchema(table).split(/;\n/)) if (statement.trim() !== '') await pool.query(statement);
    },
    async purgeCompleted(purge: PurgeOptions = {}): Promise<number> {
      const plan = purgePlan(purge);
      const records = await purgeMySqlTable(
        pool,
        plan,
        purge.olderThanMs === undefined
          ? { from: t, key: { event_id: 'bytes' }, where: expired }
          : {
              from: t,
              key: { event_id: 'bytes' },
              // A whole number of µs (milliseconds() checked it), written into the condition: see PurgeTarget.
              where: `${expired} OR (state = 'completed' AND updated_at <= ${NOW} - INTERVAL ${
                milliseconds('olderThanMs', purge.olderThanMs) * 1000
              } MICROSECOND)`,
            },
      );
      // Stream cursors go only once their own retention passed, whatever olderThanMs says (see PurgeOptions); a schema
      // migrated by hand before cursors existed has none to purge.
      const cursors = await ignoreMissingTable(() =>
        purgeMySqlTable(pool, plan, { from: s, key: { stream_id: 'bytes' }, where: expired }),
      );
      const skips = await ignoreMissingTable(() =>
        purgeMySqlTable(pool, plan, { from: k, key: { stream_id: 'bytes', seq: 'integer' }, where: expired }),
      );
      return records + (cursors ?? 0) + (skips ?? 0);
    },
  };
}
