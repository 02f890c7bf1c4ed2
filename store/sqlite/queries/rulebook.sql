-- Rulebooks, one row per conversation that has one.

-- name: RulebookGet :one
SELECT * FROM conversation_rulebooks WHERE conversation_id = sqlc.arg(conversation_id);

-- name: RulebookUpsert :one
INSERT INTO conversation_rulebooks (conversation_id, text, set_by, updated_at)
VALUES (sqlc.arg(conversation_id), sqlc.arg(text), sqlc.arg(set_by), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (conversation_id) DO UPDATE SET text = excluded.text, set_by = excluded.set_by, updated_at = excluded.updated_at
RETURNING *;

-- name: RulebookDelete :execrows
DELETE FROM conversation_rulebooks WHERE conversation_id = sqlc.arg(conversation_id);

-- name: RulebookCopy :exec
-- A fork starts with its parent's rulebook.
INSERT INTO conversation_rulebooks (conversation_id, text, set_by, updated_at)
SELECT sqlc.arg(fork_id), r.text, r.set_by, r.updated_at FROM conversation_rulebooks AS r
WHERE r.conversation_id = sqlc.arg(parent_id);
