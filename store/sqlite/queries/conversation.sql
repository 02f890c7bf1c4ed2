-- Conversations: the fork tree, the coarse status and the turn lease.

-- name: ConversationInsert :one
INSERT INTO conversations (
    id, parent_id, root_id, fork_seq, agent_id, title, title_auto, provider, model,
    thinking, metadata, last_seq, created_at, updated_at
) VALUES (
    sqlc.arg(id), sqlc.narg(parent_id), sqlc.arg(root_id), sqlc.narg(fork_seq),
    sqlc.narg(agent_id), sqlc.arg(title), sqlc.arg(title_auto), sqlc.arg(provider), sqlc.arg(model),
    sqlc.arg(thinking), sqlc.arg(metadata), sqlc.arg(last_seq), CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER)
)
RETURNING *;

-- name: ConversationGet :one
SELECT * FROM conversations WHERE id = sqlc.arg(id);

-- name: ConversationExists :one
SELECT COUNT(*) FROM conversations WHERE id = sqlc.arg(id);

-- name: ConversationForks :many
SELECT * FROM conversations WHERE parent_id = sqlc.arg(id)
  AND NOT EXISTS (SELECT 1 FROM conversation_filing f WHERE f.conversation_id = conversations.id AND f.deleted_at IS NOT NULL)
ORDER BY created_at, rowid;

-- name: ConversationSetStatus :one
UPDATE conversations
SET status = sqlc.arg(status),
    turn_attempts = COALESCE(sqlc.narg(turn_attempts), turn_attempts),
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id)
RETURNING *;

-- name: ConversationLeaseExtend :execrows
-- Extends the lease for a work item's heartbeat. It also retakes a lease that
-- expired and that nobody else took meanwhile.
UPDATE conversations
SET lease_owner = sqlc.arg(owner),
    lease_expires_at = CAST(sqlc.arg(expires_at) AS INTEGER),
    heartbeat_at = CAST(sqlc.arg(now) AS INTEGER),
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id)
  AND (lease_owner IN ('', sqlc.arg(owner)) OR lease_expires_at IS NULL OR lease_expires_at <= CAST(sqlc.arg(now) AS INTEGER));

-- name: ConversationLeaseRelease :execrows
-- A paused conversation stays paused; only "running" falls back to idle.
UPDATE conversations
SET lease_owner = '',
    lease_expires_at = NULL,
    heartbeat_at = NULL,
    status = CASE WHEN status = 'running' THEN 'idle' ELSE status END,
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id) AND lease_owner = sqlc.arg(owner) AND lease_owner <> '';

-- name: ConversationLeaseReleaseOwner :exec
-- Releases every conversation lease the owner holds (an instance restarting
-- under the same id held nothing that is still alive).
UPDATE conversations
SET lease_owner = '',
    lease_expires_at = NULL,
    heartbeat_at = NULL,
    status = CASE WHEN status = 'running' THEN 'idle' ELSE status END,
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE lease_owner = sqlc.arg(owner) AND lease_owner <> '';

-- name: ConversationLeaseHeldBy :one
-- 1 when the owner holds the conversation's lease, unexpired at now: the
-- fence of an append or a tool start, read in the writing transaction.
SELECT COUNT(*) FROM conversations
WHERE id = sqlc.arg(id) AND lease_owner = sqlc.arg(owner) AND lease_expires_at > CAST(sqlc.arg(now) AS INTEGER);

-- name: ConversationListExpiredLeases :many
SELECT * FROM conversations
WHERE lease_owner <> '' AND lease_expires_at < CAST(sqlc.arg(now) AS INTEGER)
ORDER BY lease_expires_at, rowid
LIMIT CAST(sqlc.arg(limit) AS INTEGER);

-- name: ConversationNextSeq :one
-- Allocates the next seq of the log. No row back means no such conversation.
-- A title is taken only by a conversation that has none (a rename's stays),
-- and is then automatic (title_auto).
UPDATE conversations
SET last_seq = last_seq + 1, updated_at = CAST(sqlc.arg(now) AS INTEGER),
    title = CASE WHEN title = '' THEN CAST(sqlc.arg(title) AS TEXT) ELSE title END,
    title_auto = CASE WHEN title = '' THEN CAST(sqlc.arg(title) AS TEXT) <> '' ELSE title_auto END
WHERE id = sqlc.arg(id)
RETURNING last_seq;

-- name: ConversationAddChild :exec
UPDATE conversations
SET child_count = child_count + 1, updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id);

-- name: ConversationListed :many
-- The conversations a caller may see, most recently active first, a page
-- at a time: those of the listed workspaces, or every one.
SELECT * FROM conversations
WHERE (CAST(sqlc.arg(all_workspaces) AS INTEGER) <> 0
       OR workspace_id IN (SELECT value FROM json_each(CAST(sqlc.arg(workspace_ids) AS TEXT))))
  AND (CAST(sqlc.arg(before_updated) AS INTEGER) = 0
       OR updated_at < CAST(sqlc.arg(before_updated) AS INTEGER)
       OR (updated_at = CAST(sqlc.arg(before_updated) AS INTEGER) AND id < CAST(sqlc.arg(before_id) AS TEXT)))
ORDER BY updated_at DESC, id DESC
LIMIT CAST(sqlc.arg(limit) AS INTEGER);
