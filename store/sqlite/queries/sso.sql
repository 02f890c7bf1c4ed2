-- Single sign-on (see the Postgres twin).

-- name: OIDCStateInsert :one
INSERT INTO oidc_states (state_hash, nonce, code_verifier, return_to, created_at, expires_at)
VALUES (sqlc.arg(state_hash), sqlc.arg(nonce), sqlc.arg(code_verifier), sqlc.arg(return_to),
        CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(expires_at) AS INTEGER))
RETURNING *;

-- name: OIDCStateByHash :one
SELECT * FROM oidc_states WHERE state_hash = sqlc.arg(state_hash);

-- name: OIDCStateMarkUsed :one
-- Only the first use marks the row: a second finds nothing to update.
UPDATE oidc_states SET used_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE state_hash = sqlc.arg(state_hash) AND used_at IS NULL
RETURNING *;

-- name: OIDCStatesPrune :execrows
DELETE FROM oidc_states
WHERE state_hash IN (
    SELECT s.state_hash FROM oidc_states AS s
    WHERE s.expires_at < CAST(sqlc.arg(before) AS INTEGER)
    LIMIT CAST(sqlc.arg(limit) AS INTEGER));

-- name: SSOGrantsOf :many
SELECT * FROM sso_grants WHERE person_id = sqlc.arg(person_id) ORDER BY workspace_id;

-- name: SSOGrantUpsert :one
INSERT INTO sso_grants (person_id, workspace_id, role, created_at, updated_at)
VALUES (sqlc.arg(person_id), sqlc.arg(workspace_id), sqlc.arg(role),
        CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (person_id, workspace_id) DO UPDATE
SET role = excluded.role,
    updated_at = CASE WHEN sso_grants.role = excluded.role THEN sso_grants.updated_at ELSE excluded.updated_at END
RETURNING *;

-- name: SSOGrantRemove :exec
DELETE FROM sso_grants WHERE person_id = sqlc.arg(person_id) AND workspace_id = sqlc.arg(workspace_id);
