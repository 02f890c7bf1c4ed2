-- Web console sign-in (see the Postgres twin).

-- name: LoginInsert :one
INSERT INTO web_logins (id, kind, secret_hash, person_id, created_at, expires_at, method, id_token,
                        last_used_at, last_ip, last_user_agent)
VALUES (sqlc.arg(id), sqlc.arg(kind), sqlc.arg(secret_hash), sqlc.narg(person_id),
        CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(expires_at) AS INTEGER),
        sqlc.arg(method), sqlc.arg(id_token), sqlc.narg(last_used_at), sqlc.arg(ip), sqlc.arg(user_agent))
RETURNING *;

-- name: LoginByHash :one
SELECT * FROM web_logins WHERE secret_hash = sqlc.arg(secret_hash);

-- name: LoginMarkUsed :one
-- Only the first use marks the row: a second finds nothing to update.
UPDATE web_logins SET used_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE secret_hash = sqlc.arg(secret_hash) AND used_at IS NULL
RETURNING *;

-- name: LoginsPrune :execrows
DELETE FROM web_logins
WHERE id IN (
    SELECT l.id FROM web_logins AS l
    WHERE l.expires_at < CAST(sqlc.arg(before) AS INTEGER)
    LIMIT CAST(sqlc.arg(limit) AS INTEGER));

-- name: LoginByID :one
SELECT * FROM web_logins WHERE id = sqlc.arg(id);

-- name: LoginTouch :exec
-- At most one write per Every: a row used since is left alone.
UPDATE web_logins
SET last_used_at = CAST(sqlc.arg(now) AS INTEGER), last_ip = sqlc.arg(ip), last_user_agent = sqlc.arg(user_agent)
WHERE id = sqlc.arg(id)
  AND (last_used_at IS NULL OR last_used_at <= CAST(sqlc.arg(used_before) AS INTEGER)
       OR last_ip <> sqlc.arg(ip) OR last_user_agent <> sqlc.arg(user_agent));

-- name: LoginSessions :many
SELECT * FROM web_logins
WHERE kind = 'session' AND used_at IS NULL AND expires_at > CAST(sqlc.arg(now) AS INTEGER)
  AND (CAST(sqlc.arg(all_sessions) AS INTEGER) <> 0
       OR person_id IN (SELECT value FROM json_each(CAST(sqlc.arg(person_ids) AS TEXT)))
       OR (CAST(sqlc.arg(operator) AS INTEGER) <> 0 AND person_id IS NULL))
ORDER BY created_at DESC, id DESC
LIMIT CAST(sqlc.arg(limit) AS INTEGER);

-- name: LoginEnd :one
UPDATE web_logins SET used_at = COALESCE(used_at, CAST(sqlc.arg(now) AS INTEGER))
WHERE id = sqlc.arg(id) AND kind = 'session'
RETURNING *;
