-- The spine of Switchboard on SQLite: the conversation log, the work queue and
-- their leases, plus the tables around them (bindings, approvals, audit,
-- usage, inbound dedupe, named leases).
--
-- Conventions (they differ from Postgres on purpose and the driver converts):
--   ids          TEXT, the canonical UUID form
--   timestamps   INTEGER, unix microseconds UTC, so ordering and comparisons
--                are exact integer comparisons
--   JSON         TEXT
-- agent_id and turn_id columns are soft references: agents come from the
-- config file and turns are work items that may be pruned, so neither is a
-- foreign key. Conversations are never deleted, so everything that belongs to
-- one references it.

CREATE TABLE agents (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    config     TEXT NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE conversations (
    id               TEXT PRIMARY KEY,
    parent_id        TEXT REFERENCES conversations (id),
    root_id          TEXT NOT NULL,
    fork_seq         INTEGER,
    child_count      INTEGER NOT NULL DEFAULT 0,
    agent_id         TEXT,
    title            TEXT NOT NULL DEFAULT '',
    provider         TEXT NOT NULL DEFAULT '',
    model            TEXT NOT NULL DEFAULT '',
    thinking         TEXT NOT NULL DEFAULT '',
    status           TEXT NOT NULL DEFAULT 'idle'
                     CHECK (status IN ('idle', 'running', 'paused')),
    metadata         TEXT NOT NULL DEFAULT '{}',
    lease_owner      TEXT NOT NULL DEFAULT '',
    lease_expires_at INTEGER,
    heartbeat_at     INTEGER,
    turn_attempts    INTEGER NOT NULL DEFAULT 0,
    -- last_seq is the highest seq in the log; appends read and bump it under
    -- the single writer, which is what makes seqs gap- and duplicate-free.
    last_seq         INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    CHECK ((parent_id IS NULL) = (fork_seq IS NULL))
);

CREATE INDEX conversations_parent_idx ON conversations (parent_id, created_at)
    WHERE parent_id IS NOT NULL;
CREATE INDEX conversations_lease_idx ON conversations (lease_expires_at)
    WHERE lease_owner <> '';

-- The append-only log. Error entries have no seq (they never reach a model);
-- after_seq places them in the display order. SQLite lets any number of NULL
-- seqs share the UNIQUE constraint, as Postgres does.
CREATE TABLE entries (
    id              TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    seq             INTEGER CHECK (seq IS NULL OR seq >= 1),
    after_seq       INTEGER NOT NULL CHECK (after_seq >= 0),
    kind            TEXT NOT NULL CHECK (kind IN ('user', 'assistant', 'tool_call',
                        'tool_result', 'card', 'action', 'system', 'error')),
    author          TEXT NOT NULL DEFAULT '',
    content         TEXT NOT NULL DEFAULT '{}',
    turn_id         TEXT,
    created_at      INTEGER NOT NULL,
    CHECK ((kind = 'error') = (seq IS NULL)),
    UNIQUE (conversation_id, seq)
);

CREATE INDEX entries_errors_idx ON entries (conversation_id, after_seq)
    WHERE seq IS NULL;

-- Entries moved out of the log by EntryDiscard (a crashed turn's partial
-- output), kept for inspection.
CREATE TABLE discarded_entries (
    id              TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    seq             INTEGER,
    after_seq       INTEGER NOT NULL,
    kind            TEXT NOT NULL,
    author          TEXT NOT NULL,
    content         TEXT NOT NULL,
    turn_id         TEXT,
    created_at      INTEGER NOT NULL,
    reason          TEXT NOT NULL DEFAULT '',
    discarded_at    INTEGER NOT NULL
);

CREATE INDEX discarded_entries_conversation_idx
    ON discarded_entries (conversation_id, discarded_at);

CREATE TABLE work (
    id               TEXT PRIMARY KEY,
    kind             TEXT NOT NULL CHECK (kind <> ''),
    payload          TEXT NOT NULL DEFAULT '{}',
    conversation_id  TEXT REFERENCES conversations (id),
    agent_id         TEXT,
    run_at           INTEGER NOT NULL,
    priority         INTEGER NOT NULL DEFAULT 0,
    attempts         INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL DEFAULT 3 CHECK (max_attempts >= 1),
    unique_key       TEXT UNIQUE,
    state            TEXT NOT NULL DEFAULT 'available'
                     CHECK (state IN ('available', 'running', 'done', 'failed', 'cancelled')),
    claimed_by       TEXT NOT NULL DEFAULT '',
    lease_expires_at INTEGER,
    last_error       TEXT NOT NULL DEFAULT '',
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    finished_at      INTEGER
);

CREATE INDEX work_available_idx ON work (priority DESC, run_at)
    WHERE state = 'available';
CREATE INDEX work_running_idx ON work (lease_expires_at)
    WHERE state = 'running';
CREATE INDEX work_conversation_idx ON work (conversation_id, state)
    WHERE conversation_id IS NOT NULL;

CREATE TABLE inbound_events (
    platform    TEXT NOT NULL,
    event_id    TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    PRIMARY KEY (platform, event_id)
) WITHOUT ROWID;

CREATE INDEX inbound_events_received_idx ON inbound_events (received_at);

CREATE TABLE bindings (
    id              TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    platform        TEXT NOT NULL,
    workspace       TEXT NOT NULL DEFAULT '',
    channel         TEXT NOT NULL,
    thread          TEXT NOT NULL DEFAULT '',
    delivered_seq   INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (platform, workspace, channel, thread)
);

CREATE INDEX bindings_conversation_idx ON bindings (conversation_id);

-- entry_id is not a foreign key: a posted entry may later be discarded, and
-- the record of the platform message it became is still worth keeping.
CREATE TABLE posted (
    binding_id  TEXT NOT NULL REFERENCES bindings (id),
    entry_id    TEXT NOT NULL,
    message_ids TEXT NOT NULL DEFAULT '[]',
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (binding_id, entry_id)
) WITHOUT ROWID;

CREATE TABLE approvals (
    id              TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    call_id         TEXT NOT NULL,
    tool            TEXT NOT NULL DEFAULT '',
    kind            TEXT NOT NULL CHECK (kind IN ('confirm', 'question')),
    risk            TEXT NOT NULL DEFAULT '',
    request         TEXT NOT NULL DEFAULT '{}',
    deciders        TEXT NOT NULL DEFAULT '[]',
    status          TEXT NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
    decision        TEXT,
    decided_by      TEXT NOT NULL DEFAULT '',
    expires_at      INTEGER NOT NULL,
    decided_at      INTEGER,
    created_at      INTEGER NOT NULL,
    UNIQUE (conversation_id, call_id)
);

CREATE INDEX approvals_pending_idx ON approvals (expires_at)
    WHERE status = 'pending';

CREATE TABLE audit (
    id              TEXT PRIMARY KEY,
    conversation_id TEXT REFERENCES conversations (id),
    actor           TEXT NOT NULL DEFAULT '',
    action          TEXT NOT NULL DEFAULT '',
    risk            TEXT NOT NULL DEFAULT '',
    decision        TEXT NOT NULL DEFAULT '',
    result          TEXT NOT NULL DEFAULT '',
    detail          TEXT NOT NULL DEFAULT '{}',
    created_at      INTEGER NOT NULL
);

CREATE INDEX audit_conversation_idx ON audit (conversation_id, created_at);

CREATE TABLE named_leases (
    name       TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE usage (
    id               TEXT PRIMARY KEY,
    conversation_id  TEXT NOT NULL REFERENCES conversations (id),
    turn_id          TEXT,
    agent_id         TEXT,
    provider         TEXT NOT NULL DEFAULT '',
    model            TEXT NOT NULL DEFAULT '',
    input_tokens     INTEGER NOT NULL DEFAULT 0,
    output_tokens    INTEGER NOT NULL DEFAULT 0,
    cached_tokens    INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    cost_micro_usd   INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL
);

CREATE INDEX usage_conversation_idx ON usage (conversation_id, created_at);
