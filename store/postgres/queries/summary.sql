-- Summaries: the latest one of a conversation (entries_summary_idx; the
-- literal kind matches the partial index).

-- name: EntryLatestSummary :one
SELECT * FROM entries
WHERE conversation_id = @conversation_id AND kind = 'summary' AND seq IS NOT NULL
ORDER BY seq DESC LIMIT 1;
