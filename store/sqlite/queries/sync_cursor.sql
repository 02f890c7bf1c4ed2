-- Sync cursors, one row per pulled event stream.

-- name: SyncCursorGet :one
SELECT * FROM sync_cursors WHERE name = sqlc.arg(name);

-- name: SyncCursorUpsert :exec
INSERT INTO sync_cursors (name, cursor, updated_at)
VALUES (sqlc.arg(name), sqlc.arg(cursor), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (name) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at;
