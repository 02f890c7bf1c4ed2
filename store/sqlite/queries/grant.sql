-- Standing grants; each query returns whole rows.

-- name: GrantInsert :one
INSERT INTO grants (id, agent, tool, workspace, workspace_id, args_hash, granted_by, created_at)
VALUES (sqlc.arg(id), sqlc.arg(agent), sqlc.arg(tool), sqlc.arg(workspace), sqlc.narg(workspace_id), sqlc.arg(args_hash),
        sqlc.arg(granted_by), CAST(sqlc.arg(now) AS INTEGER))
RETURNING *;

-- name: GrantFind :one
-- A grant without args_hash allows any arguments. In a conversation of a
-- workspace only that workspace's grants hold; elsewhere only the grants of
-- the same platform workspace that belong to no workspace.
SELECT * FROM grants
WHERE agent = sqlc.arg(agent) AND tool = sqlc.arg(tool)
  AND (CASE WHEN sqlc.narg(workspace_id) IS NULL
            THEN workspace_id IS NULL AND workspace = sqlc.arg(workspace)
            ELSE workspace_id = sqlc.narg(workspace_id) END)
  AND revoked_at IS NULL AND args_hash IN ('', sqlc.arg(args_hash))
ORDER BY created_at, id LIMIT 1;

-- name: GrantGet :one
SELECT * FROM grants WHERE id = sqlc.arg(id);

-- name: GrantList :many
-- With the name of each grant's workspace ('' without one).
SELECT grants.*, COALESCE(workspaces.name, '') AS workspace_name
FROM grants LEFT JOIN workspaces ON workspaces.id = grants.workspace_id
WHERE (CAST(sqlc.arg(by_workspace) AS INTEGER) = 0 OR grants.workspace = sqlc.arg(workspace))
  AND (sqlc.narg(by_workspace_id) IS NULL OR grants.workspace_id = sqlc.narg(by_workspace_id))
  AND (CAST(sqlc.arg(revoked) AS INTEGER) = 1 OR grants.revoked_at IS NULL)
ORDER BY grants.created_at DESC, grants.id DESC LIMIT sqlc.arg(max_rows);

-- name: GrantRevoke :one
-- A second revoke keeps the first time.
UPDATE grants SET revoked_at = COALESCE(revoked_at, CAST(sqlc.arg(now) AS INTEGER))
WHERE id = sqlc.arg(id)
RETURNING *;
