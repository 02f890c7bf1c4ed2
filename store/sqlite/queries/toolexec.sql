-- Tool execution markers: written before a server tool's handler starts, so
-- that a resumed turn never starts a call twice.

-- name: ToolExecutionInsert
-- No row back: the call was started before (the driver reads its marker).
INSERT INTO tool_executions (conversation_id, call_id, state, started_at)
VALUES (:conversation_id, :call_id, 'executing', :now)
ON CONFLICT (conversation_id, call_id) DO NOTHING
RETURNING conversation_id, call_id, state, started_at, finished_at;

-- name: ToolExecutionFinish
-- A second finish keeps the first time.
UPDATE tool_executions
SET state = 'finished', finished_at = COALESCE(finished_at, :now)
WHERE conversation_id = :conversation_id AND call_id = :call_id
RETURNING conversation_id, call_id, state, started_at, finished_at;

-- name: ToolExecutionGet
SELECT conversation_id, call_id, state, started_at, finished_at
FROM tool_executions
WHERE conversation_id = :conversation_id AND call_id = :call_id;
