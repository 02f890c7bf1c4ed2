-- Tool execution markers: written before a server tool's handler starts, so
-- that a resumed turn never starts a call twice.

-- name: ToolExecutionStart
-- Inserts the marker unless the call has one. With $4 set, only while $4
-- holds the conversation's live lease; FOR SHARE waits for a takeover in
-- flight and re-checks on the row it committed. No row back: the call was
-- started before, the lease is not $4's, or the conversation is missing
-- (the driver tells which).
-- $1 conversation_id, $2 call_id, $3 now, $4 lease_owner ('': unfenced).
INSERT INTO tool_executions (conversation_id, call_id, state, started_at)
SELECT c.id, $2, 'executing', $3
FROM conversations c
WHERE c.id = $1
  AND ($4::text = '' OR (c.lease_owner = $4::text AND c.lease_expires_at > $3))
FOR SHARE
ON CONFLICT (conversation_id, call_id) DO NOTHING
RETURNING conversation_id, call_id, state, started_at, finished_at;

-- name: ToolExecutionFinish
-- $1 conversation_id, $2 call_id, $3 now. A second finish keeps the first time.
UPDATE tool_executions
SET state = 'finished', finished_at = COALESCE(finished_at, $3)
WHERE conversation_id = $1 AND call_id = $2
RETURNING conversation_id, call_id, state, started_at, finished_at;

-- name: ToolExecutionGet
SELECT conversation_id, call_id, state, started_at, finished_at
FROM tool_executions
WHERE conversation_id = $1 AND call_id = $2;
