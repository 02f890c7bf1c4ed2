-- Requests to a person: confirmations and questions.

-- name: ApprovalInsert :one
INSERT INTO approvals (
    id, conversation_id, call_id, tool, kind, risk, request, deciders, expires_at, created_at
) VALUES (
    sqlc.arg(id), sqlc.arg(conversation_id), sqlc.arg(call_id), sqlc.arg(tool), sqlc.arg(kind),
    sqlc.arg(risk), sqlc.arg(request), sqlc.arg(deciders), CAST(sqlc.arg(expires_at) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER)
)
RETURNING *;

-- name: ApprovalGet :one
SELECT * FROM approvals WHERE id = sqlc.arg(id);

-- name: ApprovalFindByCall :one
SELECT * FROM approvals WHERE conversation_id = sqlc.arg(conversation_id) AND call_id = sqlc.arg(call_id);

-- name: ApprovalListPending :many
SELECT * FROM approvals
WHERE conversation_id = sqlc.arg(conversation_id) AND status = 'pending'
ORDER BY created_at, rowid;

-- name: ApprovalDecide :one
-- Expiry is exclusive of its instant: expired means expires_at < now, the
-- same rule ApprovalExpire applies.
UPDATE approvals
SET status = sqlc.arg(status), decision = CAST(sqlc.narg(decision) AS TEXT), decided_by = sqlc.arg(decided_by),
    decided_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id) AND status = 'pending' AND expires_at >= CAST(sqlc.arg(now) AS INTEGER)
RETURNING *;

-- name: ApprovalExpire :many
UPDATE approvals
SET status = 'expired'
WHERE id IN (
    SELECT a.id FROM approvals AS a
    WHERE a.status = 'pending' AND a.expires_at < CAST(sqlc.arg(now) AS INTEGER)
    ORDER BY a.expires_at, a._rowid_
    LIMIT CAST(sqlc.arg(limit) AS INTEGER)
)
RETURNING *;

-- name: ApprovalListVisible :many
-- The pending approvals in the conversations of the listed workspaces (or
-- of every one), oldest first: the approvals inbox.
SELECT a.* FROM approvals AS a
JOIN conversations AS c ON c.id = a.conversation_id
WHERE a.status = 'pending'
  AND (CAST(sqlc.arg(all_workspaces) AS INTEGER) <> 0
       OR c.workspace_id IN (SELECT value FROM json_each(CAST(sqlc.arg(workspace_ids) AS TEXT))))
ORDER BY a.created_at, a.rowid
LIMIT CAST(sqlc.arg(limit) AS INTEGER);
