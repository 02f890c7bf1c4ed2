-- Runs: a lead agent's plan or a delegated goal as a durable record of
-- steps, each handed to an agent in a conversation of its own.
--
-- runs: one per plan; status running until every step is done (then the
-- completion check, if any, decides done or failed), a step failed with
-- nothing left to do (failed), or someone cancelled it.
--
-- run_steps: one per plan step, keyed by the plan's id within the run.
--   pending ──start──► working ──► done | failed
--      │                  │
--      └──────cancel──────┴──► cancelled      (retry: failed|cancelled → pending)
-- class is the slot class the step's agent takes (runs.slots); a step
-- starts only while fewer than the class's limit are working, which
-- RunStepStart checks under an advisory lock on the class.
--
-- run_events: every transition of a run or a step, append-only; the API
-- rebuilds a run from them.

CREATE TABLE runs (
    id              uuid PRIMARY KEY,
    conversation_id uuid NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    workspace_id    uuid REFERENCES workspaces (id) ON DELETE CASCADE,
    lead_agent      text NOT NULL CHECK (lead_agent <> ''),
    goal            text NOT NULL DEFAULT '',
    status          text NOT NULL CHECK (status IN ('running', 'done', 'failed', 'cancelled')),
    check_spec      json NOT NULL,
    result          text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    finished_at     timestamptz
);

CREATE INDEX runs_conversation_idx ON runs (conversation_id, created_at);
CREATE INDEX runs_workspace_idx ON runs (workspace_id, created_at);
CREATE INDEX runs_running_idx ON runs (created_at) WHERE status = 'running';

CREATE TABLE run_steps (
    id              uuid PRIMARY KEY,
    run_id          uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position        integer NOT NULL CHECK (position >= 0),
    step_key        text NOT NULL CHECK (step_key <> ''),
    title           text NOT NULL CHECK (title <> ''),
    agent           text NOT NULL CHECK (agent <> ''),
    class           text NOT NULL CHECK (class <> ''),
    inputs          json NOT NULL,
    depends_on      json NOT NULL,
    status          text NOT NULL CHECK (status IN ('pending', 'working', 'done', 'failed', 'cancelled')),
    model           text NOT NULL DEFAULT '',
    conversation_id uuid REFERENCES conversations (id) ON DELETE SET NULL,
    attempts        integer NOT NULL DEFAULT 0,
    input_tokens    bigint NOT NULL DEFAULT 0,
    output_tokens   bigint NOT NULL DEFAULT 0,
    cost_micro_usd  bigint NOT NULL DEFAULT 0,
    output          text NOT NULL DEFAULT '',
    error           text NOT NULL DEFAULT '',
    started_at      timestamptz,
    finished_at     timestamptz,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    UNIQUE (run_id, step_key)
);

CREATE INDEX run_steps_conversation_idx ON run_steps (conversation_id);
CREATE INDEX run_steps_working_idx ON run_steps (class) WHERE status = 'working';

CREATE TABLE run_events (
    id         bigserial PRIMARY KEY,
    run_id     uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    step_key   text NOT NULL DEFAULT '',
    kind       text NOT NULL CHECK (kind <> ''),
    status     text NOT NULL DEFAULT '',
    detail     text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL
);

CREATE INDEX run_events_run_idx ON run_events (run_id, id);
