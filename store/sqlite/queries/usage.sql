-- The usage report.

-- name: UsageSummary :many
-- By agent, by conversation or by UTC day, costliest first (the rules sort
-- agents and days by key).
SELECT CAST(CASE CAST(sqlc.arg(group_by) AS TEXT)
                WHEN 'agent' THEN COALESCE(a.name, '')
                WHEN 'conversation' THEN u.conversation_id
                ELSE strftime('%Y-%m-%d', u.created_at / 1000000, 'unixepoch')
            END AS TEXT) AS "key",
       COUNT(*) AS calls,
       CAST(COALESCE(SUM(u.input_tokens), 0) AS INTEGER) AS input_tokens,
       CAST(COALESCE(SUM(u.output_tokens), 0) AS INTEGER) AS output_tokens,
       CAST(COALESCE(SUM(u.cached_tokens), 0) AS INTEGER) AS cached_tokens,
       CAST(COALESCE(SUM(u.cache_write_tokens), 0) AS INTEGER) AS cache_write_tokens,
       CAST(COALESCE(SUM(u.reasoning_tokens), 0) AS INTEGER) AS reasoning_tokens,
       CAST(COALESCE(SUM(u.cost_micro_usd), 0) AS INTEGER) AS cost_micro_usd,
       CAST(COALESCE(SUM(u.audio_ms), 0) AS INTEGER) AS audio_ms,
       CAST(COALESCE(SUM(u.speech_chars), 0) AS INTEGER) AS speech_chars
FROM usage AS u
LEFT JOIN agents AS a ON a.id = u.agent_id
WHERE u.created_at >= CAST(sqlc.arg(since) AS INTEGER)
GROUP BY 1
ORDER BY SUM(u.cost_micro_usd) DESC, 1
LIMIT CAST(sqlc.arg(max_rows) AS INTEGER);
