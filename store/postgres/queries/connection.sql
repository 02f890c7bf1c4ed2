-- Connections: one per provider and owner, the tokens sealed.

-- name: ConnectionSave :one
-- A reconnect replaces everything but id and created_at.
INSERT INTO connections AS c (
    id, provider, owner_kind, owner_id, account, account_id, scopes,
    access_token, refresh_token, token_type, expiry, connected_by, created_at, updated_at
) VALUES (
    @id, @provider, @owner_kind, @owner_id, @account, @account_id, @scopes::text[],
    @access_token, @refresh_token, @token_type, sqlc.narg(expiry)::timestamptz, @connected_by, @now::timestamptz, @now::timestamptz
)
ON CONFLICT (provider, owner_kind, owner_id) DO UPDATE
SET (account, account_id, scopes, access_token, refresh_token, token_type, expiry, connected_by, updated_at)
  = (EXCLUDED.account, EXCLUDED.account_id, EXCLUDED.scopes, EXCLUDED.access_token, EXCLUDED.refresh_token,
     EXCLUDED.token_type, EXCLUDED.expiry, EXCLUDED.connected_by, EXCLUDED.updated_at)
RETURNING *;

-- name: ConnectionGet :one
SELECT * FROM connections WHERE id = @id;

-- name: ConnectionFind :one
SELECT * FROM connections WHERE provider = @provider AND owner_kind = @owner_kind AND owner_id = @owner_id;

-- name: ConnectionList :many
-- One owner's (@owner_kind set), else all.
SELECT * FROM connections
WHERE id > @after_id
  AND (@owner_kind::text = '' OR (owner_kind = @owner_kind::text AND owner_id = @owner_id))
ORDER BY id
LIMIT @max_rows::int;

-- name: ConnectionSetTokens :one
-- No row back: the connection is gone or its token is no longer @expect.
UPDATE connections
SET access_token = @access_token, refresh_token = @refresh_token, expiry = sqlc.narg(expiry)::timestamptz,
    updated_at = @now::timestamptz
WHERE id = @id AND access_token = @expect
RETURNING *;

-- name: ConnectionDelete :execrows
DELETE FROM connections WHERE id = @id;
