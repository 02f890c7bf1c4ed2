-- The small append-mostly tables around the spine: platform event ids seen,
-- agents, the audit of guarded tool calls, and model usage.

-- name: InboundRecord :execrows
-- One row affected: the first sighting.
INSERT INTO inbound_events (platform, event_id, seen_at)
VALUES (@platform, @event_id, @now::timestamptz)
ON CONFLICT (platform, event_id) DO NOTHING;

-- name: InboundPrune :execrows
DELETE FROM inbound_events
WHERE (platform, event_id) IN (
    SELECT i.platform, i.event_id FROM inbound_events i WHERE i.seen_at < @before::timestamptz LIMIT @max_rows);

-- name: AgentUpsert :one
-- id is used only when inserting.
INSERT INTO agents (id, name, config, created_at, updated_at)
VALUES (@id, @name, @config, @now::timestamptz, @now::timestamptz)
ON CONFLICT (name) DO UPDATE
SET config = EXCLUDED.config, updated_at = EXCLUDED.updated_at
RETURNING *;

-- name: AgentGetByName :one
SELECT * FROM agents WHERE name = @name;

-- name: AuditRecord :exec
INSERT INTO audit_records (id, conversation_id, actor, action, risk, decision, result,
                           detail, created_at)
VALUES (@id, @conversation_id, @actor, @action, @risk, @decision, @result, @detail, @created_at);

-- name: AuditList :many
SELECT * FROM audit_records WHERE conversation_id = @conversation_id ORDER BY created_at, id;

-- name: UsageRecord :exec
INSERT INTO usage_records (id, conversation_id, turn_id, agent_id, provider, model,
                           input_tokens, output_tokens, cached_tokens,
                           reasoning_tokens, cost_micro_usd, created_at)
VALUES (@id, @conversation_id, @turn_id, @agent_id, @provider, @model, @input_tokens,
        @output_tokens, @cached_tokens, @reasoning_tokens, @cost_micro_usd, @created_at);

-- name: UsageList :many
SELECT * FROM usage_records WHERE conversation_id = @conversation_id ORDER BY created_at, id;
