-- API credentials (see the Postgres twin). Lists are JSON arrays in TEXT.

-- name: KeyInsert :one
INSERT INTO api_keys (
    id, kind, lookup, secret_hash, agents, person_id,
    workspace_ids, parent_id, label, created_at, expires_at
) VALUES (
    sqlc.arg(id), sqlc.arg(kind), sqlc.arg(lookup), sqlc.arg(secret_hash), sqlc.arg(agents), sqlc.narg(person_id),
    sqlc.arg(workspace_ids), sqlc.narg(parent_id), sqlc.arg(label),
    CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.narg(expires_at) AS INTEGER)
)
RETURNING *;

-- name: KeyByLookup :one
SELECT * FROM api_keys WHERE lookup = sqlc.arg(lookup);

-- name: KeyByID :one
SELECT * FROM api_keys WHERE id = sqlc.arg(id);

-- name: KeyListed :many
SELECT * FROM api_keys
WHERE kind <> 'session'
  AND (CAST(sqlc.arg(kind) AS TEXT) = '' OR kind = CAST(sqlc.arg(kind) AS TEXT))
  AND (CAST(sqlc.arg(include_revoked) AS INTEGER) <> 0 OR revoked_at IS NULL)
  AND (CAST(sqlc.arg(person_ids) AS TEXT) = '[]'
       OR person_id IN (SELECT value FROM json_each(CAST(sqlc.arg(person_ids) AS TEXT))))
ORDER BY created_at, id
LIMIT CAST(sqlc.arg(limit) AS INTEGER);

-- name: KeyRevokeWithSessions :many
-- A second revocation keeps the first time.
UPDATE api_keys
SET revoked_at = COALESCE(revoked_at, CAST(sqlc.arg(now) AS INTEGER))
WHERE id = sqlc.arg(id) OR parent_id = sqlc.arg(id)
RETURNING *;

-- name: KeySessionsPrune :execrows
DELETE FROM api_keys
WHERE id IN (
    SELECT s.id FROM api_keys AS s
    WHERE s.kind = 'session' AND s.expires_at < CAST(sqlc.arg(before) AS INTEGER)
    LIMIT CAST(sqlc.arg(limit) AS INTEGER));

-- name: KeyTouch :exec
-- At most one write per Every: a row used since is left alone.
UPDATE api_keys
SET last_used_at = CAST(sqlc.arg(now) AS INTEGER), last_ip = sqlc.arg(ip), last_user_agent = sqlc.arg(user_agent)
WHERE id = sqlc.arg(id)
  AND (last_used_at IS NULL OR last_used_at <= CAST(sqlc.arg(used_before) AS INTEGER)
       OR last_ip <> sqlc.arg(ip) OR last_user_agent <> sqlc.arg(user_agent));
