-- Each agent's personality document, as in Postgres in this dialect's
-- conventions (TEXT ids, INTEGER unix microseconds). Every version is kept.

CREATE TABLE agent_personalities (
    agent_id   TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    version    INTEGER NOT NULL CHECK (version > 0),
    text       TEXT NOT NULL CHECK (text <> ''),
    author     TEXT NOT NULL CHECK (author <> ''),
    created_at INTEGER NOT NULL,
    PRIMARY KEY (agent_id, version)
);
