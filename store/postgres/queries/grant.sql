-- Standing grants. Every query returning a grant returns the whole row.

-- name: GrantCreate :one
INSERT INTO grants (id, agent, tool, workspace, workspace_id, args_hash, granted_by, created_at)
VALUES (@id, @agent, @tool, @workspace, sqlc.narg(workspace_id)::uuid, @args_hash, @granted_by, @now::timestamptz)
RETURNING *;

-- name: GrantFind :one
-- An unlimited grant and one limited to these arguments both allow the call.
-- In a conversation of a workspace only that workspace's grants hold;
-- elsewhere only the grants of the same platform workspace that belong to no
-- workspace.
SELECT * FROM grants
WHERE agent = @agent AND tool = @tool AND revoked_at IS NULL
  AND (CASE WHEN sqlc.narg(workspace_id)::uuid IS NULL
            THEN workspace_id IS NULL AND workspace = @workspace::text
            ELSE workspace_id = sqlc.narg(workspace_id)::uuid END)
  AND (args_hash = '' OR args_hash = @args_hash::text)
ORDER BY created_at, id
LIMIT 1;

-- name: GrantGet :one
SELECT * FROM grants WHERE id = @id;

-- name: GrantList :many
-- With the name of each grant's workspace ('' without one).
SELECT g.*, COALESCE(w.name, '')::text AS workspace_name
FROM grants g LEFT JOIN workspaces w ON w.id = g.workspace_id
WHERE (NOT @by_workspace::boolean OR g.workspace = @workspace::text)
  AND (sqlc.narg(by_workspace_id)::uuid IS NULL OR g.workspace_id = sqlc.narg(by_workspace_id)::uuid)
  AND (@revoked::boolean OR g.revoked_at IS NULL)
ORDER BY g.created_at DESC, g.id DESC
LIMIT @max_rows;

-- name: GrantRevoke :one
-- Revoking twice keeps the first time.
UPDATE grants SET revoked_at = COALESCE(revoked_at, @now::timestamptz)
WHERE id = @id
RETURNING *;
