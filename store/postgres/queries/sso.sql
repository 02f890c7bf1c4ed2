-- Single sign-on: the sign-ins under way and the roles SSO gave.

-- name: OIDCStateCreate :one
INSERT INTO oidc_states (state_hash, nonce, code_verifier, return_to, created_at, expires_at)
VALUES (@state_hash, @nonce, @code_verifier, @return_to, @now::timestamptz, @expires_at::timestamptz)
RETURNING *;

-- name: OIDCStateFind :one
SELECT * FROM oidc_states WHERE state_hash = @state_hash;

-- name: OIDCStateUse :one
-- Only the first use marks the row: a second finds nothing to update.
UPDATE oidc_states SET used_at = @now::timestamptz
WHERE state_hash = @state_hash AND used_at IS NULL
RETURNING *;

-- name: OIDCStatePrune :execrows
DELETE FROM oidc_states
WHERE state_hash IN (
    SELECT s.state_hash FROM oidc_states AS s
    WHERE s.expires_at < @before::timestamptz
    LIMIT @max_rows);

-- name: SSOGrantList :many
SELECT * FROM sso_grants WHERE person_id = @person_id ORDER BY workspace_id;

-- name: SSOGrantPut :one
INSERT INTO sso_grants (person_id, workspace_id, role, created_at, updated_at)
VALUES (@person_id, @workspace_id, @role, @now::timestamptz, @now::timestamptz)
ON CONFLICT (person_id, workspace_id) DO UPDATE
SET role = excluded.role,
    updated_at = CASE WHEN sso_grants.role = excluded.role THEN sso_grants.updated_at ELSE excluded.updated_at END
RETURNING *;

-- name: SSOGrantDelete :exec
DELETE FROM sso_grants WHERE person_id = @person_id AND workspace_id = @workspace_id;
