-- MCP OAuth grants: one per server and workspace, sealed, versioned.

-- name: MCPGrantGet :one
SELECT * FROM mcp_oauth_grants WHERE server = @server AND workspace = @workspace;

-- name: MCPGrantPut :one
-- A new authorization: replaces whatever is stored.
INSERT INTO mcp_oauth_grants AS g (server, workspace, sealed_grant, version, created_at, updated_at)
VALUES (@server, @workspace, @sealed_grant, 1, @now::timestamptz, @now::timestamptz)
ON CONFLICT (server, workspace) DO UPDATE
SET sealed_grant = EXCLUDED.sealed_grant, version = g.version + 1, updated_at = EXCLUDED.updated_at
RETURNING *;

-- name: MCPGrantInsert :many
-- Only when there is none (an import): no row back when there is one.
INSERT INTO mcp_oauth_grants (server, workspace, sealed_grant, version, created_at, updated_at)
VALUES (@server, @workspace, @sealed_grant, 1, @now::timestamptz, @now::timestamptz)
ON CONFLICT (server, workspace) DO NOTHING
RETURNING *;

-- name: MCPGrantSwap :many
-- A refresh: only at the version read; no row back when it moved on or is gone.
UPDATE mcp_oauth_grants
SET sealed_grant = @sealed_grant, version = version + 1, updated_at = @now::timestamptz
WHERE server = @server AND workspace = @workspace AND version = @expect
RETURNING *;

-- name: MCPGrantList :many
SELECT * FROM mcp_oauth_grants ORDER BY server, workspace;

-- name: MCPGrantDelete :execrows
DELETE FROM mcp_oauth_grants WHERE server = @server AND workspace = @workspace;
