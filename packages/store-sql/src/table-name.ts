import { KybWebhookError } from '@kyb-webhooks/core';

/**
 * The table every SQL store uses unless told otherwise.
 *
 * @example
 * ```ts
 * createPostgresStore({ pool, table: DEFAULT_TABLE }) // same as leaving `table` out
 * ```
 */
export const DEFAULT_TABLE = 'kyb_webhook_events';

/**
 * A table name, optionally qualified by one schema (Postgres) or database (MySQL, attached SQLite database), split
 * into its parts. Identifiers are spliced into SQL, so only plain ones are accepted: letters, digits and `_`, not
 * starting with a digit, at most 48 characters so that `<table>_expires_at_idx` still fits the 63 of Postgres.
 *
 * @example
 * ```ts
 * const { schema, table }: TableName = parseTableName('audit.kyb_webhook_events')
 * ```
 */
export interface TableName {
  schema: string | undefined;
  table: string;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,47}$/;

/**
 * Split and check a table name; throws `config_invalid` for anything that is not a plain identifier.
 *
 * @example
 * ```ts
 * parseTableName('audit.kyb_webhook_events') // { schema: 'audit', table: 'kyb_webhook_events' }
 * parseTableName('events; DROP TABLE users')  // throws KybWebhookError (config_invalid)
 * ```
 */
export function parseTableName(name: string = DEFAULT_TABLE): TableName {
  const parts = typeof name === 'string' ? name.split('.') : [];
  if (parts.length >= 1 && parts.length <= 2 && parts.every((part) => IDENTIFIER.test(part))) {
    return parts.length === 2 ? { schema: parts[0], table: parts[1]! } : { schema: undefined, table: parts[0]! };
  }
  throw new KybWebhookError(
    'config_invalid',
    'The dedupe table name must be an identifier like "kyb_webhook_events" or "schema.kyb_webhook_events": ' +
      'letters, digits and "_", not starting with a digit, at most 48 characters per part.',
  );
}

/** `"schema"."table"` for Postgres and SQLite, whose quotes are double quotes. */
export function doubleQuoted({ schema, table }: TableName): string {
  return schema ? `"${schema}"."${table}"` : `"${table}"`;
}

/**
 * The stream cursors' table, `<table>_streams` in the same schema: one row per stream, the last seq processed.
 * parseTableName's 48-character limit keeps it within every engine's identifier length.
 */
export function streamsTableName({ schema, table }: TableName): TableName {
  return { schema, table: `${table}_streams` };
}

/**
 * The skips' table, `<table>_skips` in the same schema: one row per seq skipped with `skipSeq` (ordering's recorded
 * way past an event the API can never serve verifiably), with its reason.
 *
 * @example
 * ```ts
 * skipsTableName(parseTableName('audit.kyb_webhook_events')) // { schema: 'audit', table: 'kyb_webhook_events_skips' }
 * ```
 */
export function skipsTableName({ schema, table }: TableName): TableName {
  return { schema, table: `${table}_skips` };
}

/** The expiry index's name; Postgres and SQLite name indexes per schema, so it derives from the bare table name. */
export function indexName({ table }: TableName): string {
  return `${table}_expires_at_idx`;
}

/**
 * The stream cursors' activity index (listStreams), `<table>_activity_idx`: like {@link indexName}, it fits the 63
 * characters of Postgres with the longest table name parseTableName accepts.
 *
 * @example
 * ```ts
 * activityIndexName(parseTableName('audit.kyb_webhook_events')) // 'kyb_webhook_events_activity_idx'
 * ```
 */
export function activityIndexName({ table }: TableName): string {
  return `${table}_activity_idx`;
}
