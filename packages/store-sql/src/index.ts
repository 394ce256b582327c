/**
 * SQL dedupe stores for @kyb-webhooks/core. Import the one you use from its subpath (`/postgres`, `/mysql`,
 * `/sqlite`); this entry re-exports all three. No driver is loaded by importing either: you pass your own pool,
 * client or database (only `createSqliteStore({ filename })` loads better-sqlite3, when it opens the file).
 */
export { createPostgresStore, type PgQueryable, type PostgresStoreOptions } from './postgres/store.js';
export { postgresSchema, postgresSchemaFile } from './postgres/schema.js';
export { createMySqlStore, type MySqlQueryable, type MySqlStoreOptions } from './mysql/store.js';
export { mysqlSchema, mysqlSchemaFile } from './mysql/schema.js';
export {
  createSqliteStore,
  type SqliteDatabaseLike,
  type SqliteDedupeStore,
  type SqliteStatementLike,
  type SqliteStoreOptions,
} from './sqlite/store.js';
export { sqliteSchema, sqliteSchemaFile } from './sqlite/schema.js';
export type { PurgeOptions, SqlDedupeStore } from './sql-store.js';
export {
  DEFAULT_PURGE_BATCH_SIZE,
  DEFAULT_PURGE_PAUSE_RATIO,
  MAX_PURGE_BATCH_SIZE,
  MAX_PURGE_PAUSE_RATIO,
} from './sql-store.js';
export { DEFAULT_TABLE, parseTableName, type TableName } from './table-name.js';
export { MAX_EVENT_ID_LENGTH } from './limits.js';
