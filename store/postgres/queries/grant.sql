-- Standing grants. Every query returning a grant returns the whole row.

-- name: GrantCreate :one
INSERT INTO grants (id, agent, tool, workspace, args_hash, granted_by, created_at)
VALUES (@id, @agent, @tool, @workspace, @args_hash, @granted_by, @now::timestamptz)
RETURNING *;

-- name: GrantFind :one
-- An unlimited grant and one limited to these arguments both allow the call.
SELECT * FROM grants
WHERE agent = @agent AND tool = @tool AND workspace = @workspace AND revoked_at IS NULL
  AND (args_hash = '' OR args_hash = @args_hash::text)
ORDER BY created_at, id
LIMIT 1;

-- name: GrantGet :one
SELECT * FROM grants WHERE id = @id;

-- name: GrantList :many
SELECT * FROM grants
WHERE (NOT @by_workspace::boolean OR workspace = @workspace::text)
  AND (@revoked::boolean OR revoked_at IS NULL)
ORDER BY created_at DESC, id DESC
LIMIT @max_rows;

-- name: GrantRevoke :one
-- Revoking twice keeps the first time.
UPDATE grants SET revoked_at = COALESCE(revoked_at, @now::timestamptz)
WHERE id = @id
RETURNING *;
