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
