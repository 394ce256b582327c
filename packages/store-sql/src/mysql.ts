/**
 * MySQL 8 / MariaDB dedupe store (`@kyb-webhooks/store-sql/mysql`), for mysql2's promise API. Importing it never
 * loads `mysql2`: you pass your own pool.
 */
export { createMySqlStore, type MySqlQueryable, type MySqlStoreOptions } from './mysql/store.js';
export { mysqlSchema, mysqlSchemaFile } from './mysql/schema.js';
export type { PurgeOptions, SqlDedupeStore } from './sql-store.js';
export { DEFAULT_TABLE } from './table-name.js';
export { MAX_EVENT_ID_LENGTH } from './limits.js';
