-- Conversations: the fork tree and the turn lease. Every query returning a
-- conversation returns the whole row (dbsqlc.Conversation).

-- name: ConversationCreate :one
-- No row back means the id is taken.
INSERT INTO conversations (id, root_id, agent_id, title, provider, model, thinking,
                           metadata, created_at, updated_at)
VALUES (@id, @id, @agent_id, @title, @provider, @model, @thinking, @metadata, @now::timestamptz, @now::timestamptz)
ON CONFLICT (id) DO NOTHING
RETURNING *;

-- name: ConversationGet :one
SELECT * FROM conversations WHERE id = @id;

-- name: ConversationExists :one
SELECT EXISTS (SELECT 1 FROM conversations WHERE id = @id);

-- name: ConversationForks :many
SELECT * FROM conversations WHERE parent_id = @id
  AND NOT EXISTS (SELECT 1 FROM conversation_filing f WHERE f.conversation_id = conversations.id AND f.deleted_at IS NOT NULL)
ORDER BY created_at, id;

-- name: ConversationSetStatus :one
-- A NULL turn_attempts keeps the count.
UPDATE conversations
SET status = @status,
    turn_attempts = COALESCE(sqlc.narg(turn_attempts)::integer, turn_attempts),
    updated_at = @now::timestamptz
WHERE id = @id
RETURNING *;

-- name: ConversationLeaseRelease :execrows
-- A paused conversation stays paused.
UPDATE conversations
SET lease_owner = '',
    lease_expires_at = NULL,
    heartbeat_at = NULL,
    lease_work_id = NULL,
    status = CASE WHEN status = 'running' THEN 'idle' ELSE status END,
    updated_at = @now::timestamptz
WHERE id = @id AND lease_owner = @owner::text AND @owner::text <> '';

-- name: ConversationListExpiredLeases :many
SELECT * FROM conversations
WHERE lease_owner <> '' AND lease_expires_at < @now::timestamptz
ORDER BY lease_expires_at, id
LIMIT @max_rows;

-- name: ConversationList :many
-- The conversations a caller may see, most recently active first, a page
-- at a time: those of the listed workspaces, or every one.
SELECT * FROM conversations
WHERE (@all_workspaces::boolean OR workspace_id = ANY(CAST(@workspace_ids::text[] AS uuid[])))
  AND (sqlc.narg(before_updated)::timestamptz IS NULL
       OR (updated_at, id) < (sqlc.narg(before_updated)::timestamptz, @before_id::uuid))
ORDER BY updated_at DESC, id DESC
LIMIT @max_rows;
