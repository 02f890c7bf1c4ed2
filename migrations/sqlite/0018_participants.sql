-- Who takes part in a conversation and the loop guard's floor, as in
-- Postgres in this dialect's conventions (TEXT ids, INTEGER unix
-- microseconds).

CREATE TABLE participants (
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    author          TEXT NOT NULL CHECK (author LIKE 'user:%' OR author LIKE 'agent:%'),
    joined          TEXT NOT NULL CHECK (joined IN ('wrote', 'addressed', 'invited', 'channel', 'routed', 'started')),
    done_seq        INTEGER CHECK (done_seq >= 0),
    removed_at      INTEGER,
    joined_at       INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, author)
);

CREATE TABLE conversation_floors (
    conversation_id TEXT PRIMARY KEY REFERENCES conversations (id) ON DELETE CASCADE,
    agent_streak    INTEGER NOT NULL DEFAULT 0 CHECK (agent_streak >= 0),
    updated_at      INTEGER NOT NULL
);
