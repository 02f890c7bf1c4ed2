-- Retention per workspace: the settings, the trees of conversations past
-- them, and the purge of one tree with everything that hangs off it.

-- name: RetentionSet :one
INSERT INTO workspace_retention (workspace_id, keep_days, export_dir, updated_at)
VALUES (@workspace_id, @keep_days, @export_dir, @now::timestamptz)
ON CONFLICT (workspace_id) DO UPDATE
SET keep_days = excluded.keep_days, export_dir = excluded.export_dir, updated_at = excluded.updated_at
RETURNING *;

-- name: RetentionClear :exec
DELETE FROM workspace_retention WHERE workspace_id = @workspace_id;

-- name: RetentionGet :one
SELECT * FROM workspace_retention WHERE workspace_id = @workspace_id;

-- name: RetentionList :many
SELECT * FROM workspace_retention ORDER BY workspace_id;

-- name: RetentionExpiredRoots :many
-- Roots of the workspace last active before the cutoff whose whole tree is
-- past it and idle: no turn holds a lease, no work item is available or
-- running, no approval waits. Oldest first, after the cursor.
SELECT c.id, c.updated_at FROM conversations c
WHERE c.workspace_id = @workspace_id
  AND c.parent_id IS NULL
  AND c.updated_at < @before::timestamptz
  AND (sqlc.narg(after_at)::timestamptz IS NULL
       OR (c.updated_at, c.id) > (sqlc.narg(after_at)::timestamptz, sqlc.narg(after_id)::uuid))
  AND NOT EXISTS (
      SELECT 1 FROM conversations t
      WHERE t.root_id = c.id
        AND (t.updated_at >= @before::timestamptz
             OR (t.lease_owner <> '' AND t.lease_expires_at > @now::timestamptz)
             OR EXISTS (SELECT 1 FROM work_items w
                        WHERE w.conversation_id = t.id AND w.state IN ('available', 'running'))
             OR EXISTS (SELECT 1 FROM approvals a
                        WHERE a.conversation_id = t.id AND a.status = 'pending')))
ORDER BY c.updated_at, c.id
LIMIT @max_rows;

-- name: RetentionTree :many
SELECT id FROM conversations WHERE root_id = @root_id ORDER BY created_at, id;

-- name: RetentionLockTree :many
-- The tree's rows, locked: an append, a claim or a new work item of any of
-- them waits for the purge, and then finds it gone.
SELECT id, parent_id, workspace_id, updated_at, lease_owner, lease_expires_at
FROM conversations WHERE root_id = @root_id
ORDER BY id
FOR UPDATE;

-- name: RetentionTreeBusy :one
SELECT EXISTS (
    SELECT 1 FROM work_items w JOIN conversations t ON t.id = w.conversation_id
    WHERE t.root_id = @root_id AND w.state IN ('available', 'running')
) OR EXISTS (
    SELECT 1 FROM approvals a JOIN conversations t ON t.id = a.conversation_id
    WHERE t.root_id = @root_id AND a.status = 'pending'
);

-- What refers to a conversation without a cascade goes first, each by the
-- tree's ids; the rest (notes, participants and floors, side threads,
-- delegations, runs with their steps, events and messages, card choices,
-- artifact versions and comments) cascades from the rows deleted here.

-- name: PurgeEntries :execrows
DELETE FROM entries WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = @root_id);

-- name: PurgeDiscardedEntries :exec
DELETE FROM discarded_entries WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = @root_id);

-- name: PurgeWork :exec
DELETE FROM work_items WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = @root_id);

-- name: PurgePosted :exec
DELETE FROM posted WHERE binding_id IN (
    SELECT b.id FROM bindings b JOIN conversations t ON t.id = b.conversation_id WHERE t.root_id = @root_id);

-- name: PurgeLiveStreams :exec
DELETE FROM live_streams WHERE binding_id IN (
    SELECT b.id FROM bindings b JOIN conversations t ON t.id = b.conversation_id WHERE t.root_id = @root_id);

-- name: PurgeBindings :exec
DELETE FROM bindings WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = @root_id);

-- name: PurgeApprovals :exec
DELETE FROM approvals WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = @root_id);

-- name: PurgeAudit :exec
DELETE FROM audit_records WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = @root_id);

-- name: PurgeUsage :execrows
DELETE FROM usage_records WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = @root_id);

-- name: PurgeScheduleRuns :exec
-- A schedule's run stays in the schedule's record, with no conversation.
UPDATE schedule_runs SET conversation_id = NULL
WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = @root_id);

-- name: PurgeToolExecutions :exec
DELETE FROM tool_executions WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = @root_id);

-- name: PurgeRulebooks :exec
DELETE FROM conversation_rulebooks WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = @root_id);

-- name: PurgeFiling :exec
DELETE FROM conversation_filing WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = @root_id);

-- name: PurgeNotes :exec
DELETE FROM notes WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = @root_id);

-- name: PurgeArtifacts :execrows
DELETE FROM artifacts WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = @root_id);

-- name: PurgeConversations :execrows
-- One statement for the whole tree: a fork's reference to its parent is
-- checked at its end, when both are gone.
DELETE FROM conversations WHERE root_id = @root_id;
