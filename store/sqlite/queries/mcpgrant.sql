-- MCP OAuth grants: one per server and workspace, sealed, versioned.

-- name: MCPGrantGet :one
SELECT * FROM mcp_oauth_grants WHERE server = sqlc.arg(server) AND workspace = sqlc.arg(workspace);

-- name: MCPGrantPut :one
-- A new authorization: replaces whatever is stored.
INSERT INTO mcp_oauth_grants (server, workspace, sealed_grant, version, created_at, updated_at)
VALUES (sqlc.arg(server), sqlc.arg(workspace), sqlc.arg(sealed_grant), 1, CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (server, workspace) DO UPDATE
SET sealed_grant = excluded.sealed_grant, version = mcp_oauth_grants.version + 1, updated_at = excluded.updated_at
RETURNING *;

-- name: MCPGrantInsert :many
-- Only when there is none (an import): no row back when there is one.
INSERT INTO mcp_oauth_grants (server, workspace, sealed_grant, version, created_at, updated_at)
VALUES (sqlc.arg(server), sqlc.arg(workspace), sqlc.arg(sealed_grant), 1, CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (server, workspace) DO NOTHING
RETURNING *;

-- name: MCPGrantSwap :many
-- A refresh: only at the version read; no row back when it moved on or is gone.
UPDATE mcp_oauth_grants
SET sealed_grant = sqlc.arg(sealed_grant), version = version + 1, updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE server = sqlc.arg(server) AND workspace = sqlc.arg(workspace) AND version = sqlc.arg(expect)
RETURNING *;

-- name: MCPGrantList :many
SELECT * FROM mcp_oauth_grants ORDER BY server, workspace;

-- name: MCPGrantDelete :execrows
DELETE FROM mcp_oauth_grants WHERE server = sqlc.arg(server) AND workspace = sqlc.arg(workspace);
