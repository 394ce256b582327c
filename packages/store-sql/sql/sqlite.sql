-- @kyb-webhooks/store-sql: dedupe, stream cursor and skip tables for SQLite (3.24+).
-- createSqliteStore(...).ensureSchema() runs these same statements; apply this file instead when you migrate by hand.
-- To use another table name, replace kyb_webhook_events everywhere and pass { table } to createSqliteStore.
CREATE TABLE IF NOT EXISTS "kyb_webhook_events" (
  event_id   TEXT    NOT NULL PRIMARY KEY,
  state      TEXT    NOT NULL CHECK (state IN ('in_progress', 'completed')),
  token      TEXT    NOT NULL,
  expires_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS "kyb_webhook_events_expires_at_idx" ON "kyb_webhook_events" (expires_at);
CREATE TABLE IF NOT EXISTS "kyb_webhook_events_streams" (
  stream_id  TEXT    NOT NULL PRIMARY KEY,
  seq        INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  active_at  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS "kyb_webhook_events_activity_idx" ON "kyb_webhook_events_streams" (active_at, stream_id);
CREATE TABLE IF NOT EXISTS "kyb_webhook_events_skips" (
  stream_id  TEXT    NOT NULL,
  seq        INTEGER NOT NULL,
  reason     TEXT    NOT NULL,
  event_id   TEXT,
  skipped_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (stream_id, seq)
) WITHOUT ROWID;
