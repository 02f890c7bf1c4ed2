-- Delivery as a stage of its own: post intents and live streams. Same shape
-- as Postgres (see postgres/0003_delivery.sql), in this dialect's
-- conventions.

ALTER TABLE posted ADD COLUMN pending INTEGER NOT NULL DEFAULT 0;

CREATE TABLE live_streams (
    binding_id  TEXT PRIMARY KEY REFERENCES bindings (id),
    turn_id     TEXT,
    message_ids TEXT NOT NULL DEFAULT '[]',
    updated_at  INTEGER NOT NULL
) WITHOUT ROWID;
