/**
 * PostgreSQL dedupe store (`@kyb-webhooks/store-sql/postgres`), for node-postgres (`pg`). Importing it never loads
 * `pg`: you pass your own pool or client.
 */
export { createPostgresStore, type PgQueryable, type PostgresStoreOptions } from './postgres/store.js';
export { postgresSchema, postgresSchemaFile } from './postgres/schema.js';
export type { PurgeOptions, SqlDedupeStore } from './sql-store.js';
export { DEFAULT_TABLE } from './table-name.js';
export { MAX_EVENT_ID_LENGTH } from './limits.js';
