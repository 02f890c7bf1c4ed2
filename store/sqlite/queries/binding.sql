-- Platform bindings, the messages entries became, and live streams.

-- name: BindingFind :one
SELECT * FROM bindings
WHERE platform = sqlc.arg(platform) AND workspace = sqlc.arg(workspace)
  AND channel = sqlc.arg(channel) AND thread = sqlc.arg(thread);

-- name: BindingGet :one
SELECT * FROM bindings WHERE id = sqlc.arg(id);

-- name: BindingInsert :one
INSERT INTO bindings (id, conversation_id, platform, workspace, channel, thread, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(conversation_id), sqlc.arg(platform), sqlc.arg(workspace),
        sqlc.arg(channel), sqlc.arg(thread), CAST(sqlc.arg(now) AS INTEGER), CAST(sqlc.arg(now) AS INTEGER))
RETURNING *;

-- name: BindingListByConversation :many
SELECT * FROM bindings WHERE conversation_id = sqlc.arg(conversation_id) ORDER BY created_at, rowid;

-- name: BindingAdvance :one
UPDATE bindings
SET delivered_seq = sqlc.arg(delivered_seq), updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id) AND delivered_seq < sqlc.arg(delivered_seq)
RETURNING *;

-- name: PostedUpsert :exec
INSERT INTO posted (binding_id, entry_id, message_ids, created_at, pending, undeliverable)
VALUES (sqlc.arg(binding_id), sqlc.arg(entry_id), sqlc.arg(message_ids), sqlc.arg(created_at), sqlc.arg(pending), sqlc.arg(undeliverable))
ON CONFLICT (binding_id, entry_id) DO UPDATE
SET message_ids = excluded.message_ids, pending = excluded.pending, undeliverable = excluded.undeliverable;

-- name: PostedGet :one
SELECT * FROM posted WHERE binding_id = sqlc.arg(binding_id) AND entry_id = sqlc.arg(entry_id);

-- name: LiveStreamSave :exec
INSERT INTO live_streams (binding_id, turn_id, message_ids, updated_at)
VALUES (sqlc.arg(binding_id), sqlc.narg(turn_id), sqlc.arg(message_ids), sqlc.arg(updated_at))
ON CONFLICT (binding_id) DO UPDATE
SET turn_id = excluded.turn_id, message_ids = excluded.message_ids, updated_at = excluded.updated_at;

-- name: LiveStreamGet :one
SELECT * FROM live_streams WHERE binding_id = sqlc.arg(binding_id);

-- name: LiveStreamDelete :exec
DELETE FROM live_streams WHERE binding_id = sqlc.arg(binding_id);

-- name: BindingMove :one
-- An edit forked the conversation: the place now shows the fork, whose
-- entries up to delivered_seq are already there.
UPDATE bindings
SET conversation_id = sqlc.arg(conversation_id), delivered_seq = sqlc.arg(delivered_seq),
    updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id)
RETURNING *;

-- name: BindingRelocate :one
-- A routine run's place becomes the thread under its first post, so a reply
-- there reaches the run's conversation.
UPDATE bindings
SET channel = sqlc.arg(channel), thread = sqlc.arg(thread), updated_at = CAST(sqlc.arg(now) AS INTEGER)
WHERE id = sqlc.arg(id)
RETURNING *;
