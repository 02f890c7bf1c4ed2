-- MCP OAuth grants: what Switchboard holds to reach an outside MCP server
-- with "oauth" in mcp-servers.json (the token, the refresh token, the token
-- endpoint and the client, dynamically registered or not), one row per
-- server name and workspace ('' when the server's entry names none). The
-- grant is one JSON document sealed by package secret, bound to the server
-- and the workspace; the CHECK keeps clear text out. version counts the
-- writes: a refresh replaces the row only at the version it read (compare
-- and swap), so instances sharing the database never overwrite a newer
-- token with an older one. Before this table the grants were files in
-- SWITCHBOARD_MCP_TOKEN_DIR; the service imports such a file once.

CREATE TABLE mcp_oauth_grants (
    server       text NOT NULL CHECK (server <> ''),
    workspace    text NOT NULL DEFAULT '',
    sealed_grant text NOT NULL CHECK (sealed_grant LIKE 'v1:%'),
    version      bigint NOT NULL CHECK (version > 0),
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (server, workspace)
);
