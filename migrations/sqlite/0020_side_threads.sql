-- Side threads and delegations, as in Postgres in this dialect's
-- conventions (TEXT ids and JSON, INTEGER unix microseconds).

CREATE TABLE side_threads (
    id              TEXT PRIMARY KEY,
    parent_id       TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    parent_seq      INTEGER NOT NULL CHECK (parent_seq >= 0),
    child_id        TEXT NOT NULL UNIQUE REFERENCES conversations (id) ON DELETE CASCADE,
    opener          TEXT NOT NULL CHECK (opener <> ''),
    peer            TEXT NOT NULL CHECK (peer <> '' AND peer <> opener),
    status          TEXT NOT NULL CHECK (status IN ('in_progress', 'resolved', 'abandoned')),
    summary         TEXT NOT NULL DEFAULT '',
    finished_by     TEXT NOT NULL DEFAULT '',
    marker_entry_id TEXT,
    progress_at     INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);

CREATE INDEX side_threads_parent_idx ON side_threads (parent_id, created_at);
CREATE INDEX side_threads_stale_idx ON side_threads (progress_at) WHERE status = 'in_progress';

CREATE TABLE delegations (
    id                TEXT PRIMARY KEY,
    from_conversation TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    from_agent        TEXT NOT NULL CHECK (from_agent <> ''),
    to_agent          TEXT NOT NULL CHECK (to_agent <> ''),
    child_id          TEXT NOT NULL UNIQUE REFERENCES conversations (id) ON DELETE CASCADE,
    task              TEXT NOT NULL CHECK (task <> ''),
    factors           TEXT NOT NULL DEFAULT '{}',
    status            TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
    result            TEXT NOT NULL DEFAULT '',
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    finished_at       INTEGER
);

CREATE INDEX delegations_from_idx ON delegations (from_conversation, created_at);
CREATE INDEX delegations_to_agent_idx ON delegations (to_agent);
