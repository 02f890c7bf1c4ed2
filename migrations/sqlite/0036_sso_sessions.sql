-- Single sign-on (OIDC) and sessions people can see and end (see the
-- Postgres twin). TEXT ids, INTEGER unix microseconds.
ALTER TABLE web_logins ADD COLUMN method TEXT NOT NULL DEFAULT '';
ALTER TABLE web_logins ADD COLUMN id_token TEXT NOT NULL DEFAULT '';
ALTER TABLE web_logins ADD COLUMN last_used_at INTEGER;
ALTER TABLE web_logins ADD COLUMN last_ip TEXT NOT NULL DEFAULT '';
ALTER TABLE web_logins ADD COLUMN last_user_agent TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN last_used_at INTEGER;
ALTER TABLE api_keys ADD COLUMN last_ip TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN last_user_agent TEXT NOT NULL DEFAULT '';

CREATE INDEX web_logins_person ON web_logins (person_id, created_at) WHERE kind = 'session';
CREATE INDEX api_keys_person ON api_keys (person_id, created_at) WHERE person_id IS NOT NULL;

CREATE TABLE oidc_states (
    state_hash    BLOB PRIMARY KEY CHECK (length(state_hash) = 32),
    nonce         TEXT NOT NULL,
    code_verifier TEXT NOT NULL,
    return_to     TEXT NOT NULL DEFAULT '',
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL,
    used_at       INTEGER
);
CREATE INDEX oidc_states_expiry ON oidc_states (expires_at);

CREATE TABLE sso_grants (
    person_id    TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    role         TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (person_id, workspace_id)
);
