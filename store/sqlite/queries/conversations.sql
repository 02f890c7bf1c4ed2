-- Conversations: the fork tree, the coarse status and the turn lease.
-- Column order of every conversation row returned here is the one
-- scanConversation expects.

-- name: ConversationInsert
INSERT INTO conversations (
    id, parent_id, root_id, fork_seq, agent_id, title, provider, model,
    thinking, metadata, last_seq, created_at, updated_at
) VALUES (
    :id, :parent_id, :root_id, :fork_seq, :agent_id, :title, :provider, :model,
    :thinking, :metadata, :last_seq, :now, :now
)
RETURNING id, parent_id, root_id, fork_seq, child_count, agent_id, title,
    provider, model, thinking, status, metadata, lease_owner, lease_expires_at,
    heartbeat_at, turn_attempts, last_seq, created_at, updated_at;

-- name: ConversationGet
SELECT id, parent_id, root_id, fork_seq, child_count, agent_id, title,
    provider, model, thinking, status, metadata, lease_owner, lease_expires_at,
    heartbeat_at, turn_attempts, last_seq, created_at, updated_at
FROM conversations
WHERE id = :id;

-- name: ConversationExists
SELECT COUNT(*) FROM conversations WHERE id = :id;

-- name: ConversationForks
SELECT id, parent_id, root_id, fork_seq, child_count, agent_id, title,
    provider, model, thinking, status, metadata, lease_owner, lease_expires_at,
    heartbeat_at, turn_attempts, last_seq, created_at, updated_at
FROM conversations
WHERE parent_id = :id
ORDER BY created_at, rowid;

-- name: ConversationLineage
-- Walks parent_id up from the conversation, then returns the chain root first.
WITH RECURSIVE up (id, depth) AS (
    SELECT id, 0 FROM conversations WHERE id = :id
    UNION ALL
    SELECT c.parent_id, up.depth + 1
    FROM up JOIN conversations AS c ON c.id = up.id
    WHERE c.parent_id IS NOT NULL
)
SELECT c.id, c.parent_id, c.root_id, c.fork_seq, c.child_count, c.agent_id,
    c.title, c.provider, c.model, c.thinking, c.status, c.metadata,
    c.lease_owner, c.lease_expires_at, c.heartbeat_at, c.turn_attempts,
    c.last_seq, c.created_at, c.updated_at
FROM up JOIN conversations AS c ON c.id = up.id
ORDER BY up.depth DESC;

-- name: ConversationSetStatus
UPDATE conversations
SET status = :status,
    turn_attempts = COALESCE(:turn_attempts, turn_attempts),
    updated_at = :now
WHERE id = :id
RETURNING id, parent_id, root_id, fork_seq, child_count, agent_id, title,
    provider, model, thinking, status, metadata, lease_owner, lease_expires_at,
    heartbeat_at, turn_attempts, last_seq, created_at, updated_at;

-- name: ConversationLeaseAcquire
-- Takes the lease when it is free, expired, or already Owner's (a renewal).
-- An idle conversation becomes running; a paused one stays paused (the
-- status is the engine's, the lease only marks a turn that starts).
UPDATE conversations
SET lease_owner = :owner,
    lease_expires_at = :expires_at,
    heartbeat_at = :now,
    status = CASE WHEN status = 'idle' THEN 'running' ELSE status END,
    updated_at = :now
WHERE id = :id
  AND (lease_owner IN ('', :owner) OR lease_expires_at IS NULL OR lease_expires_at <= :now)
RETURNING id, parent_id, root_id, fork_seq, child_count, agent_id, title,
    provider, model, thinking, status, metadata, lease_owner, lease_expires_at,
    heartbeat_at, turn_attempts, last_seq, created_at, updated_at;

-- name: ConversationLeaseExtend
-- Extends the lease for a work item's heartbeat. It also retakes a lease that
-- expired and that nobody else took meanwhile.
UPDATE conversations
SET lease_owner = :owner,
    lease_expires_at = :expires_at,
    heartbeat_at = :now,
    updated_at = :now
WHERE id = :id
  AND (lease_owner IN ('', :owner) OR lease_expires_at IS NULL OR lease_expires_at <= :now);

-- name: ConversationLeaseRelease
-- A paused conversation stays paused; only "running" falls back to idle.
UPDATE conversations
SET lease_owner = '',
    lease_expires_at = NULL,
    heartbeat_at = NULL,
    status = CASE WHEN status = 'running' THEN 'idle' ELSE status END,
    updated_at = :now
WHERE id = :id AND lease_owner = :owner AND lease_owner <> '';

-- name: ConversationLeaseReleaseOwner
-- Releases every conversation lease :owner holds (an instance restarting
-- under the same id held nothing that is still alive).
UPDATE conversations
SET lease_owner = '',
    lease_expires_at = NULL,
    heartbeat_at = NULL,
    status = CASE WHEN status = 'running' THEN 'idle' ELSE status END,
    updated_at = :now
WHERE lease_owner = :owner AND lease_owner <> '';

-- name: ConversationLeaseHeldBy
-- 1 when :owner holds the conversation's lease, unexpired at :now: the fence
-- of an append or a tool start, read in the writing transaction.
SELECT COUNT(*) FROM conversations
WHERE id = :id AND lease_owner = :owner AND lease_expires_at > :now;

-- name: ConversationListExpiredLeases
SELECT id, parent_id, root_id, fork_seq, child_count, agent_id, title,
    provider, model, thinking, status, metadata, lease_owner, lease_expires_at,
    heartbeat_at, turn_attempts, last_seq, created_at, updated_at
FROM conversations
WHERE lease_owner <> '' AND lease_expires_at < :now
ORDER BY lease_expires_at, rowid
LIMIT :limit;

-- name: ConversationNextSeq
-- Allocates the next seq of the log when it is the one the caller expects
-- (any, when :expect_seq is NULL). No row back means: no such conversation,
-- or the expected seq is taken (a fork) or past the end.
UPDATE conversations
SET last_seq = last_seq + 1, updated_at = :now
WHERE id = :id AND (:expect_seq IS NULL OR last_seq + 1 = :expect_seq)
RETURNING last_seq;

-- name: ConversationRewind
UPDATE conversations
SET last_seq = MIN(last_seq, :after_seq), updated_at = :now
WHERE id = :id;

-- name: ConversationAddChild
UPDATE conversations
SET child_count = child_count + 1, updated_at = :now
WHERE id = :id;
