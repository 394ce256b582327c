import {
  activityIndexName,
  DEFAULT_TABLE,
  parseTableName,
  skipsTableName,
  streamsTableName,
  type TableName,
} from '../table-name.js';

/** `db`.`table` with MySQL's backquotes. */
export function backquoted({ schema, table }: TableName): string {
  return schema ? `\`${schema}\`.\`${table}\`` : `\`${table}\``;
}

/**
 * The MySQL/MariaDB schema. event_id is VARBINARY so ids compare byte for byte: MySQL's usual collations ignore case
 * and trailing spaces, which would make `evt_a`, `EVT_A` and `evt_a ` one event. DATETIME(3) holds UTC
 * (UTC_TIMESTAMP) and so never depends on a session time zone, nor ends in 2038 like TIMESTAMP. `<table>_streams`
 * holds the stream cursors (the last seq processed per stream, kept until expires_at like the event records) and
 * `active_at`, the database's UTC time in Unix ms of the cursor's last write, indexed for listStreams.
 * `<table>_skips` holds the seqs skipped with skipSeq, the reason as UTF-8 bytes (VARBINARY, whatever the connection's
 * character set; 500 UTF-16 units are at most 1,500 bytes), kept as long as the cursor. One statement per table,
 * because mysql2 runs one per query unless multipleStatements is on: ensureSchema sends them one by one.
 *
 * @example
 * ```ts
 * await pool.query(mysqlSchema('kyb_webhook_events'))
 * ```
 */
export function mysqlSchema(table: string = DEFAULT_TABLE): string {
  const name = parseTableName(table);
  return `CREATE TABLE IF NOT EXISTS ${backquoted(name)} (
  event_id   VARBINARY(1020) NOT NULL,
  state      VARCHAR(16) CHARACTER SET ascii NOT NULL CHECK (state IN ('in_progress', 'completed')),
  token      VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (event_id),
  KEY \`${name.table}_expires_at_idx\` (expires_at)
) ENGINE = InnoDB;
CREATE TABLE IF NOT EXISTS ${backquoted(streamsTableName(name))} (
  stream_id  VARBINARY(1020) NOT NULL,
  seq        BIGINT NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  active_at  BIGINT NOT NULL,
  PRIMARY KEY (stream_id),
  KEY \`${activityIndexName(name)}\` (active_at, stream_id)
) ENGINE = InnoDB;
CREATE TABLE IF NOT EXISTS ${backquoted(skipsTableName(name))} (
  stream_id  VARBINARY(1020) NOT NULL,
  seq        BIGINT NOT NULL,
  reason     VARBINARY(2000) NOT NULL,
  event_id   VARBINARY(1020) NULL,
  skipped_at BIGINT NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  PRIMARY KEY (stream_id, seq)
) ENGINE = InnoDB;
`;
}

/**
 * The content of sql/mysql.sql: the default table's schema with a header for people who migrate by hand.
 *
 * @example
 * ```ts
 * writeFileSync('migrations/001_kyb_webhook_events.sql', mysqlSchemaFile())
 * ```
 */
export function mysqlSchemaFile(): string {
  return `-- @kyb-webhooks/store-sql: dedupe, stream cursor and skip tables for MySQL 8 and MariaDB 10.5+.
-- createMySqlStore(...).ensureSchema() runs these same statements; apply this file instead when you migrate by hand.
-- To use another table name, replace ${DEFAULT_TABLE} everywhere and pass { table } to createMySqlStore.
${mysqlSchema()}`;
}
