-- Conversations: the fork tree and the turn lease.
-- Every query returning a conversation lists the same columns, which
-- conversationRow scans by name.

-- name: ConversationCreate
-- $1 id, $2 agent_id, $3 title, $4 provider, $5 model, $6 thinking,
-- $7 metadata, $8 now. No row back means the id is taken.
INSERT INTO conversations (id, root_id, agent_id, title, provider, model, thinking,
                           metadata, created_at, updated_at)
VALUES ($1, $1, $2, $3, $4, $5, $6, $7, $8, $8)
ON CONFLICT (id) DO NOTHING
RETURNING id, parent_id, root_id, fork_seq, child_count, agent_id, title, provider,
          model, thinking, status, metadata, lease_owner, lease_expires_at,
          heartbeat_at, turn_attempts, last_seq, created_at, updated_at;

-- name: ConversationGet
SELECT id, parent_id, root_id, fork_seq, child_count, agent_id, title, provider,
       model, thinking, status, metadata, lease_owner, lease_expires_at,
       heartbeat_at, turn_attempts, last_seq, created_at, updated_at
FROM conversations
WHERE id = $1;

-- name: ConversationExists
SELECT EXISTS (SELECT 1 FROM conversations WHERE id = $1);

-- name: ConversationForks
SELECT id, parent_id, root_id, fork_seq, child_count, agent_id, title, provider,
       model, thinking, status, metadata, lease_owner, lease_expires_at,
       heartbeat_at, turn_attempts, last_seq, created_at, updated_at
FROM conversations
WHERE parent_id = $1
ORDER BY created_at, id;

-- name: ConversationLineage
-- From the root down to $1 itself.
WITH RECURSIVE up AS (
    SELECT c.*, 0 AS depth
    FROM conversations c
    WHERE c.id = $1
    UNION ALL
    SELECT p.*, up.depth + 1
    FROM conversations p
    JOIN up ON p.id = up.parent_id
)
SELECT id, parent_id, root_id, fork_seq, child_count, agent_id, title, provider,
       model, thinking, status, metadata, lease_owner, lease_expires_at,
       heartbeat_at, turn_attempts, last_seq, created_at, updated_at
FROM up
ORDER BY depth DESC;

-- name: ConversationSetStatus
-- $1 id, $2 status, $3 turn_attempts (NULL keeps it), $4 now.
UPDATE conversations
SET status = $2,
    turn_attempts = COALESCE($3::integer, turn_attempts),
    updated_at = $4
WHERE id = $1
RETURNING id, parent_id, root_id, fork_seq, child_count, agent_id, title, provider,
          model, thinking, status, metadata, lease_owner, lease_expires_at,
          heartbeat_at, turn_attempts, last_seq, created_at, updated_at;

-- name: ConversationLeaseAcquire
-- $1 id, $2 owner, $3 expires_at, $4 now. Takes the lease when free or
-- expired, renews it when $2 already holds it. A lease taken here is not tied
-- to a work item, unless $2 renews the lease its own claim took.
UPDATE conversations
SET lease_work_id = CASE WHEN lease_owner = $2 AND lease_expires_at > $4
                         THEN lease_work_id END,
    lease_owner = $2,
    lease_expires_at = $3,
    heartbeat_at = $4,
    status = CASE WHEN status = 'idle' THEN 'running' ELSE status END,
    updated_at = $4
WHERE id = $1
  AND (lease_owner = '' OR lease_owner = $2
       OR lease_expires_at IS NULL OR lease_expires_at <= $4)
RETURNING id, parent_id, root_id, fork_seq, child_count, agent_id, title, provider,
          model, thinking, status, metadata, lease_owner, lease_expires_at,
          heartbeat_at, turn_attempts, last_seq, created_at, updated_at;

-- name: ConversationLeaseRelease
-- $1 id, $2 owner, $3 now. A paused conversation stays paused.
UPDATE conversations
SET lease_owner = '',
    lease_expires_at = NULL,
    heartbeat_at = NULL,
    lease_work_id = NULL,
    status = CASE WHEN status = 'running' THEN 'idle' ELSE status END,
    updated_at = $3
WHERE id = $1 AND lease_owner = $2 AND $2 <> '';

-- name: ConversationListExpiredLeases
-- $1 now, $2 limit (NULL: all).
SELECT id, parent_id, root_id, fork_seq, child_count, agent_id, title, provider,
       model, thinking, status, metadata, lease_owner, lease_expires_at,
       heartbeat_at, turn_attempts, last_seq, created_at, updated_at
FROM conversations
WHERE lease_owner <> '' AND lease_expires_at < $1
ORDER BY lease_expires_at, id
LIMIT $2;
