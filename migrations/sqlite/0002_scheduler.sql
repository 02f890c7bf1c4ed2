-- The scheduler: routines, reminders, pulses and goal loops, and the record
-- of each of their runs. Same shape as Postgres, in this dialect's
-- conventions (TEXT ids, INTEGER unix microseconds, TEXT JSON). A fire
-- advances next_run_at with a compare-and-set and enqueues its work item with
-- a unique key in one transaction.

CREATE TABLE schedules (
    id           TEXT PRIMARY KEY,
    kind         TEXT NOT NULL CHECK (kind IN ('routine', 'reminder', 'pulse', 'loop')),
    agent        TEXT NOT NULL CHECK (agent <> ''),
    name         TEXT NOT NULL CHECK (name <> ''),
    owner        TEXT NOT NULL DEFAULT '',
    platform     TEXT NOT NULL DEFAULT '',
    workspace    TEXT NOT NULL DEFAULT '',
    channel      TEXT NOT NULL DEFAULT '',
    spec         TEXT NOT NULL,
    time_zone    TEXT NOT NULL DEFAULT '',
    instruction  TEXT NOT NULL DEFAULT '',
    config       TEXT NOT NULL DEFAULT '{}',
    data         TEXT NOT NULL DEFAULT '{}',
    missed       TEXT NOT NULL DEFAULT 'run_once' CHECK (missed IN ('run_once', 'skip')),
    source       TEXT NOT NULL DEFAULT '',
    state        TEXT NOT NULL DEFAULT 'active'
                 CHECK (state IN ('active', 'paused', 'blocked', 'done')),
    state_reason TEXT NOT NULL DEFAULT '',
    next_run_at  INTEGER,
    last_run_at  INTEGER,
    runs         INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (agent, kind, name)
);

CREATE INDEX schedules_due_idx ON schedules (next_run_at)
    WHERE state = 'active' AND next_run_at IS NOT NULL;
CREATE INDEX schedules_owner_idx ON schedules (owner, kind);

CREATE TABLE schedule_runs (
    id              TEXT PRIMARY KEY,
    schedule_id     TEXT NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
    seq             INTEGER NOT NULL CHECK (seq > 0),
    due_at          INTEGER NOT NULL,
    conversation_id TEXT REFERENCES conversations (id),
    status          TEXT NOT NULL
                    CHECK (status IN ('started', 'reported', 'skipped', 'finished', 'failed')),
    input_hash      TEXT NOT NULL DEFAULT '',
    report          TEXT,
    note            TEXT NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (schedule_id, seq)
);

CREATE INDEX schedule_runs_conversation_idx ON schedule_runs (conversation_id)
    WHERE conversation_id IS NOT NULL;

CREATE INDEX work_finished_idx ON work (finished_at)
    WHERE state IN ('done', 'cancelled') AND unique_key IS NULL;
