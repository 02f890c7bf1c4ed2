-- Pairings and refusal notices (see the Postgres queries for the rules).

-- name: PairingUpsert :one
-- No row back: the identity is approved, or its code is still valid.
INSERT INTO pairings (platform, user_id, workspace, user_name, code, status, created_at, expires_at)
VALUES (sqlc.arg(platform), sqlc.arg(user_id), sqlc.arg(workspace), sqlc.arg(user_name), sqlc.arg(code),
        'pending', CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(expires_at) AS INTEGER))
ON CONFLICT (platform, user_id) DO UPDATE
SET workspace = excluded.workspace, user_name = excluded.user_name, code = excluded.code,
    created_at = excluded.created_at, expires_at = excluded.expires_at
WHERE pairings.status = 'pending' AND pairings.expires_at <= excluded.created_at -- excluded.created_at is now
RETURNING *;

-- name: PairingGet :one
SELECT * FROM pairings WHERE platform = sqlc.arg(platform) AND user_id = sqlc.arg(user_id);

-- name: PairingApprove :one
UPDATE pairings
SET status = 'approved', approved_at = CAST(sqlc.arg(now) AS INTEGER), approved_by = sqlc.arg(approved_by)
WHERE code = sqlc.arg(code) AND status = 'pending' AND expires_at > CAST(sqlc.arg(now) AS INTEGER)
RETURNING *;

-- name: PairingList :many
SELECT * FROM pairings
WHERE (CAST(sqlc.arg(status) AS TEXT) = '' OR status = CAST(sqlc.arg(status) AS TEXT))
  AND (status = 'approved' OR expires_at > CAST(sqlc.arg(now) AS INTEGER))
ORDER BY created_at DESC, platform, user_id
LIMIT sqlc.arg(max_rows);

-- name: RefusalNoticeInsert :execrows
INSERT INTO refusal_notices (platform, user_id, day, created_at)
VALUES (sqlc.arg(platform), sqlc.arg(user_id), sqlc.arg(day), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (platform, user_id, day) DO NOTHING;
