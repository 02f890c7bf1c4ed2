-- API credentials: agent keys, sessions, personal and host tokens. Only the
-- SHA-256 of a token's secret is stored.

-- name: KeyCreate :one
INSERT INTO api_keys (
    id, kind, lookup, secret_hash, agents, person_id, workspace_ids, parent_id, label, created_at, expires_at
) VALUES (
    @id, @kind, @lookup, @secret_hash, @agents::text[], sqlc.narg(person_id)::uuid, CAST(@workspace_ids::text[] AS uuid[]),
    sqlc.narg(parent_id)::uuid, @label, @now::timestamptz, sqlc.narg(expires_at)::timestamptz
)
RETURNING *;

-- name: KeyFind :one
SELECT * FROM api_keys WHERE lookup = @lookup;

-- name: KeyGet :one
SELECT * FROM api_keys WHERE id = @id;

-- name: KeyList :many
SELECT * FROM api_keys
WHERE kind <> 'session'
  AND (@kind::text = '' OR kind = @kind::text)
  AND (@include_revoked::boolean OR revoked_at IS NULL)
  AND (cardinality(@person_ids::text[]) = 0 OR person_id = ANY(CAST(@person_ids::text[] AS uuid[])))
ORDER BY created_at, id
LIMIT @max_rows;

-- name: KeyRevoke :many
-- The key and the sessions made from it; a second revocation keeps the
-- first time.
UPDATE api_keys
SET revoked_at = COALESCE(revoked_at, @now::timestamptz)
WHERE id = @id OR parent_id = @id
RETURNING *;

-- name: KeyPruneSessions :execrows
DELETE FROM api_keys
WHERE id IN (
    SELECT s.id FROM api_keys s
    WHERE s.kind = 'session' AND s.expires_at < @before::timestamptz
    LIMIT @max_rows);

-- name: KeyTouch :exec
-- At most one write per Every: a row used since is left alone.
UPDATE api_keys
SET last_used_at = @now::timestamptz, last_ip = @ip, last_user_agent = @user_agent
WHERE id = @id
  AND (last_used_at IS NULL OR last_used_at <= @used_before::timestamptz
       OR last_ip <> @ip OR last_user_agent <> @user_agent);
