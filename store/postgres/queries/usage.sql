-- What each model call cost.

-- name: UsageRecord :exec
INSERT INTO usage_records (id, conversation_id, turn_id, agent_id, provider, model,
                           input_tokens, output_tokens, cached_tokens, cache_write_tokens,
                           reasoning_tokens, cost_micro_usd, created_at, kind, audio_ms, speech_chars)
VALUES (@id, @conversation_id, @turn_id, @agent_id, @provider, @model, @input_tokens,
        @output_tokens, @cached_tokens, @cache_write_tokens, @reasoning_tokens, @cost_micro_usd,
        @created_at, @kind, @audio_ms, @speech_chars);

-- name: UsageList :many
SELECT * FROM usage_records WHERE conversation_id = @conversation_id ORDER BY created_at, id;

-- name: UsageSummary :many
-- The usage report: by agent, by conversation or by UTC day, costliest first
-- (the rules sort agents and days by key).
SELECT CAST(CASE @group_by::text
                WHEN 'agent' THEN COALESCE(a.name, '')
                WHEN 'conversation' THEN u.conversation_id::text
                ELSE to_char(u.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')
            END AS text) AS "key",
       count(*)::bigint AS calls,
       COALESCE(sum(u.input_tokens), 0)::bigint AS input_tokens,
       COALESCE(sum(u.output_tokens), 0)::bigint AS output_tokens,
       COALESCE(sum(u.cached_tokens), 0)::bigint AS cached_tokens,
       COALESCE(sum(u.cache_write_tokens), 0)::bigint AS cache_write_tokens,
       COALESCE(sum(u.reasoning_tokens), 0)::bigint AS reasoning_tokens,
       COALESCE(sum(u.cost_micro_usd), 0)::bigint AS cost_micro_usd,
       COALESCE(sum(u.audio_ms), 0)::bigint AS audio_ms,
       COALESCE(sum(u.speech_chars), 0)::bigint AS speech_chars
FROM usage_records u
LEFT JOIN agents a ON a.id = u.agent_id
WHERE sqlc.narg(since)::timestamptz IS NULL OR u.created_at >= sqlc.narg(since)::timestamptz
GROUP BY 1
ORDER BY sum(u.cost_micro_usd) DESC, 1
LIMIT @max_rows::integer;
