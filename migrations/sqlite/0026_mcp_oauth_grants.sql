-- MCP OAuth grants, one per server name and workspace: same shape as
-- Postgres in this dialect's conventions (INTEGER unix microseconds). The
-- grant is sealed by package secret; version counts the writes, so a
-- refresh replaces the row only at the version it read.

CREATE TABLE mcp_oauth_grants (
    server       TEXT NOT NULL CHECK (server <> ''),
    workspace    TEXT NOT NULL DEFAULT '',
    sealed_grant TEXT NOT NULL CHECK (sealed_grant LIKE 'v1:%'),
    version      INTEGER NOT NULL CHECK (version > 0),
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (server, workspace)
) WITHOUT ROWID;
