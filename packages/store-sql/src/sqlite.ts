/**
 * SQLite dedupe store (`@kyb-webhooks/store-sql/sqlite`), for better-sqlite3. Importing it never loads `pg` or
 * `mysql2`, and loads better-sqlite3 only when the store opens a file itself.
 */
export {
  createSqliteStore,
  type SqliteDatabaseLike,
  type SqliteDedupeStore,
  type SqliteStatementLike,
  type SqliteStoreOptions,
} from './sqlite/store.js';
export { sqliteSchema, sqliteSchemaFile } from './sqlite/schema.js';
export type { PurgeOptions, SqlDedupeStore } from './sql-store.js';
export { DEFAULT_TABLE } from './table-name.js';
export { MAX_EVENT_ID_LENGTH } from './limits.js';
