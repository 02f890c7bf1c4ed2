-- Run messages (migration 0025): which platform message shows a run in a
-- place. The insert is the intent (no message yet); the primary key lets
-- one process make it.

-- name: RunMessageInsert :one
INSERT INTO run_messages (run_id, binding_id, platform, kind, state, sent, created_at, updated_at)
VALUES (@run_id, @binding_id, @platform, @kind, 'posting', '{}', @now::timestamptz, @now::timestamptz)
RETURNING *;

-- name: RunMessageGet :one
SELECT * FROM run_messages WHERE run_id = @run_id AND binding_id = @binding_id;

-- name: RunMessageSave :one
-- Compare-and-set on the version: only a process that read the record as
-- it is now may change it.
UPDATE run_messages
SET version = version + 1, channel = @channel, message_id = @message_id, kind = @kind, state = @state, sent = @sent,
    updated_at = @now::timestamptz
WHERE run_id = @run_id AND binding_id = @binding_id AND version = @prev_version
RETURNING *;
