-- @kyb-webhooks/store-sql: dedupe, stream cursor and skip tables for PostgreSQL (11+).
-- createPostgresStore(...).ensureSchema() runs these same statements; apply this file instead when you migrate by hand.
-- To use another table name, replace kyb_webhook_events everywhere and pass { table } to createPostgresStore.
CREATE TABLE IF NOT EXISTS "kyb_webhook_events" (
  event_id   varchar(255) PRIMARY KEY,
  state      varchar(16)  NOT NULL CHECK (state IN ('in_progress', 'completed')),
  token      varchar(64)  NOT NULL,
  expires_at timestamptz  NOT NULL,
  updated_at timestamptz  NOT NULL
);
CREATE INDEX IF NOT EXISTS "kyb_webhook_events_expires_at_idx" ON "kyb_webhook_events" (expires_at);
CREATE TABLE IF NOT EXISTS "kyb_webhook_events_streams" (
  stream_id  varchar(255) PRIMARY KEY,
  seq        bigint       NOT NULL,
  expires_at timestamptz  NOT NULL,
  updated_at timestamptz  NOT NULL,
  active_at  bigint       NOT NULL
);
CREATE INDEX IF NOT EXISTS "kyb_webhook_events_activity_idx" ON "kyb_webhook_events_streams" (active_at, stream_id);
CREATE TABLE IF NOT EXISTS "kyb_webhook_events_skips" (
  stream_id  varchar(255) NOT NULL,
  seq        bigint       NOT NULL,
  reason     text         NOT NULL,
  event_id   varchar(255),
  skipped_at bigint       NOT NULL,
  expires_at timestamptz  NOT NULL,
  PRIMARY KEY (stream_id, seq)
);
