-- Summaries: the latest one of a conversation (entries_summary_idx; the
-- literal kind lets SQLite use the partial index).

-- name: EntryLatestSummary :one
SELECT * FROM entries
WHERE conversation_id = sqlc.arg(conversation_id) AND kind = 'summary' AND seq IS NOT NULL
ORDER BY seq DESC LIMIT 1;
