-- Rulebooks, one row per conversation that has one.

-- name: RulebookGet :one
SELECT * FROM conversation_rulebooks WHERE conversation_id = @conversation_id;

-- name: RulebookUpsert :one
INSERT INTO conversation_rulebooks (conversation_id, text, set_by, updated_at)
VALUES (@conversation_id, @text, @set_by, @now::timestamptz)
ON CONFLICT (conversation_id) DO UPDATE SET text = excluded.text, set_by = excluded.set_by, updated_at = excluded.updated_at
RETURNING *;

-- name: RulebookDelete :execrows
DELETE FROM conversation_rulebooks WHERE conversation_id = @conversation_id;
