-- The scheduler: routines, reminders, pulses and goal loops, and the record
-- of each of their runs. A schedule's fire is made durable as a work item
-- whose unique key is (schedule, scheduled time); next_run_at is advanced
-- with a compare-and-set in the same transaction, so two instances that both
-- believe they lead cannot fire one occurrence twice.

CREATE TABLE schedules (
    id           uuid PRIMARY KEY,
    kind         text NOT NULL CHECK (kind IN ('routine', 'reminder', 'pulse', 'loop')),
    agent        text NOT NULL CHECK (agent <> ''),
    name         text NOT NULL CHECK (name <> ''),
    owner        text NOT NULL DEFAULT '',
    platform     text NOT NULL DEFAULT '',
    workspace    text NOT NULL DEFAULT '',
    channel      text NOT NULL DEFAULT '',
    spec         text NOT NULL,
    time_zone    text NOT NULL DEFAULT '',
    instruction  text NOT NULL DEFAULT '',
    config       json NOT NULL,
    data         json NOT NULL,
    missed       text NOT NULL DEFAULT 'run_once' CHECK (missed IN ('run_once', 'skip')),
    source       text NOT NULL DEFAULT '',
    state        text NOT NULL DEFAULT 'active'
                 CHECK (state IN ('active', 'paused', 'blocked', 'done')),
    state_reason text NOT NULL DEFAULT '',
    next_run_at  timestamptz,
    last_run_at  timestamptz,
    -- Serial of the last run recorded: bumped under the row lock, so run
    -- numbers are gap-free even when two writers race.
    runs         bigint NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    CONSTRAINT schedules_name_key UNIQUE (agent, kind, name)
);

-- What the dispatcher reads every tick: active schedules in due order.
CREATE INDEX schedules_due_idx ON schedules (next_run_at)
    WHERE state = 'active' AND next_run_at IS NOT NULL;
CREATE INDEX schedules_owner_idx ON schedules (owner, kind);

CREATE TABLE schedule_runs (
    id              uuid PRIMARY KEY,
    schedule_id     uuid NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
    seq             bigint NOT NULL CHECK (seq > 0),
    due_at          timestamptz NOT NULL,
    conversation_id uuid REFERENCES conversations (id),
    status          text NOT NULL
                    CHECK (status IN ('started', 'reported', 'skipped', 'finished', 'failed')),
    input_hash      text NOT NULL DEFAULT '',
    report          json,
    note            text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    CONSTRAINT schedule_runs_seq_key UNIQUE (schedule_id, seq)
);

CREATE INDEX schedule_runs_conversation_idx ON schedule_runs (conversation_id)
    WHERE conversation_id IS NOT NULL;

-- The sweep of finished work items reads them by finish time.
CREATE INDEX work_items_finished_idx ON work_items (finished_at)
    WHERE state IN ('done', 'cancelled') AND unique_key IS NULL;
