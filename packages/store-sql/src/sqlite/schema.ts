import {
  activityIndexName,
  DEFAULT_TABLE,
  indexName,
  parseTableName,
  skipsTableName,
  streamsTableName,
} from '../table-name.js';

/**
 * The SQLite schema. Times are integer Unix milliseconds of SQLite's own clock (see `NOW_MS`); TEXT compares with
 * the BINARY collation, so ids that differ only in case are different events. `<table>_streams` holds the stream
 * cursors (the last seq processed per stream, kept until expires_at like the event records) and `active_at`, the
 * time (Unix ms) of the cursor's last write, indexed for listStreams. `<table>_skips` holds the seqs skipped with
 * skipSeq, each with its reason, kept as long as the cursor.
 *
 * @example
 * ```ts
 * db.exec(sqliteSchema('kyb_webhook_events'))
 * ```
 */
export function sqliteSchema(table: string = DEFAULT_TABLE): string {
  const name = parseTableName(table);
  // SQLite qualifies the index name with the schema, not the table it indexes.
  const schema = name.schema ? `"${name.schema}".` : '';
  return `CREATE TABLE IF NOT EXISTS ${schema}"${name.table}" (
  event_id   TEXT    NOT NULL PRIMARY KEY,
  state      TEXT    NOT NULL CHECK (state IN ('in_progress', 'completed')),
  token      TEXT    NOT NULL,
  expires_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ${schema}"${indexName(name)}" ON "${name.table}" (expires_at);
CREATE TABLE IF NOT EXISTS ${schema}"${streamsTableName(name).table}" (
  stream_id  TEXT    NOT NULL PRIMARY KEY,
  seq        INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  active_at  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ${schema}"${activityIndexName(name)}" ON "${streamsTableName(name).table}" (active_at, stream_id);
CREATE TABLE IF NOT EXISTS ${schema}"${skipsTableName(name).table}" (
  stream_id  TEXT    NOT NULL,
  seq        INTEGER NOT NULL,
  reason     TEXT    NOT NULL,
  event_id   TEXT,
  skipped_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (stream_id, seq)
) WITHOUT ROWID;
`;
}

/**
 * The content of sql/sqlite.sql: the default table's schema with a header for people who migrate by hand.
 *
 * @example
 * ```ts
 * writeFileSync('migrations/001_kyb_webhook_events.sql', sqliteSchemaFile())
 * ```
 */
export function sqliteSchemaFile(): string {
  return `-- @kyb-webhooks/store-sql: dedupe, stream cursor and skip tables for SQLite (3.24+).
-- createSqliteStore(...).ensureSchema() runs these same statements; apply this file instead when you migrate by hand.
-- To use another table name, replace ${DEFAULT_TABLE} everywhere and pass { table } to createSqliteStore.
${sqliteSchema()}`;
}
