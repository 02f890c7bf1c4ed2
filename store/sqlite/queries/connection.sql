-- Connections: one per provider and owner, the tokens sealed.

-- name: ConnectionSave :one
-- A reconnect replaces everything but id and created_at.
INSERT INTO connections (
    id, provider, owner_kind, owner_id, account, account_id, scopes,
    access_token, refresh_token, token_type, expiry, connected_by, created_at, updated_at
) VALUES (
    sqlc.arg(id), sqlc.arg(provider), sqlc.arg(owner_kind), sqlc.arg(owner_id), sqlc.arg(account), sqlc.arg(account_id), sqlc.arg(scopes),
    sqlc.arg(access_token), sqlc.arg(refresh_token), sqlc.arg(token_type), sqlc.narg(expiry), sqlc.arg(connected_by),
    CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER)
)
ON CONFLICT (provider, owner_kind, owner_id) DO UPDATE
SET account = excluded.account,
    account_id = excluded.account_id,
    scopes = excluded.scopes,
    access_token = excluded.access_token,
    refresh_token = excluded.refresh_token,
    token_type = excluded.token_type,
    expiry = excluded.expiry,
    connected_by = excluded.connected_by,
    updated_at = excluded.updated_at
RETURNING *;

-- name: ConnectionGet :one
SELECT * FROM connections WHERE id = sqlc.arg(id);

-- name: ConnectionFind :one
SELECT * FROM connections
WHERE provider = sqlc.arg(provider) AND owner_kind = sqlc.arg(owner_kind) AND owner_id = sqlc.arg(owner_id);

-- name: ConnectionList :many
-- One owner's (owner_kind set), else all.
SELECT * FROM connections
WHERE id > sqlc.arg(after_id)
  AND (CAST(sqlc.arg(owner_kind) AS TEXT) = '' OR (owner_kind = sqlc.arg(owner_kind) AND owner_id = sqlc.arg(owner_id)))
ORDER BY id
LIMIT CAST(sqlc.arg(max_rows) AS INTEGER);

-- name: ConnectionSetTokens :one
-- No row back: the connection is gone or its token is no longer expect.
UPDATE connections
SET access_token = sqlc.arg(access_token), refresh_token = sqlc.arg(refresh_token), expiry = sqlc.narg(expiry),
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id) AND access_token = sqlc.arg(expect)
RETURNING *;

-- name: ConnectionDelete :execrows
DELETE FROM connections WHERE id = sqlc.arg(id);
