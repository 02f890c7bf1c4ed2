-- What guarded tool calls did, and what model calls cost.

-- name: AuditInsert :exec
INSERT INTO audit (id, conversation_id, actor, action, risk, decision, result, detail, created_at)
VALUES (sqlc.arg(id), sqlc.narg(conversation_id), sqlc.arg(actor), sqlc.arg(action), sqlc.arg(risk),
        sqlc.arg(decision), sqlc.arg(result), sqlc.arg(detail), sqlc.arg(created_at));

-- name: AuditList :many
SELECT * FROM audit WHERE conversation_id = sqlc.arg(conversation_id) ORDER BY created_at, rowid;

-- name: UsageInsert :exec
INSERT INTO usage (
    id, conversation_id, turn_id, agent_id, provider, model, input_tokens,
    output_tokens, cached_tokens, reasoning_tokens, cost_micro_usd, created_at
) VALUES (
    sqlc.arg(id), sqlc.arg(conversation_id), sqlc.narg(turn_id), sqlc.narg(agent_id), sqlc.arg(provider),
    sqlc.arg(model), sqlc.arg(input_tokens), sqlc.arg(output_tokens), sqlc.arg(cached_tokens),
    sqlc.arg(reasoning_tokens), sqlc.arg(cost_micro_usd), sqlc.arg(created_at)
);

-- name: UsageList :many
SELECT * FROM usage WHERE conversation_id = sqlc.arg(conversation_id) ORDER BY created_at, rowid;
