-- Web console sign-in: login links and browser sessions, found by the
-- SHA-256 of their secret.

-- name: LoginCreate :one
INSERT INTO web_logins (id, kind, secret_hash, person_id, created_at, expires_at, method, id_token,
                        last_used_at, last_ip, last_user_agent)
VALUES (@id, @kind, @secret_hash, sqlc.narg(person_id)::uuid, @now::timestamptz, @expires_at::timestamptz,
        @method, @id_token, CASE WHEN @kind = 'session' THEN @now::timestamptz END, @ip, @user_agent)
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

-- name: LoginGet :one
SELECT * FROM web_logins WHERE id = @id;

-- name: LoginTouch :exec
-- At most one write per Every: a row used since is left alone.
UPDATE web_logins
SET last_used_at = @now::timestamptz, last_ip = @ip, last_user_agent = @user_agent
WHERE id = @id
  AND (last_used_at IS NULL OR last_used_at <= @used_before::timestamptz
       OR last_ip <> @ip OR last_user_agent <> @user_agent);

-- name: LoginSessions :many
SELECT * FROM web_logins
WHERE kind = 'session' AND used_at IS NULL AND expires_at > @now::timestamptz
  AND (@all_sessions::boolean
       OR person_id = ANY(CAST(@person_ids::text[] AS uuid[]))
       OR (@operator::boolean AND person_id IS NULL))
ORDER BY created_at DESC, id DESC
LIMIT @max_rows;

-- name: LoginEnd :one
UPDATE web_logins SET used_at = COALESCE(used_at, @now::timestamptz)
WHERE id = @id AND kind = 'session'
RETURNING *;
