-- Runs, as in Postgres in this dialect's conventions (TEXT ids and JSON,
-- INTEGER unix microseconds). SQLite has one writer, so RunStepStart's
-- count-then-start needs no lock.

CREATE TABLE runs (
    id              TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    workspace_id    TEXT REFERENCES workspaces (id) ON DELETE CASCADE,
    lead_agent      TEXT NOT NULL CHECK (lead_agent <> ''),
    goal            TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'cancelled')),
    check_spec      TEXT NOT NULL DEFAULT '{}',
    result          TEXT NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    finished_at     INTEGER
);

CREATE INDEX runs_conversation_idx ON runs (conversation_id, created_at);
CREATE INDEX runs_workspace_idx ON runs (workspace_id, created_at);
CREATE INDEX runs_running_idx ON runs (created_at) WHERE status = 'running';

CREATE TABLE run_steps (
    id              TEXT PRIMARY KEY,
    run_id          TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position        INTEGER NOT NULL CHECK (position >= 0),
    step_key        TEXT NOT NULL CHECK (step_key <> ''),
    title           TEXT NOT NULL CHECK (title <> ''),
    agent           TEXT NOT NULL CHECK (agent <> ''),
    class           TEXT NOT NULL CHECK (class <> ''),
    inputs          TEXT NOT NULL DEFAULT '{}',
    depends_on      TEXT NOT NULL DEFAULT '[]',
    status          TEXT NOT NULL CHECK (status IN ('pending', 'working', 'done', 'failed', 'cancelled')),
    model           TEXT NOT NULL DEFAULT '',
    conversation_id TEXT REFERENCES conversations (id) ON DELETE SET NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    input_tokens    INTEGER NOT NULL DEFAULT 0,
    output_tokens   INTEGER NOT NULL DEFAULT 0,
    cost_micro_usd  INTEGER NOT NULL DEFAULT 0,
    output          TEXT NOT NULL DEFAULT '',
    error           TEXT NOT NULL DEFAULT '',
    started_at      INTEGER,
    finished_at     INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (run_id, step_key)
);

CREATE INDEX run_steps_conversation_idx ON run_steps (conversation_id);
CREATE INDEX run_steps_working_idx ON run_steps (class) WHERE status = 'working';

CREATE TABLE run_events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    step_key   TEXT NOT NULL DEFAULT '',
    kind       TEXT NOT NULL CHECK (kind <> ''),
    status     TEXT NOT NULL DEFAULT '',
    detail     TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL
);

CREATE INDEX run_events_run_idx ON run_events (run_id, id);
