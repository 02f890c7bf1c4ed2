-- Run messages (migration 0025): which platform message shows a run in a
-- place. The insert is the intent (no message yet); the primary key lets
-- one process make it.

-- name: RunMessageInsert :one
INSERT INTO run_messages (run_id, binding_id, platform, kind, state, sent, created_at, updated_at)
VALUES (sqlc.arg(run_id), sqlc.arg(binding_id), sqlc.arg(platform), sqlc.arg(kind), 'posting', '{}',
        CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER))
RETURNING *;

-- name: RunMessageGet :one
SELECT * FROM run_messages WHERE run_id = sqlc.arg(run_id) AND binding_id = sqlc.arg(binding_id);

-- name: RunMessageSave :one
-- Compare-and-set on the version: only a process that read the record as
-- it is now may change it.
UPDATE run_messages
SET version = version + 1, channel = sqlc.arg(channel), message_id = sqlc.arg(message_id), kind = sqlc.arg(kind), state = sqlc.arg(state),
    sent = sqlc.arg(sent), updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE run_id = sqlc.arg(run_id) AND binding_id = sqlc.arg(binding_id) AND version = sqlc.arg(prev_version)
RETURNING *;
