-- Ratings of replies, counted for the usage report.

-- name: FeedbackSummary :many
-- Feedback entries by the agent that wrote the rated reply, or by
-- conversation; most rated first (the rules sort agents by name).
SELECT CAST(CASE CAST(sqlc.arg(group_by) AS TEXT)
                WHEN 'agent' THEN CASE WHEN r.author LIKE 'agent:%' THEN substr(r.author, 7) ELSE '' END
                ELSE f.conversation_id
            END AS TEXT) AS "key",
       CAST(SUM(CASE WHEN json_extract(f.content, '$.positive') = 1 THEN 1 ELSE 0 END) AS INTEGER) AS up,
       CAST(SUM(CASE WHEN json_extract(f.content, '$.positive') = 1 THEN 0 ELSE 1 END) AS INTEGER) AS down
FROM entries AS f
LEFT JOIN entries AS r ON r.id = json_extract(f.content, '$.entry_id')
WHERE f.kind = 'feedback' AND f.created_at >= CAST(sqlc.arg(since) AS INTEGER)
GROUP BY 1
ORDER BY COUNT(*) DESC, 1
LIMIT CAST(sqlc.arg(max_rows) AS INTEGER);
