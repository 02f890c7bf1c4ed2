-- Credentials for the HTTP API other than the operator's token. Same shape
-- as Postgres, in this dialect's conventions (TEXT ids, INTEGER unix
-- microseconds, JSON arrays in TEXT). Only a SHA-256 of each token's secret
-- is stored. person_id and workspace_ids carry no foreign key on purpose.

CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY,
    kind          TEXT NOT NULL CHECK (kind IN ('agent', 'session', 'personal', 'host')),
    lookup        TEXT NOT NULL UNIQUE CHECK (lookup <> ''),
    secret_hash   BLOB NOT NULL CHECK (length(secret_hash) = 32),
    agents        TEXT NOT NULL DEFAULT '[]',
    person_id     TEXT,
    workspace_ids TEXT NOT NULL DEFAULT '[]',
    parent_id     TEXT REFERENCES api_keys (id) ON DELETE CASCADE,
    label         TEXT NOT NULL DEFAULT '',
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER,
    revoked_at    INTEGER
);

CREATE INDEX api_keys_parent ON api_keys (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX api_keys_session_expiry ON api_keys (expires_at) WHERE kind = 'session';
