-- Everything around the spine: inbound dedupe, agents, platform bindings and
-- posted messages, approvals, audit, named leases, usage.

-- name: InboundRecord
-- $1 platform, $2 event_id, $3 now. One row affected: first sighting.
INSERT INTO inbound_events (platform, event_id, seen_at)
VALUES ($1, $2, $3)
ON CONFLICT (platform, event_id) DO NOTHING;

-- name: AgentUpsert
-- $1 id (used when inserting), $2 name, $3 config, $4 now.
INSERT INTO agents (id, name, config, created_at, updated_at)
VALUES ($1, $2, $3, $4, $4)
ON CONFLICT (name) DO UPDATE
SET config = EXCLUDED.config, updated_at = EXCLUDED.updated_at
RETURNING id, name, config, created_at, updated_at;

-- name: AgentGetByName
SELECT id, name, config, created_at, updated_at FROM agents WHERE name = $1;

-- name: AgentList
SELECT id, name, config, created_at, updated_at FROM agents ORDER BY name;

-- name: BindingEnsure
-- Creates the binding and its root conversation in one statement; the
-- conversation is only inserted when the binding was. No row back means
-- another caller created the binding first (BindingFind then reads it), and
-- nothing was left behind.
-- $1 binding id, $2 platform, $3 workspace, $4 channel, $5 thread,
-- $6 conversation id, $7 agent_id, $8 title, $9 provider, $10 model,
-- $11 thinking, $12 metadata, $13 conversation now, $14 binding now.
WITH b AS (
    INSERT INTO bindings (id, conversation_id, platform, workspace, channel, thread,
                          created_at, updated_at)
    VALUES ($1, $6, $2, $3, $4, $5, $14, $14)
    ON CONFLICT (platform, workspace, channel, thread) DO NOTHING
    RETURNING id, conversation_id, platform, workspace, channel, thread,
              delivered_seq, created_at, updated_at
), c AS (
    INSERT INTO conversations (id, root_id, agent_id, title, provider, model, thinking,
                               metadata, created_at, updated_at)
    SELECT b.conversation_id, b.conversation_id, $7, $8, $9, $10, $11, $12, $13, $13
    FROM b
)
SELECT * FROM b;

-- name: BindingFind
-- $1 platform, $2 workspace, $3 channel, $4 thread.
SELECT id, conversation_id, platform, workspace, channel, thread, delivered_seq,
       created_at, updated_at
FROM bindings
WHERE platform = $1 AND workspace = $2 AND channel = $3 AND thread = $4;

-- name: BindingListByConversation
SELECT id, conversation_id, platform, workspace, channel, thread, delivered_seq,
       created_at, updated_at
FROM bindings
WHERE conversation_id = $1
ORDER BY created_at, id;

-- name: BindingAdvance
-- $1 id, $2 delivered_seq, $3 now. The cursor never moves back; a lower seq
-- still returns the binding, unchanged.
UPDATE bindings
SET delivered_seq = GREATEST(delivered_seq, $2::bigint),
    updated_at = CASE WHEN $2::bigint > delivered_seq THEN $3 ELSE updated_at END
WHERE id = $1
RETURNING id, conversation_id, platform, workspace, channel, thread, delivered_seq,
          created_at, updated_at;

-- name: PostedRecord
-- $1 binding_id, $2 entry_id, $3 message_ids, $4 now, $5 pending.
INSERT INTO posted (binding_id, entry_id, message_ids, created_at, pending)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (binding_id, entry_id) DO UPDATE
SET message_ids = EXCLUDED.message_ids, pending = EXCLUDED.pending;

-- name: PostedGet
SELECT binding_id, entry_id, message_ids, pending, created_at
FROM posted
WHERE binding_id = $1 AND entry_id = $2;

-- name: LiveStreamSave
-- $1 binding_id, $2 turn_id, $3 message_ids, $4 now.
INSERT INTO live_streams (binding_id, turn_id, message_ids, updated_at)
VALUES ($1, $2, $3, $4)
ON CONFLICT (binding_id) DO UPDATE
SET turn_id = EXCLUDED.turn_id, message_ids = EXCLUDED.message_ids, updated_at = EXCLUDED.updated_at;

-- name: LiveStreamGet
SELECT binding_id, turn_id, message_ids, updated_at
FROM live_streams
WHERE binding_id = $1;

-- name: LiveStreamDelete
DELETE FROM live_streams WHERE binding_id = $1;

-- name: ApprovalCreate
-- $1 id, $2 conversation_id, $3 call_id, $4 tool, $5 kind, $6 risk, $7 request,
-- $8 deciders, $9 expires_at, $10 now.
INSERT INTO approvals (id, conversation_id, call_id, tool, kind, risk, request,
                       deciders, status, expires_at, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9, $10)
RETURNING id, conversation_id, call_id, tool, kind, risk, request, deciders, status,
          decision, decided_by, expires_at, decided_at, created_at;

-- name: ApprovalGet
SELECT id, conversation_id, call_id, tool, kind, risk, request, deciders, status,
       decision, decided_by, expires_at, decided_at, created_at
FROM approvals
WHERE id = $1;

-- name: ApprovalFindByCall
SELECT id, conversation_id, call_id, tool, kind, risk, request, deciders, status,
       decision, decided_by, expires_at, decided_at, created_at
FROM approvals
WHERE conversation_id = $1 AND call_id = $2;

-- name: ApprovalListPending
SELECT id, conversation_id, call_id, tool, kind, risk, request, deciders, status,
       decision, decided_by, expires_at, decided_at, created_at
FROM approvals
WHERE conversation_id = $1 AND status = 'pending'
ORDER BY created_at, id;

-- name: ApprovalDecide
-- $1 id, $2 status, $3 decision, $4 decided_by, $5 now. Only a pending,
-- unexpired approval can be decided; no row back means it was not.
UPDATE approvals
SET status = $2, decision = $3, decided_by = $4, decided_at = $5
WHERE id = $1 AND status = 'pending' AND expires_at > $5
RETURNING id, conversation_id, call_id, tool, kind, risk, request, deciders, status,
          decision, decided_by, expires_at, decided_at, created_at;

-- name: ApprovalExpire
-- $1 now, $2 limit (NULL: all).
UPDATE approvals
SET status = 'expired', decided_at = $1
WHERE id IN (
    SELECT id FROM approvals
    WHERE status = 'pending' AND expires_at < $1
    ORDER BY expires_at, id
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
RETURNING id, conversation_id, call_id, tool, kind, risk, request, deciders, status,
          decision, decided_by, expires_at, decided_at, created_at;

-- name: AuditRecord
INSERT INTO audit_records (id, conversation_id, actor, action, risk, decision, result,
                           detail, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9);

-- name: AuditList
SELECT id, conversation_id, actor, action, risk, decision, result, detail, created_at
FROM audit_records
WHERE conversation_id = $1
ORDER BY created_at, id;

-- name: LeaseAcquire
-- $1 name, $2 owner, $3 expires_at, $4 now. A row back means $2 holds it.
INSERT INTO named_leases (name, owner, expires_at, updated_at)
VALUES ($1, $2, $3, $4)
ON CONFLICT (name) DO UPDATE
SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at,
    updated_at = EXCLUDED.updated_at
WHERE named_leases.owner = EXCLUDED.owner OR named_leases.expires_at <= EXCLUDED.updated_at
RETURNING name;

-- name: LeaseRelease
-- $1 name, $2 owner.
DELETE FROM named_leases WHERE name = $1 AND owner = $2;

-- name: UsageRecord
INSERT INTO usage_records (id, conversation_id, turn_id, agent_id, provider, model,
                           input_tokens, output_tokens, cached_tokens,
                           reasoning_tokens, cost_micro_usd, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12);

-- name: UsageList
SELECT id, conversation_id, turn_id, agent_id, provider, model, input_tokens,
       output_tokens, cached_tokens, reasoning_tokens, cost_micro_usd, created_at
FROM usage_records
WHERE conversation_id = $1
ORDER BY created_at, id;
