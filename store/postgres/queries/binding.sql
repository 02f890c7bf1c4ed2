-- Where conversations live on the platforms: bindings, what each entry became
-- there (posted), and the live stream of the reply in progress. A binding's
-- place is stored as store.Place.Columns encodes it.

-- name: BindingEnsure :one
-- Creates the binding and its root conversation in one statement; the
-- conversation is only inserted when the binding was. No row back means
-- another caller created the binding first (BindingFind then reads it), and
-- nothing was left behind.
WITH b AS (
    INSERT INTO bindings (id, conversation_id, platform, workspace, channel, thread,
                          created_at, updated_at)
    VALUES (@id, @conversation_id, @platform, @workspace, @channel, @thread, @now::timestamptz, @now::timestamptz)
    ON CONFLICT (platform, workspace, channel, thread) DO NOTHING
    RETURNING *
), c AS (
    INSERT INTO conversations (id, root_id, agent_id, title, provider, model, thinking,
                               metadata, created_at, updated_at)
    SELECT b.conversation_id, b.conversation_id, @agent_id, @title, @provider, @model,
           @thinking, @metadata, @conversation_now, @conversation_now
    FROM b
)
SELECT * FROM b;

-- name: BindingFind :one
SELECT * FROM bindings
WHERE platform = @platform AND workspace = @workspace AND channel = @channel AND thread = @thread;

-- name: BindingListByConversation :many
SELECT * FROM bindings WHERE conversation_id = @conversation_id ORDER BY created_at, id;

-- name: BindingAdvance :one
-- The cursor never moves back; a lower seq still returns the binding,
-- unchanged.
UPDATE bindings
SET delivered_seq = GREATEST(delivered_seq, @delivered_seq::bigint),
    updated_at = CASE WHEN @delivered_seq::bigint > delivered_seq THEN @now::timestamptz ELSE updated_at END
WHERE id = @id
RETURNING *;

-- name: PostedRecord :exec
INSERT INTO posted (binding_id, entry_id, message_ids, created_at, pending, undeliverable)
VALUES (@binding_id, @entry_id, COALESCE(@message_ids::text[], '{}'), @now::timestamptz, @pending, @undeliverable)
ON CONFLICT (binding_id, entry_id) DO UPDATE
SET message_ids = EXCLUDED.message_ids, pending = EXCLUDED.pending, undeliverable = EXCLUDED.undeliverable;

-- name: PostedGet :one
SELECT * FROM posted WHERE binding_id = @binding_id AND entry_id = @entry_id;

-- name: LiveStreamSave :exec
INSERT INTO live_streams (binding_id, turn_id, message_ids, updated_at)
VALUES (@binding_id, @turn_id, COALESCE(@message_ids::text[], '{}'), @now::timestamptz)
ON CONFLICT (binding_id) DO UPDATE
SET turn_id = EXCLUDED.turn_id, message_ids = EXCLUDED.message_ids, updated_at = EXCLUDED.updated_at;

-- name: LiveStreamGet :one
SELECT * FROM live_streams WHERE binding_id = @binding_id;

-- name: LiveStreamDelete :exec
DELETE FROM live_streams WHERE binding_id = @binding_id;

-- name: BindingMove :one
-- An edit forked the conversation: the place now shows the fork, whose
-- entries up to delivered_seq are already there.
UPDATE bindings
SET conversation_id = @conversation_id, delivered_seq = @delivered_seq::bigint, updated_at = @now::timestamptz
WHERE id = @id
RETURNING *;

-- name: BindingRelocate :one
-- A routine run's place becomes the thread under its first post, so a reply
-- there reaches the run's conversation.
UPDATE bindings
SET channel = @channel, thread = @thread, updated_at = @now::timestamptz
WHERE id = @id
RETURNING *;
