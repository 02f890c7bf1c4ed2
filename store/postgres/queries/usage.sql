-- What each model call cost.

-- name: UsageRecord :exec
INSERT INTO usage_records (id, conversation_id, turn_id, agent_id, provider, model,
                           input_tokens, output_tokens, cached_tokens,
                           reasoning_tokens, cost_micro_usd, created_at)
VALUES (@id, @conversation_id, @turn_id, @agent_id, @provider, @model, @input_tokens,
        @output_tokens, @cached_tokens, @reasoning_tokens, @cost_micro_usd, @created_at);

-- name: UsageList :many
SELECT * FROM usage_records WHERE conversation_id = @conversation_id ORDER BY created_at, id;
