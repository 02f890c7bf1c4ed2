-- Connections: an account at GitHub or Google connected through the
-- provider's OAuth flow by a person (owner_kind 'person', their own) or for
-- a workspace (owner_kind 'workspace', shared by the people who talk to
-- agents there). One per provider and owner: a reconnect replaces the row.
-- Both tokens are sealed by package secret, bound to the provider and the
-- owner; the CHECKs keep clear text out. owner_id and connected_by name rows
-- of other parts (people, workspaces) and carry no foreign key on purpose.

CREATE TABLE connections (
    id            uuid PRIMARY KEY,
    provider      text NOT NULL CHECK (provider IN ('github', 'google')),
    owner_kind    text NOT NULL CHECK (owner_kind IN ('person', 'workspace')),
    owner_id      uuid NOT NULL,
    account       text NOT NULL CHECK (account <> ''),
    account_id    text NOT NULL DEFAULT '',
    scopes        text[] NOT NULL DEFAULT '{}',
    access_token  text NOT NULL CHECK (access_token LIKE 'v1:%'),
    refresh_token text NOT NULL DEFAULT '' CHECK (refresh_token = '' OR refresh_token LIKE 'v1:%'),
    token_type    text NOT NULL DEFAULT '',
    expiry        timestamptz,
    connected_by  uuid NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    UNIQUE (provider, owner_kind, owner_id)
);

CREATE INDEX connections_owner ON connections (owner_kind, owner_id);
