-- Who may talk to agents: pairings (one per platform identity) and the
-- refusal notices sent (one per person and UTC day).

-- name: PairingRequest :one
-- Hands out the new code unless the identity is approved or holds a code
-- that is still valid. No row back: it is or does (the driver reads it).
INSERT INTO pairings (platform, user_id, workspace, user_name, code, status, created_at, expires_at)
VALUES (@platform, @user_id, @workspace, @user_name, @code, 'pending', @now::timestamptz, @expires_at::timestamptz)
ON CONFLICT (platform, user_id) DO UPDATE
SET workspace = EXCLUDED.workspace, user_name = EXCLUDED.user_name, code = EXCLUDED.code,
    created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
WHERE pairings.status = 'pending' AND pairings.expires_at <= @now::timestamptz
RETURNING *;

-- name: PairingFind :one
SELECT * FROM pairings WHERE platform = @platform AND user_id = @user_id;

-- name: PairingApprove :one
UPDATE pairings
SET status = 'approved', approved_at = @now::timestamptz, approved_by = @approved_by
WHERE code = @code AND status = 'pending' AND expires_at > @now::timestamptz
RETURNING *;

-- name: PairingList :many
-- Pending codes that expired are left out: they can no longer be approved.
SELECT * FROM pairings
WHERE (@status::text = '' OR status = @status::text)
  AND (status = 'approved' OR expires_at > @now::timestamptz)
ORDER BY created_at DESC, platform, user_id
LIMIT @max_rows;

-- name: RefusalNoticeRecord :execrows
INSERT INTO refusal_notices (platform, user_id, day, created_at)
VALUES (@platform, @user_id, @day, @now::timestamptz)
ON CONFLICT (platform, user_id, day) DO NOTHING;
