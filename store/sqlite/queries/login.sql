-- Web console sign-in (see the Postgres twin).

-- name: LoginInsert :one
INSERT INTO web_logins (id, kind, secret_hash, person_id, created_at, expires_at)
VALUES (sqlc.arg(id), sqlc.arg(kind), sqlc.arg(secret_hash), sqlc.narg(person_id),
        CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(expires_at) AS INTEGER))
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
