-- @kyb-webhooks/store-sql: dedupe, stream cursor and skip tables for MySQL 8 and MariaDB 10.5+.
-- createMySqlStore(...).ensureSchema() runs these same statements; apply this file instead when you migrate by hand.
-- To use another table name, replace kyb_webhook_events everywhere and pass { table } to createMySqlStore.
CREATE TABLE IF NOT EXISTS `kyb_webhook_events` (
  event_id   VARBINARY(1020) NOT NULL,
  state      VARCHAR(16) CHARACTER SET ascii NOT NULL CHECK (state IN ('in_progress', 'completed')),
  token      VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (event_id),
  KEY `kyb_webhook_events_expires_at_idx` (expires_at)
) ENGINE = InnoDB;
CREATE TABLE IF NOT EXISTS `kyb_webhook_events_streams` (
  stream_id  VARBINARY(1020) NOT NULL,
  seq        BIGINT NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  active_at  BIGINT NOT NULL,
  PRIMARY KEY (stream_id),
  KEY `kyb_webhook_events_activity_idx` (active_at, stream_id)
) ENGINE = InnoDB;
CREATE TABLE IF NOT EXISTS `kyb_webhook_events_skips` (
  stream_id  VARBINARY(1020) NOT NULL,
  seq        BIGINT NOT NULL,
  reason     VARBINARY(2000) NOT NULL,
  event_id   VARBINARY(1020) NULL,
  skipped_at BIGINT NOT NULL,
  expires_at DATETIME(3) NOT NULL,
  PRIMARY KEY (stream_id, seq)
) ENGINE = InnoDB;
