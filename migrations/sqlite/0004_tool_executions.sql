-- The durable "executing" marker of a tool call. Same shape as Postgres, in
-- this dialect's conventions (TEXT ids, INTEGER unix microseconds). Written
-- before a server tool's handler starts, so that a resumed turn tells a call
-- that never started (run it) from one cut off while it ran (record that it
-- was interrupted, never run it again).

CREATE TABLE tool_executions (
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    call_id         TEXT NOT NULL CHECK (call_id <> ''),
    state           TEXT NOT NULL CHECK (state IN ('executing', 'finished')),
    started_at      INTEGER NOT NULL,
    finished_at     INTEGER,
    PRIMARY KEY (conversation_id, call_id)
) WITHOUT ROWID;
