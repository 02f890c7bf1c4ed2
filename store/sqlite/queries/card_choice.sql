-- Card choices (migration 0029): the first click that acted on a card's
-- buttons. The insert does nothing when the card has a choice already;
-- the caller then reads the earlier one.

-- name: CardChoiceInsert :one
INSERT INTO card_choices (entry_id, conversation_id, action_id, value, label, platform, user_id, user_name, created_at)
VALUES (sqlc.arg(entry_id), sqlc.arg(conversation_id), sqlc.arg(action_id), sqlc.arg(value), sqlc.arg(label),
        sqlc.arg(platform), sqlc.arg(user_id), sqlc.arg(user_name), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (entry_id) DO NOTHING
RETURNING *;

-- name: CardChoiceGet :one
SELECT * FROM card_choices WHERE entry_id = sqlc.arg(entry_id);
