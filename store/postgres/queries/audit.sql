-- The audit of guarded tool calls: one row per call, updated as its outcome
-- becomes known, listed newest first.

-- name: AuditRecord :one
-- It returns the row's id, the first record's on a later one.
INSERT INTO audit_records (id, conversation_id, call_id, agent, actor, action, risk, decision,
                           outcome, decided_by, detail, created_at, updated_at, trace_id)
VALUES (@id, @conversation_id, @call_id, @agent, @actor, @action, @risk, @decision,
        @outcome, @decided_by, @detail, @created_at, @updated_at, @trace_id)
ON CONFLICT (conversation_id, call_id) WHERE call_id <> '' DO UPDATE
SET outcome = excluded.outcome,
    decided_by = COALESCE(NULLIF(excluded.decided_by, ''), audit_records.decided_by),
    detail = excluded.detail,
    decision = COALESCE(NULLIF(excluded.decision, ''), audit_records.decision),
    risk = COALESCE(NULLIF(excluded.risk, ''), audit_records.risk),
    trace_id = COALESCE(NULLIF(excluded.trace_id, ''), audit_records.trace_id),
    updated_at = excluded.updated_at
RETURNING id;

-- name: AuditGet :one
SELECT * FROM audit_records WHERE id = @id;

-- name: AuditScan :many
-- A time range oldest first (the export); the cursor pair is NULL on the
-- first page.
SELECT a.* FROM audit_records a
WHERE (sqlc.narg(from_at)::timestamptz IS NULL OR a.created_at >= sqlc.narg(from_at)::timestamptz)
  AND (sqlc.narg(to_at)::timestamptz IS NULL OR a.created_at < sqlc.narg(to_at)::timestamptz)
  AND (sqlc.narg(workspace_id)::uuid IS NULL OR a.workspace_id = sqlc.narg(workspace_id)::uuid)
  AND (sqlc.narg(after_at)::timestamptz IS NULL
       OR (a.created_at, a.id) > (sqlc.narg(after_at)::timestamptz, sqlc.narg(after_id)::uuid))
ORDER BY a.created_at, a.id
LIMIT @max_rows;

-- name: AuditSettle :one
UPDATE audit_records
SET outcome = @outcome,
    decided_by = COALESCE(NULLIF(@decided_by::text, ''), decided_by),
    detail = COALESCE(sqlc.narg(detail)::json, detail),
    trace_id = COALESCE(NULLIF(@trace_id::text, ''), trace_id),
    updated_at = @now
WHERE conversation_id = @conversation_id AND call_id = @call_id
RETURNING *;

-- name: AuditList :many
-- Each filter is NULL for "any"; the cursor (before_at, before_id) is NULL
-- on the first page.
SELECT a.* FROM audit_records a
WHERE (sqlc.narg(conversation_id)::uuid IS NULL OR a.conversation_id = sqlc.narg(conversation_id)::uuid)
  AND (sqlc.narg(agent)::text IS NULL OR a.agent = sqlc.narg(agent)::text)
  AND (sqlc.narg(action)::text IS NULL OR a.action = sqlc.narg(action)::text)
  AND (sqlc.narg(decision)::text IS NULL OR a.decision = sqlc.narg(decision)::text)
  AND (sqlc.narg(outcome)::text IS NULL OR a.outcome = sqlc.narg(outcome)::text)
  AND (sqlc.narg(from_at)::timestamptz IS NULL OR a.created_at >= sqlc.narg(from_at)::timestamptz)
  AND (sqlc.narg(to_at)::timestamptz IS NULL OR a.created_at < sqlc.narg(to_at)::timestamptz)
  AND (sqlc.narg(workspace_id)::uuid IS NULL OR a.workspace_id = sqlc.narg(workspace_id)::uuid)
  AND (sqlc.narg(workspace)::text IS NULL OR EXISTS (
        SELECT 1 FROM bindings b
        WHERE b.conversation_id = a.conversation_id AND b.workspace = sqlc.narg(workspace)::text))
  AND (sqlc.narg(before_at)::timestamptz IS NULL
       OR (a.created_at, a.id) < (sqlc.narg(before_at)::timestamptz, sqlc.narg(before_id)::uuid))
ORDER BY a.created_at DESC, a.id DESC
LIMIT @max_rows;

-- name: AuditLog :one
-- A row of its own for an action that is no tool call: no conversation,
-- no call id, the workspace given.
INSERT INTO audit_records (id, conversation_id, call_id, agent, actor, action, risk, decision,
                           outcome, decided_by, detail, created_at, updated_at, workspace_id, trace_id)
VALUES (@id, NULL, '', '', @actor, @action, '', '', @outcome, @actor, @detail,
        @now::timestamptz, @now::timestamptz, sqlc.narg(workspace_id)::uuid, @trace_id)
RETURNING *;
