-- Connections to GitHub and Google accounts, one per provider and owner (a
-- person or a workspace). Same shape as Postgres in this dialect's
-- conventions (INTEGER unix microseconds, JSON in TEXT). Both tokens are
-- sealed by package secret; the CHECKs keep clear text out.

CREATE TABLE connections (
    id            TEXT PRIMARY KEY,
    provider      TEXT NOT NULL CHECK (provider IN ('github', 'google')),
    owner_kind    TEXT NOT NULL CHECK (owner_kind IN ('person', 'workspace')),
    owner_id      TEXT NOT NULL,
    account       TEXT NOT NULL CHECK (account <> ''),
    account_id    TEXT NOT NULL DEFAULT '',
    scopes        TEXT NOT NULL DEFAULT '[]',
    access_token  TEXT NOT NULL CHECK (access_token LIKE 'v1:%'),
    refresh_token TEXT NOT NULL DEFAULT '' CHECK (refresh_token = '' OR refresh_token LIKE 'v1:%'),
    token_type    TEXT NOT NULL DEFAULT '',
    expiry        INTEGER,
    connected_by  TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    UNIQUE (provider, owner_kind, owner_id)
) WITHOUT ROWID;

CREATE INDEX connections_owner ON connections (owner_kind, owner_id);
