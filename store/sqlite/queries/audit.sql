-- What guarded tool calls did, and what model calls cost.

-- name: AuditInsert :one
-- One row per call: a later record of the same call replaces its outcome.
-- It returns the row's id, the first record's on a later one.
INSERT INTO audit (id, conversation_id, call_id, agent, actor, action, risk, decision, outcome,
                   decided_by, detail, created_at, updated_at, trace_id)
VALUES (sqlc.arg(id), sqlc.narg(conversation_id), sqlc.arg(call_id), sqlc.arg(agent), sqlc.arg(actor),
        sqlc.arg(action), sqlc.arg(risk), sqlc.arg(decision), sqlc.arg(outcome),
        sqlc.arg(decided_by), sqlc.arg(detail), sqlc.arg(created_at), sqlc.arg(updated_at), sqlc.arg(trace_id))
ON CONFLICT (conversation_id, call_id) WHERE call_id <> '' DO UPDATE
SET outcome = excluded.outcome, detail = excluded.detail,
    decided_by = COALESCE(NULLIF(excluded.decided_by, ''), audit.decided_by),
    decision = COALESCE(NULLIF(excluded.decision, ''), audit.decision),
    risk = COALESCE(NULLIF(excluded.risk, ''), audit.risk),
    trace_id = COALESCE(NULLIF(excluded.trace_id, ''), audit.trace_id),
    updated_at = excluded.updated_at
RETURNING id;

-- name: AuditGet :one
SELECT * FROM audit WHERE id = sqlc.arg(id);

-- name: AuditScan :many
-- A time range oldest first (the export); the cursor pair is NULL on the
-- first page.
SELECT * FROM audit
WHERE (CAST(sqlc.narg(from_at) AS INTEGER) IS NULL OR created_at >= sqlc.narg(from_at))
  AND (CAST(sqlc.narg(to_at) AS INTEGER) IS NULL OR created_at < sqlc.narg(to_at))
  AND (CAST(sqlc.narg(workspace_id) AS TEXT) IS NULL OR workspace_id = sqlc.narg(workspace_id))
  AND (CAST(sqlc.narg(after_at) AS INTEGER) IS NULL OR created_at > sqlc.narg(after_at)
       OR (created_at = sqlc.narg(after_at) AND id > CAST(sqlc.narg(after_id) AS TEXT)))
ORDER BY created_at, id
LIMIT sqlc.arg(max_rows);

-- name: AuditSettle :one
UPDATE audit
SET outcome = sqlc.arg(outcome),
    decided_by = COALESCE(NULLIF(CAST(sqlc.arg(decided_by) AS TEXT), ''), decided_by),
    detail = COALESCE(CAST(sqlc.narg(detail) AS TEXT), detail),
    trace_id = COALESCE(NULLIF(CAST(sqlc.arg(trace_id) AS TEXT), ''), trace_id),
    updated_at = sqlc.arg(now)
WHERE conversation_id = sqlc.arg(conversation_id) AND call_id = sqlc.arg(call_id)
RETURNING *;

-- name: AuditList :many
-- A NULL filter matches any row; the cursor pair is NULL on the first page.
SELECT * FROM audit
WHERE (CAST(sqlc.narg(conversation_id) AS TEXT) IS NULL OR conversation_id = sqlc.narg(conversation_id))
  AND (CAST(sqlc.narg(agent) AS TEXT) IS NULL OR agent = sqlc.narg(agent))
  AND (CAST(sqlc.narg(action) AS TEXT) IS NULL OR action = sqlc.narg(action))
  AND (CAST(sqlc.narg(decision) AS TEXT) IS NULL OR decision = sqlc.narg(decision))
  AND (CAST(sqlc.narg(outcome) AS TEXT) IS NULL OR outcome = sqlc.narg(outcome))
  AND (CAST(sqlc.narg(from_at) AS INTEGER) IS NULL OR created_at >= sqlc.narg(from_at))
  AND (CAST(sqlc.narg(to_at) AS INTEGER) IS NULL OR created_at < sqlc.narg(to_at))
  AND (CAST(sqlc.narg(workspace_id) AS TEXT) IS NULL OR workspace_id = sqlc.narg(workspace_id))
  AND (CAST(sqlc.narg(workspace) AS TEXT) IS NULL OR conversation_id IN (
        SELECT conversation_id FROM bindings WHERE workspace = sqlc.narg(workspace)))
  AND (CAST(sqlc.narg(before_at) AS INTEGER) IS NULL OR created_at < sqlc.narg(before_at)
       OR (created_at = sqlc.narg(before_at) AND id < CAST(sqlc.narg(before_id) AS TEXT)))
ORDER BY created_at DESC, id DESC
LIMIT sqlc.arg(max_rows);

-- name: UsageInsert :exec
INSERT INTO usage (
    id, conversation_id, turn_id, agent_id, provider, model, input_tokens,
    output_tokens, cached_tokens, cache_write_tokens, reasoning_tokens, cost_micro_usd, created_at,
    kind, audio_ms, speech_chars
) VALUES (
    sqlc.arg(id), sqlc.arg(conversation_id), sqlc.narg(turn_id), sqlc.narg(agent_id), sqlc.arg(provider),
    sqlc.arg(model), sqlc.arg(input_tokens), sqlc.arg(output_tokens), sqlc.arg(cached_tokens),
    sqlc.arg(cache_write_tokens), sqlc.arg(reasoning_tokens), sqlc.arg(cost_micro_usd), sqlc.arg(created_at),
    sqlc.arg(kind), sqlc.arg(audio_ms), sqlc.arg(speech_chars)
);

-- name: UsageList :many
SELECT * FROM usage WHERE conversation_id = sqlc.arg(conversation_id) ORDER BY created_at, rowid;

-- name: AuditLog :one
-- A row of its own for an action that is no tool call: no conversation,
-- no call id, the workspace given.
INSERT INTO audit (id, conversation_id, call_id, agent, actor, action, risk, decision, outcome,
                   decided_by, detail, created_at, updated_at, workspace_id, trace_id)
VALUES (sqlc.arg(id), NULL, '', '', sqlc.arg(actor), sqlc.arg(action), '', '', sqlc.arg(outcome),
        sqlc.arg(actor), sqlc.arg(detail), CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER),
        sqlc.narg(workspace_id), sqlc.arg(trace_id))
RETURNING *;
