-- Credentials for the HTTP API other than the operator's token: agent keys,
-- the short-lived sessions they are exchanged for, people's personal access
-- tokens and hosts' exchange-only tokens. A token reads
-- "<kind prefix>_<lookup>_<secret>": lookup finds the row, and only a
-- SHA-256 of the secret is kept, so neither a dump nor a read of this table
-- yields a usable token. person_id and workspace_ids name rows of another
-- part (people, workspaces) and carry no foreign key on purpose.

CREATE TABLE api_keys (
    id            uuid PRIMARY KEY,
    kind          text NOT NULL CHECK (kind IN ('agent', 'session', 'personal', 'host')),
    lookup        text NOT NULL UNIQUE CHECK (lookup <> ''),
    secret_hash   bytea NOT NULL CHECK (length(secret_hash) = 32),
    agents        text[] NOT NULL DEFAULT '{}',
    person_id     uuid,
    workspace_ids uuid[] NOT NULL DEFAULT '{}',
    parent_id     uuid REFERENCES api_keys (id) ON DELETE CASCADE,
    label         text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz,
    revoked_at    timestamptz
);

-- Revoking a key revokes its sessions; pruning finds expired sessions.
CREATE INDEX api_keys_parent ON api_keys (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX api_keys_session_expiry ON api_keys (expires_at) WHERE kind = 'session';
