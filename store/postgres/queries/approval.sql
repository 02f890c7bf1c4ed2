-- Approvals: paused tool calls waiting for a person. Every query returning
-- an approval returns the whole row (dbsqlc.Approval).

-- name: ApprovalCreate :one
INSERT INTO approvals (id, conversation_id, call_id, tool, kind, risk, request,
                       deciders, status, expires_at, created_at)
VALUES (@id, @conversation_id, @call_id, @tool, @kind, @risk, @request,
        @deciders, 'pending', @expires_at, @now::timestamptz)
RETURNING *;

-- name: ApprovalGet :one
SELECT * FROM approvals WHERE id = @id;

-- name: ApprovalFindByCall :one
SELECT * FROM approvals WHERE conversation_id = @conversation_id AND call_id = @call_id;

-- name: ApprovalListPending :many
SELECT * FROM approvals
WHERE conversation_id = @conversation_id AND status = 'pending'
ORDER BY created_at, id;

-- name: ApprovalDecide :one
-- Only a pending, unexpired approval can be decided; no row back means it
-- was not.
UPDATE approvals
SET status = @status, decision = @decision, decided_by = @decided_by, decided_at = @now::timestamptz
WHERE id = @id AND status = 'pending' AND expires_at > @now::timestamptz
RETURNING *;

-- name: ApprovalExpire :many
UPDATE approvals
SET status = 'expired', decided_at = @now::timestamptz
WHERE id IN (
    SELECT a.id FROM approvals a
    WHERE a.status = 'pending' AND a.expires_at < @now::timestamptz
    ORDER BY a.expires_at, a.id
    LIMIT @max_rows
    FOR UPDATE SKIP LOCKED
)
RETURNING *;

-- name: ApprovalListVisible :many
-- The pending approvals in the conversations of the listed workspaces (or
-- of every one), oldest first: the approvals inbox.
SELECT a.* FROM approvals a
JOIN conversations c ON c.id = a.conversation_id
WHERE a.status = 'pending'
  AND (@all_workspaces::boolean OR c.workspace_id = ANY(CAST(@workspace_ids::text[] AS uuid[])))
ORDER BY a.created_at, a.id
LIMIT @max_rows;
