import {
  activityIndexName,
  DEFAULT_TABLE,
  doubleQuoted,
  indexName,
  parseTableName,
  skipsTableName,
  streamsTableName,
} from '../table-name.js';

/**
 * The Postgres schema: timestamptz so that the lease arithmetic never depends on a session time zone, and an index on
 * expires_at for purgeCompleted. `<table>_streams` holds the stream cursors (the last seq processed per stream, kept
 * until expires_at like the event records) and `active_at`, the database's time in Unix ms of the cursor's last
 * write, indexed with the stream id for listStreams' keyset paging; it is purged by a scan. `<table>_skips` holds the
 * seqs skipped with skipSeq, each with its reason (at most 500 characters), kept as long as the cursor. The same text ships as
 * sql/postgres.sql (see `postgresSchemaFile`).
 *
 * @example
 * ```ts
 * await knex.raw(postgresSchema('audit.kyb_webhook_events')) // inside your own migration
 * ```
 */
export function postgresSchema(table: string = DEFAULT_TABLE): string {
  const name = parseTableName(table);
  return `CREATE TABLE IF NOT EXISTS ${doubleQuoted(name)} (
  event_id   varchar(255) PRIMARY KEY,
  state      varchar(16)  NOT NULL CHECK (state IN ('in_progress', 'completed')),
  token      varchar(64)  NOT NULL,
  expires_at timestamptz  NOT NULL,
  updated_at timestamptz  NOT NULL
);
CREATE INDEX IF NOT EXISTS "${indexName(name)}" ON ${doubleQuoted(name)} (expires_at);
CREATE TABLE IF NOT EXISTS ${doubleQuoted(streamsTableName(name))} (
  stream_id  varchar(255) PRIMARY KEY,
  seq        bigint       NOT NULL,
  expires_at timestamptz  NOT NULL,
  updated_at timestamptz  NOT NULL,
  active_at  bigint       NOT NULL
);
CREATE INDEX IF NOT EXISTS "${activityIndexName(name)}" ON ${doubleQuoted(streamsTableName(name))} (active_at, stream_id);
CREATE TABLE IF NOT EXISTS ${doubleQuoted(skipsTableName(name))} (
  stream_id  varchar(255) NOT NULL,
  seq        bigint       NOT NULL,
  reason     text         NOT NULL,
  event_id   varchar(255),
  skipped_at bigint       NOT NULL,
  expires_at timestamptz  NOT NULL,
  PRIMARY KEY (stream_id, seq)
);
`;
}

/**
 * The content of sql/postgres.sql: the default table's schema with a header for people who migrate by hand.
 *
 * @example
 * ```ts
 * writeFileSync('migrations/001_kyb_webhook_events.sql', postgresSchemaFile())
 * ```
 */
export function postgresSchemaFile(): string {
  return `-- @kyb-webhooks/store-sql: dedupe, stream cursor and skip tables for PostgreSQL (11+).
-- createPostgresStore(...).ensureSchema() runs these same statements; apply this file instead when you migrate by hand.
-- To use another table name, replace ${DEFAULT_TABLE} everywhere and pass { table } to createPostgresStore.
${postgresSchema()}`;
}
