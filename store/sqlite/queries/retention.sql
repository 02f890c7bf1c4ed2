-- Retention per workspace (see the Postgres twin). SQLite has one writer,
-- so the purge's checks and deletes need no row locks.

-- name: RetentionSet :one
INSERT INTO workspace_retention (workspace_id, keep_days, export_dir, updated_at)
VALUES (sqlc.arg(workspace_id), sqlc.arg(keep_days), sqlc.arg(export_dir), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (workspace_id) DO UPDATE
SET keep_days = excluded.keep_days, export_dir = excluded.export_dir, updated_at = excluded.updated_at
RETURNING *;

-- name: RetentionClear :exec
DELETE FROM workspace_retention WHERE workspace_id = sqlc.arg(workspace_id);

-- name: RetentionGet :one
SELECT * FROM workspace_retention WHERE workspace_id = sqlc.arg(workspace_id);

-- name: RetentionList :many
SELECT * FROM workspace_retention ORDER BY workspace_id;

-- name: RetentionExpiredRoots :many
-- Roots of the workspace last active before the cutoff whose whole tree is
-- past it and idle: no turn holds a lease, no work item is available or
-- running, no approval waits. Oldest first, after the cursor.
SELECT c.id, c.updated_at FROM conversations AS c
WHERE c.workspace_id = sqlc.arg(workspace_id)
  AND c.parent_id IS NULL
  AND c.updated_at < CAST(sqlc.arg(before) AS INTEGER)
  AND (CAST(sqlc.arg(has_after) AS INTEGER) = 0
       OR c.updated_at > CAST(sqlc.arg(after_at) AS INTEGER)
       OR (c.updated_at = CAST(sqlc.arg(after_at) AS INTEGER) AND c.id > CAST(sqlc.arg(after_id) AS TEXT)))
  AND NOT EXISTS (
      SELECT 1 FROM conversations AS t
      WHERE t.root_id = c.id
        AND (t.updated_at >= CAST(sqlc.arg(before) AS INTEGER)
             OR (t.lease_owner <> '' AND t.lease_expires_at > CAST(sqlc.arg(now) AS INTEGER))
             OR EXISTS (SELECT 1 FROM work AS w
                        WHERE w.conversation_id = t.id AND w.state IN ('available', 'running'))
             OR EXISTS (SELECT 1 FROM approvals AS a
                        WHERE a.conversation_id = t.id AND a.status = 'pending')))
ORDER BY c.updated_at, c.id
LIMIT CAST(sqlc.arg(limit) AS INTEGER);

-- name: RetentionTree :many
SELECT id FROM conversations WHERE root_id = sqlc.arg(root_id) ORDER BY created_at, id;

-- name: RetentionLockTree :many
SELECT id, parent_id, workspace_id, updated_at, lease_owner, lease_expires_at
FROM conversations WHERE root_id = sqlc.arg(root_id)
ORDER BY id;

-- name: RetentionTreeBusy :one
SELECT CAST(EXISTS (
    SELECT 1 FROM work AS w JOIN conversations AS t ON t.id = w.conversation_id
    WHERE t.root_id = sqlc.arg(root_id) AND w.state IN ('available', 'running')
) OR EXISTS (
    SELECT 1 FROM approvals AS a JOIN conversations AS t ON t.id = a.conversation_id
    WHERE t.root_id = sqlc.arg(root_id) AND a.status = 'pending'
) AS INTEGER) AS busy;

-- What refers to a conversation without a cascade goes first (see the
-- Postgres twin); the rest cascades.

-- name: PurgeEntries :execrows
DELETE FROM entries WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = sqlc.arg(root_id));

-- name: PurgeDiscardedEntries :exec
DELETE FROM discarded_entries WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = sqlc.arg(root_id));

-- name: PurgeWork :exec
DELETE FROM work WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = sqlc.arg(root_id));

-- name: PurgePosted :exec
DELETE FROM posted WHERE binding_id IN (
    SELECT b.id FROM bindings AS b JOIN conversations AS t ON t.id = b.conversation_id WHERE t.root_id = sqlc.arg(root_id));

-- name: PurgeLiveStreams :exec
DELETE FROM live_streams WHERE binding_id IN (
    SELECT b.id FROM bindings AS b JOIN conversations AS t ON t.id = b.conversation_id WHERE t.root_id = sqlc.arg(root_id));

-- name: PurgeBindings :exec
DELETE FROM bindings WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = sqlc.arg(root_id));

-- name: PurgeApprovals :exec
DELETE FROM approvals WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = sqlc.arg(root_id));

-- name: PurgeAudit :exec
DELETE FROM audit WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = sqlc.arg(root_id));

-- name: PurgeUsage :execrows
DELETE FROM usage WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = sqlc.arg(root_id));

-- name: PurgeScheduleRuns :exec
UPDATE schedule_runs SET conversation_id = NULL
WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = sqlc.arg(root_id));

-- name: PurgeToolExecutions :exec
DELETE FROM tool_executions WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = sqlc.arg(root_id));

-- name: PurgeRulebooks :exec
DELETE FROM conversation_rulebooks WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = sqlc.arg(root_id));

-- name: PurgeFiling :exec
DELETE FROM conversation_filing WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = sqlc.arg(root_id));

-- name: PurgeNotes :exec
DELETE FROM notes WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = sqlc.arg(root_id));

-- name: PurgeArtifacts :execrows
DELETE FROM artifacts WHERE conversation_id IN (SELECT id FROM conversations WHERE root_id = sqlc.arg(root_id));

-- name: PurgeConversations :execrows
DELETE FROM conversations WHERE root_id = sqlc.arg(root_id);
