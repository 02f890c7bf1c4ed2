-- Standing grants, as in Postgres in this dialect's conventions (TEXT ids,
-- INTEGER unix microseconds). A grant is revoked, never deleted.

CREATE TABLE grants (
    id         TEXT PRIMARY KEY,
    agent      TEXT NOT NULL CHECK (agent <> ''),
    tool       TEXT NOT NULL CHECK (tool <> ''),
    workspace  TEXT NOT NULL DEFAULT '',
    args_hash  TEXT NOT NULL DEFAULT '',
    granted_by TEXT NOT NULL CHECK (granted_by <> ''),
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);

CREATE INDEX grants_live_idx ON grants (agent, tool, workspace) WHERE revoked_at IS NULL;
