-- Run messages, as in Postgres in this dialect's conventions (TEXT ids and
-- JSON, INTEGER unix microseconds).

CREATE TABLE run_messages (
    run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    binding_id TEXT NOT NULL REFERENCES bindings (id) ON DELETE CASCADE,
    platform   TEXT NOT NULL CHECK (platform <> ''),
    channel    TEXT NOT NULL DEFAULT '',
    message_id TEXT NOT NULL DEFAULT '',
    kind       TEXT NOT NULL DEFAULT '',
    state      TEXT NOT NULL CHECK (state IN ('posting', 'live', 'ended')),
    version    INTEGER NOT NULL DEFAULT 1,
    sent       TEXT NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (run_id, binding_id)
) WITHOUT ROWID;
