-- Agents, inbound dedupe, platform bindings and posted messages.

-- name: InboundRecord
INSERT INTO inbound_events (platform, event_id, received_at)
VALUES (:platform, :event_id, :now)
ON CONFLICT (platform, event_id) DO NOTHING;

-- name: AgentUpsert
INSERT INTO agents (id, name, config, created_at, updated_at)
VALUES (:id, :name, :config, :now, :now)
ON CONFLICT (name) DO UPDATE
SET config = excluded.config, updated_at = excluded.updated_at
RETURNING id, name, config, created_at, updated_at;

-- name: AgentGetByName
SELECT id, name, config, created_at, updated_at FROM agents WHERE name = :name;

-- name: AgentList
SELECT id, name, config, created_at, updated_at FROM agents ORDER BY name;

-- name: BindingFind
SELECT id, conversation_id, platform, workspace, channel, thread, delivered_seq, created_at, updated_at
FROM bindings
WHERE platform = :platform AND workspace = :workspace AND channel = :channel AND thread = :thread;

-- name: BindingGet
SELECT id, conversation_id, platform, workspace, channel, thread, delivered_seq, created_at, updated_at
FROM bindings
WHERE id = :id;

-- name: BindingInsert
INSERT INTO bindings (id, conversation_id, platform, workspace, channel, thread, created_at, updated_at)
VALUES (:id, :conversation_id, :platform, :workspace, :channel, :thread, :now, :now)
RETURNING id, conversation_id, platform, workspace, channel, thread, delivered_seq, created_at, updated_at;

-- name: BindingListByConversation
SELECT id, conversation_id, platform, workspace, channel, thread, delivered_seq, created_at, updated_at
FROM bindings
WHERE conversation_id = :conversation_id
ORDER BY created_at, rowid;

-- name: BindingAdvance
UPDATE bindings
SET delivered_seq = :delivered_seq, updated_at = :now
WHERE id = :id AND delivered_seq < :delivered_seq
RETURNING id, conversation_id, platform, workspace, channel, thread, delivered_seq, created_at, updated_at;

-- name: PostedUpsert
INSERT INTO posted (binding_id, entry_id, message_ids, created_at, pending)
VALUES (:binding_id, :entry_id, :message_ids, :now, :pending)
ON CONFLICT (binding_id, entry_id) DO UPDATE
SET message_ids = excluded.message_ids, pending = excluded.pending;

-- name: PostedGet
SELECT binding_id, entry_id, message_ids, pending, created_at
FROM posted
WHERE binding_id = :binding_id AND entry_id = :entry_id;

-- name: LiveStreamSave
INSERT INTO live_streams (binding_id, turn_id, message_ids, updated_at)
VALUES (:binding_id, :turn_id, :message_ids, :now)
ON CONFLICT (binding_id) DO UPDATE
SET turn_id = excluded.turn_id, message_ids = excluded.message_ids, updated_at = excluded.updated_at;

-- name: LiveStreamGet
SELECT binding_id, turn_id, message_ids, updated_at
FROM live_streams
WHERE binding_id = :binding_id;

-- name: LiveStreamDelete
DELETE FROM live_streams WHERE binding_id = :binding_id;
