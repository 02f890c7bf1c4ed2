-- Web console sign-in: login links and browser sessions, found by the
-- SHA-256 of their secret.

-- name: LoginCreate :one
INSERT INTO web_logins (id, kind, secret_hash, person_id, created_at, expires_at)
VALUES (@id, @kind, @secret_hash, sqlc.narg(person_id)::uuid, @now::timestamptz, @expires_at::timestamptz)
RETURNING *;

-- name: LoginFind :one
SELECT * FROM web_logins WHERE secret_hash = @secret_hash;

-- name: LoginUse :one
-- Only the first use marks the row: a second finds nothing to update.
UPDATE web_logins SET used_at = @now::timestamptz
WHERE secret_hash = @secret_hash AND used_at IS NULL
RETURNING *;

-- name: LoginPrune :execrows
DELETE FROM web_logins
WHERE id IN (
    SELECT l.id FROM web_logins AS l
    WHERE l.expires_at < @before::timestamptz
    LIMIT @max_rows);
