-- Ratings of replies, counted for the usage report.

-- name: FeedbackSummary :many
-- Feedback entries by the agent that wrote the rated reply, or by
-- conversation; most rated first (the rules sort agents by name).
SELECT CAST(CASE @group_by::text
                WHEN 'agent' THEN CASE WHEN r.author LIKE 'agent:%' THEN substr(r.author, 7) ELSE '' END
                ELSE f.conversation_id::text
            END AS text) AS "key",
       count(*) FILTER (WHERE (f.content->>'positive') = 'true')::bigint AS up,
       count(*) FILTER (WHERE (f.content->>'positive') IS DISTINCT FROM 'true')::bigint AS down
FROM entries f
LEFT JOIN entries r ON r.id = CAST(f.content->>'entry_id' AS uuid)
WHERE f.kind = 'feedback'
  AND (sqlc.narg(since)::timestamptz IS NULL OR f.created_at >= sqlc.narg(since)::timestamptz)
GROUP BY 1
ORDER BY count(*) DESC, 1
LIMIT @max_rows::integer;
