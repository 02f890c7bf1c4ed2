-- Tool execution markers: written before a server tool's handler starts, so
-- that a resumed turn never starts a call twice.

-- name: ToolExecutionInsert :one
-- No row back: the call was started before (the driver reads its marker).
INSERT INTO tool_executions (conversation_id, call_id, state, started_at)
VALUES (sqlc.arg(conversation_id), sqlc.arg(call_id), 'executing', CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (conversation_id, call_id) DO NOTHING
RETURNING *;

-- name: ToolExecutionFinish :one
-- Ends the run as finished or interrupted; a second end keeps the first
-- state and time.
UPDATE tool_executions
SET state = CASE WHEN finished_at IS NULL THEN CAST(sqlc.arg(state) AS TEXT) ELSE state END,
    finished_at = COALESCE(finished_at, CAST(sqlc.arg(now) AS INTEGER))
WHERE conversation_id = sqlc.arg(conversation_id) AND call_id = sqlc.arg(call_id)
RETURNING *;

-- name: ToolExecutionGet :one
SELECT * FROM tool_executions
WHERE conversation_id = sqlc.arg(conversation_id) AND call_id = sqlc.arg(call_id);
