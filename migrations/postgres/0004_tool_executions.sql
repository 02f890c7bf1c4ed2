-- The durable "executing" marker of a tool call. It is written before a
-- server tool's handler starts, so that a turn resumed after a crash or a
-- stop can tell a call that never started (run it) from one that was cut off
-- while it ran (record that it was interrupted, never run it again). Entries
-- stay immutable: the call's state lives here and in the log, never in an
-- edited entry.

CREATE TABLE tool_executions (
    conversation_id uuid NOT NULL REFERENCES conversations (id),
    call_id         text NOT NULL CHECK (call_id <> ''),
    state           text NOT NULL CHECK (state IN ('executing', 'finished')),
    started_at      timestamptz NOT NULL,
    finished_at     timestamptz,
    PRIMARY KEY (conversation_id, call_id)
);
