-- Standing grants; each query returns whole rows.

-- name: GrantInsert :one
INSERT INTO grants (id, agent, tool, workspace, args_hash, granted_by, created_at)
VALUES (sqlc.arg(id), sqlc.arg(agent), sqlc.arg(tool), sqlc.arg(workspace), sqlc.arg(args_hash),
        sqlc.arg(granted_by), CAST(sqlc.arg(now) AS INTEGER))
RETURNING *;

-- name: GrantFind :one
-- A grant without args_hash allows any arguments.
SELECT * FROM grants
WHERE agent = sqlc.arg(agent) AND tool = sqlc.arg(tool) AND workspace = sqlc.arg(workspace)
  AND revoked_at IS NULL AND args_hash IN ('', sqlc.arg(args_hash))
ORDER BY created_at, id LIMIT 1;

-- name: GrantGet :one
SELECT * FROM grants WHERE id = sqlc.arg(id);

-- name: GrantList :many
SELECT * FROM grants
WHERE (CAST(sqlc.arg(by_workspace) AS INTEGER) = 0 OR workspace = sqlc.arg(workspace))
  AND (CAST(sqlc.arg(revoked) AS INTEGER) = 1 OR revoked_at IS NULL)
ORDER BY created_at DESC, id DESC LIMIT sqlc.arg(max_rows);

-- name: GrantRevoke :one
-- A second revoke keeps the first time.
UPDATE grants SET revoked_at = COALESCE(revoked_at, CAST(sqlc.arg(now) AS INTEGER))
WHERE id = sqlc.arg(id)
RETURNING *;
