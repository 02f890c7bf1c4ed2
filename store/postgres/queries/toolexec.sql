-- Tool execution markers: written before a server tool's handler starts, so
-- that a resumed turn never starts a call twice.

-- name: ToolExecutionStart :one
-- Inserts the marker unless the call has one. With lease_owner set, only
-- while it holds the conversation's live lease; FOR SHARE waits for a
-- takeover in flight and re-checks on the row it committed. No row back: the
-- call was started before, the lease is not lease_owner's, or the
-- conversation is missing (the driver tells which).
INSERT INTO tool_executions (conversation_id, call_id, state, started_at)
SELECT c.id, @call_id, 'executing', @now::timestamptz
FROM conversations c
WHERE c.id = @conversation_id
  AND (@lease_owner::text = '' OR (c.lease_owner = @lease_owner::text AND c.lease_expires_at > @now::timestamptz))
FOR SHARE
ON CONFLICT (conversation_id, call_id) DO NOTHING
RETURNING *;

-- name: ToolExecutionFinish :one
-- Ends the run as finished or interrupted; a second end keeps the first
-- state and time.
UPDATE tool_executions
SET state = CASE WHEN finished_at IS NULL THEN @state::text ELSE state END,
    finished_at = COALESCE(finished_at, @now::timestamptz)
WHERE conversation_id = @conversation_id AND call_id = @call_id
RETURNING *;

-- name: ToolExecutionGet :one
SELECT * FROM tool_executions WHERE conversation_id = @conversation_id AND call_id = @call_id;
