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
import { postgresSchema } from './schema.js';

/**
 * What the store needs from node-postgres: `query(text, values)`. A `pg.Pool`, a `pg.Client` or a checked-out
 * `PoolClient` all fit; the store never connects, releases or ends it.
 *
 * @example
 * ```ts
 * const db: PgQueryable = new pg.Pool({ connectionString: process.env.DATABASE_URL })
 * ```
 */
export interface PgQueryable {
  query(
    textOrConfig: string | { name?: string; text: string; values?: unknown[] },
    values?: unknown[],
  ): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

/**
 * Options of {@link createPostgresStore}: a `pool` or a `client`, and the table.
 *
 * @example
 * ```ts
 * const options: PostgresStoreOptions = { pool, table: 'webhooks.kyb_webhook_events' }
 * ```
 */
export type PostgresStoreOptions = ({ pool: PgQueryable; client?: never } | { client: PgQueryable; pool?: never }) & {
  /** Table name, optionally schema-qualified. Default `kyb_webhook_events`. */
  table?: string;
  /**
   * Send claim, complete and release as named prepared statements, planned once per connection instead of on
   * every call (the claim's plan costs more than its execution). Default `true`; set `false` behind PgBouncer in
   * transaction mode before 1.21, which cannot keep prepared statements.
   */
  preparedStatements?: boolean;
};

const OPTIONS_SPEC: OptionsSpec = {
  owner: 'createPostgresStore',
  example: 'createPostgresStore({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL }) })',
  options: {
    pool: optionRules.methods(
      ['query'],
      'pass a pg.Pool, e.g. new pg.Pool({ connectionString: process.env.DATABASE_URL })',
    ),
    client: optionRules.methods(['query'], 'pass a connected pg.Client or a checked-out PoolClient'),
    table: optionRules.parsedBy(parseTableName),
    preparedStatements: optionRules.boolean(),
  },
  aliases: {
    db: 'pool',
    database: 'pool',
    connection: 'client',
    connectionString: 'pool',
    tableName: 'table',
    prepare: 'preparedStatements',
    prepared: 'preparedStatements',
  },
  refine(values, report) {
    if (values.pool !== undefined && values.client !== undefined) {
      report('pool', 'and `client` are both set: pass one of them (the store queries exactly one).');
    } else if (values.pool === undefined && values.client === undefined) {
      report('pool', 'is missing: pass { pool } (a pg.Pool) or { client } (a pg.Client).');
    }
  },
};

// statement_timestamp(), not now(): now() stays frozen for a whole transaction, and a caller may run the store on a
// client inside one. Either way the database's clock decides, never the application's.
const NOW = 'statement_timestamp()';
/** The same clock in Unix milliseconds, for the cursors' active_at. */
const NOW_MS = `floor(extract(epoch from ${NOW}) * 1000)::bigint`;

/** A claim that raced with a concurrent change is retried; this bounds a pathological loop. */
const MAX_CLAIM_ATTEMPTS = 10;

/**
 * A dedupe store in PostgreSQL (11+) through node-postgres. Claiming is ONE statement: an INSERT … ON CONFLICT that
 * takes over only an expired record, whose CTE also reports what it found, so the happy path is exactly two round
 * trips per event (claim, complete). Lease and retention are decided by the database's clock. Errors are thrown
 * (the receiver answers 503 `store_unavailable`).
 *
 * @example
 * ```ts
 * import pg from 'pg'
 * import { createPostgresStore } from '@kyb-webhooks/store-sql/postgres'
 *
 * const store = createPostgresStore({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL }) })
 * await store.ensureSchema()
 * const receiver = createReceiver({ secrets, attestation, store })
 * ```
 */
export function createPostgresStore(options: PostgresStoreOptions): SqlDedupeStore {
  validateOptions(options, OPTIONS_SPEC);
  const db = (options.pool ?? options.client)!;
  const table = options.table ?? 'kyb_webhook_events';
  const t = doubleQuoted(parseTableName(table));
  const s = doubleQuoted(streamsTableName(parseTableName(table)));
  const k = doubleQuoted(skipsTableName(parseTableName(table)));

  // The CTE's INSERT returns a row only when this claim wrote the record (new, or taking over an expired one). Else
  // the outer SELECT reads the live record it conflicted with, from the statement's snapshot. When a concurrent
  // claim committed between that snapshot and the insert, the snapshot shows no live record and no row comes back:
  // the statement is simply run again, with a fresh snapshot.
  const claimSql = `WITH claimed AS (
  INSERT INTO ${t} AS r (event_id, state, token, expires_at, updated_at)
  VALUES ($1, 'in_progress', $2, ${NOW} + $3::double precision * interval '1 millisecond', ${NOW})
  ON CONFLICT (event_id) DO UPDATE
    SET state = 'in_progress', token = excluded.token, expires_at = excluded.expires_at,
      updated_at = excluded.updated_at
    WHERE r.expires_at <= ${NOW}
  RETURNING 1
)
SELECT 'acquired'::text AS status FROM claimed
UNION ALL
SELECT state::text FROM ${t} WHERE event_id = $1 AND expires_at > ${NOW} AND NOT EXISTS (SELECT 1 FROM claimed)`;

  const completeSql = `UPDATE ${t}
SET state = 'completed', updated_at = ${NOW}, expires_at = ${NOW} + $3::double precision * interval '1 millisecond'
WHERE event_id = $1 AND token = $2 AND state = 'in_progress' AND expires_at > ${NOW}`;

  const releaseSql = `DELETE FROM ${t}
WHERE event_id = $1 AND token = $2 AND state = 'in_progress' AND expires_at > ${NOW}`;

  const extendSql = `UPDATE ${t}
SET expires_at = ${NOW} + $3::double precision * interval '1 millisecond'
WHERE event_id = $1 AND token = $2 AND state = 'in_progress' AND expires_at > ${NOW}`;

  // completeInOrder in ONE statement, so one round trip and one transaction. `lease` locks the event row while the
  // token holds it (FOR UPDATE, so a concurrent complete or takeover waits). `moved` advances an existing cursor that
  // stands at seq - 1 (an expired cursor counts as none); `started` inserts the cursor of a stream that has none, only
  // when seq is the first seq. Concurrent advances of one cursor are serialised by its row lock: an UPDATE that waited
  // re-checks `seq = $4 - 1` on the row as committed, so of two callers with one seq only one moves it. `done`
  // completes the event only when the cursor moved. All or nothing, since it is one statement. $3 is the record's
  // retention, $7 the cursor's (longer: it must survive an idle stream).
  const completeInOrderSql = `WITH lease AS (
  SELECT event_id FROM ${t}
  WHERE event_id = $1 AND token = $2 AND state = 'in_progress' AND expires_at > ${NOW}
  FOR UPDATE
), moved AS (
  UPDATE ${s} SET seq = $4::bigint, updated_at = ${NOW}, active_at = ${NOW_MS}, expires_at = ${NOW} + $7::double precision * interval '1 millisecond'
  WHERE stream_id = $5::text AND EXISTS (SELECT 1 FROM lease)
    AND CASE WHEN expires_at > ${NOW} THEN seq = $4::bigint - 1 ELSE $4::bigint = $6::bigint END
  RETURNING 1
), started AS (
  INSERT INTO ${s} (stream_id, seq, expires_at, updated_at, active_at)
  SELECT $5::text, $4::bigint, ${NOW} + $7::double precision * interval '1 millisecond', ${NOW}, ${NOW_MS}
  WHERE $4::bigint = $6::bigint AND EXISTS (SELECT 1 FROM lease)
  ON CONFLICT (stream_id) DO NOTHING
  RETURNING 1
), done AS (
  UPDATE ${t} SET state = 'completed', updated_at = ${NOW}, expires_at = ${NOW} + $3::double precision * interval '1 millisecond'
  WHERE event_id = (SELECT event_id FROM lease) AND (EXISTS (SELECT 1 FROM moved) OR EXISTS (SELECT 1 FROM started))
  RETURNING 1
)
SELECT CASE WHEN EXISTS (SELECT 1 FROM done) THEN 'completed'
  WHEN EXISTS (SELECT 1 FROM lease) THEN 'cursor_moved' ELSE 'lease_lost' END AS outcome`;

  const getCursorSql = `SELECT seq FROM ${s} WHERE stream_id = $1 AND expires_at > ${NOW}`;

  // Forward only: an existing live cursor at or beyond seq is left alone (the WHERE of DO UPDATE), an expired one
  // counts as none.
  const advanceCursorSql = `INSERT INTO ${s} AS c (stream_id, seq, expires_at, updated_at, active_at)
VALUES ($1, $2::bigint, ${NOW} + $3::double precision * interval '1 millisecond', ${NOW}, ${NOW_MS})
ON CONFLICT (stream_id) DO UPDATE
  SET seq = excluded.seq, expires_at = excluded.expires_at, updated_at = excluded.updated_at, active_at = excluded.active_at
  WHERE c.seq < excluded.seq OR c.expires_at <= ${NOW}`;

  // skipSeq in ONE statement, like completeInOrder without the lease: `moved` advances a live cursor that stands at
  // seq - 1 (an expired one counts as none), `started` creates the cursor of a stream without one when seq is the first
  // seq, and `recorded` writes the skip only when one of them did. The cursor's row lock serialises concurrent skips of
  // one seq: a waiting UPDATE re-checks `seq = $2 - 1` on the committed row. $3 is the retention of both.
  const skipSeqSql = `WITH moved AS (
  UPDATE ${s} SET seq = $2::bigint, updated_at = ${NOW}, active_at = ${NOW_MS}, expires_at = ${NOW} + $3::double precision * interval '1 millisecond'
  WHERE stream_id = $1::text AND CASE WHEN expires_at > ${NOW} THEN seq = $2::bigint - 1 ELSE $2::bigint = $4::bigint END
  RETURNING 1
), started AS (
  INSERT INTO ${s} (stream_id, seq, expires_at, updated_at, active_at)
  SELECT $1::text, $2::bigint, ${NOW} + $3::double precision * interval '1 millisecond', ${NOW}, ${NOW_MS}
  WHERE $2::bigint = $4::bigint
  ON CONFLICT (stream_id) DO NOTHING
  RETURNING 1
), recorded AS (
  INSERT INTO ${k} AS x (stream_id, seq, reason, event_id, skipped_at, expires_at)
  SELECT $1::text, $2::bigint, $5::text, $6::text, ${NOW_MS}, ${NOW} + $3::double precision * interval '1 millisecond'
  WHERE EXISTS (SELECT 1 FROM moved) OR EXISTS (SELECT 1 FROM started)
  ON CONFLICT (stream_id, seq) DO UPDATE
    SET reason = excluded.reason, event_id = excluded.event_id, skipped_at = excluded.skipped_at, expires_at = excluded.expires_at
  RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM recorded) AS skipped`;
  const listSkipsSql = `SELECT seq, reason, event_id, skipped_at FROM ${k} WHERE stream_id = $1 AND expires_at > ${NOW} ORDER BY seq`;

  // Keyset paging on the (active_at, stream_id) index: the row after the last one listed, one more than a page.
  const listStreamsSql = `SELECT stream_id, seq, active_at FROM ${s}
WHERE expires_at > ${NOW} AND active_at >= $1::bigint AND (active_at, stream_id) > ($2::bigint, $3::text)
ORDER BY active_at, stream_id LIMIT $4`;

  const prepared = options.preparedStatements ?? true;
  const statement = (purpose: string, text: string) => {
    // The name carries a hash of the text: one connection may serve stores of several tables.
    const name = `kyb_${purpose}_${hash(text)}`;
    return (values: unknown[]) => (prepared ? db.query({ name, text, values }) : db.query(text, values));
  };
  const claimQuery = statement('claim', claimSql);
  const completeQuery = statement('complete', completeSql);
  const releaseQuery = statement('release', releaseSql);
  const extendQuery = statement('extend', extendSql);
  const completeInOrderQuery = statement('complete_in_order', completeInOrderSql);
  const getCursorQuery = statement('get_cursor', getCursorSql);
  const advanceCursorQuery = statement('advance_cursor', advanceCursorSql);
  const listStreamsQuery = statement('list_streams', listStreamsSql);

  return {
    table,
    async claim(eventId, { leaseMs }): Promise<ClaimResult> {
      checkEventId(eventId);
      const lease = milliseconds('leaseMs', leaseMs);
      const token = createLeaseToken();
      for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
        const { rows } = await claimQuery([eventId, token, lease]);
        const status = (rows[0] as { status?: string } | undefined)?.status;
        if (status === 'acquired') return { status, token };
        if (status === 'in_progress' || status === 'completed') return { status };
      }
      throw new Error(`Could not claim the event after ${MAX_CLAIM_ATTEMPTS} attempts under contention.`);
    },
    async complete(eventId, token, { retainMs }): Promise<boolean> {
      checkEventId(eventId);
      const { rowCount } = await completeQuery([eventId, token, milliseconds('retainMs', retainMs)]);
      return rowCount === 1;
    },
    async release(eventId, token): Promise<boolean> {
      checkEventId(eventId);
      const { rowCount } = await releaseQuery([eventId, token]);
      return rowCount === 1;
    },
    async extend(eventId, token, { leaseMs }): Promise<boolean> {
      checkEventId(eventId);
      const { rowCount } = await extendQuery([eventId, token, milliseconds('leaseMs', leaseMs)]);
      return rowCount === 1;
    },
    async getCursor(streamId): Promise<number | null> {
      checkStreamId(streamId);
      const { rows } = await getCursorQuery([streamId]);
      // node-postgres returns bigint as a string; the store only ever writes safe integers.
      const row = rows[0] as { seq: string | number } | undefined;
      return row === undefined ? null : Number(row.seq);
    },
    async completeInOrder(eventId, token, options): Promise<CompleteInOrderResult> {
      const { retainMs, streamId, seq, firstSeq } = options;
      checkEventId(eventId);
      checkStreamArguments(streamId, seq, firstSeq);
      const cursorRetainMs = milliseconds('cursorRetainMs', inOrderCursorRetention(options));
      const values = [eventId, token, milliseconds('retainMs', retainMs), seq, streamId, firstSeq, cursorRetainMs];
      const { rows } = await completeInOrderQuery(values);
      return (rows[0] as { outcome: CompleteInOrderResult }).outcome;
    },
    async advanceCursor(streamId, seq, advance): Promise<boolean> {
      checkStreamArguments(streamId, seq);
      const { rowCount } = await advanceCursorQuery([
        streamId,
        seq,
        milliseconds('retainMs', cursorRetention(advance)),
      ]);
      return rowCount === 1;
    },
    async skipSeq(streamId, seq, skip): Promise<boolean> {
      const { firstSeq } = checkSkipArguments(streamId, seq, skip);
      const values = [
        streamId,
        seq,
        milliseconds('retainMs', skip.retainMs),
        firstSeq,
        skip.reason,
        skip.eventId ?? null,
      ];
      // Not a prepared statement: it runs once in a stream's life, if ever.
      const { rows } = await db.query(skipSeqSql, values);
      return (rows[0] as { skipped: boolean } | undefined)?.skipped === true;
    },
    async listSkips(streamId): Promise<SkippedSeq[]> {
      checkStreamId(streamId);
      const { rows } = await db.query(listSkipsSql, [streamId]);
      return (
        rows as { seq: string | number; reason: string; event_id: string | null; skipped_at: string | number }[]
      ).map((row) => {
        const skip: SkippedSeq = { seq: Number(row.seq), reason: row.reason, skippedAt: Number(row.skipped_at) };
        if (row.event_id !== null) skip.eventId = row.event_id;
        return skip;
      });
    },
    async listStreams(listOptions) {
      const { activeSince, limit, after } = checkListStreamsOptions(listOptions);
      const from = after === undefined ? { activeAt: -1, streamId: '' } : readStreamPageToken(after);
      const { rows } = await listStreamsQuery([activeSince, from.activeAt, from.streamId, limit + 1]);
      const streams = (rows as { stream_id: string; seq: string | number; active_at: string | number }[])
        .slice(0, limit)
        .map((row) => ({ streamId: row.stream_id, seq: Number(row.seq), activeAt: Number(row.active_at) }));
      const last = streams[streams.length - 1];
      return { streams, next: rows.length > limit && last ? streamPageToken(last.activeAt, last.streamId) : undefined };
    },
    async ensureSchema(): Promise<void> {
      // CREATE … IF NOT EXISTS is not safe against itself: two processes creating the table at once can both pass
      // the check and one fails on the catalog ("type … already exists"). A transaction-scoped advisory lock on the
      // table's name serialises them; the statements of one simple query run as one implicit transaction. The name
      // passed parseTableName (letters, digits, underscores, a dot), so it is safe inside the literal.
      await db.query(`SELECT pg_advisory_xact_lock(hashtext('kyb-webhooks:${table}'));\n${postgresSchema(table)}`);
    },
    async purgeCompleted(purge: PurgeOptions = {}): Promise<number> {
      const plan = purgePlan(purge);
      const expired = `expires_at <= ${NOW}`;
      // ctid: the row's physical address, the cheapest way to name the rows a batch chose. SKIP LOCKED: a row a claim
      // is updating right now is left for the next purge rather than waited for.
      const batch = (from: string, where: string, values: unknown[] = []) =>
        inBatches(plan, async () => {
          const { rowCount } = await db.query(
            `DELETE FROM ${from} WHERE ctid = ANY (ARRAY(SELECT ctid FROM ${from} WHERE ${where} LIMIT ${plan.size} FOR UPDATE SKIP LOCKED))`,
            values,
          );
          return rowCount ?? 0;
        });
      const records =
        purge.olderThanMs === undefined
          ? await batch(t, expired)
          : await batch(
              t,
              `${expired} OR (state = 'completed' AND updated_at <= ${NOW} - $1::double precision * interval '1 millisecond')`,
              [milliseconds('olderThanMs', purge.olderThanMs)],
            );
      // Stream cursors go only once their own retention passed, whatever olderThanMs says (see PurgeOptions); a table
      // migrated by hand before cursors existed has none to purge.
      const cursors = await ignoreMissingTable(() => batch(s, expired));
      const skips = await ignoreMissingTable(() => batch(k, expired));
      return records + (cursors ?? 0) + (skips ?? 0);
    },
  };
}

/** FNV-1a, 32 bits, as hex: a short, stable name suffix for a statement's text. */
function hash(text: string): string {
  let value = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) value = Math.imul(value ^ text.charCodeAt(i), 0x01000193);
  return (value >>> 0).toString(16).padStart(8, '0');
}
