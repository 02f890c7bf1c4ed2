-- Approvals, audit, usage and named leases.

-- name: ApprovalInsert
INSERT INTO approvals (
    id, conversation_id, call_id, tool, kind, risk, request, deciders,
    expires_at, created_at
) VALUES (
    :id, :conversation_id, :call_id, :tool, :kind, :risk, :request, :deciders,
    :expires_at, :now
)
RETURNING id, conversation_id, call_id, tool, kind, risk, request, deciders,
    status, decision, decided_by, expires_at, decided_at, created_at;

-- name: ApprovalGet
SELECT id, conversation_id, call_id, tool, kind, risk, request, deciders,
    status, decision, decided_by, expires_at, decided_at, created_at
FROM approvals
WHERE id = :id;

-- name: ApprovalFindByCall
SELECT id, conversation_id, call_id, tool, kind, risk, request, deciders,
    status, decision, decided_by, expires_at, decided_at, created_at
FROM approvals
WHERE conversation_id = :conversation_id AND call_id = :call_id;

-- name: ApprovalListPending
SELECT id, conversation_id, call_id, tool, kind, risk, request, deciders,
    status, decision, decided_by, expires_at, decided_at, created_at
FROM approvals
WHERE conversation_id = :conversation_id AND status = 'pending'
ORDER BY created_at, id;

-- name: ApprovalDecide
-- Expiry is exclusive of its instant: expired means expires_at < now, the
-- same rule ApprovalExpire applies.
UPDATE approvals
SET status = :status, decision = :decision, decided_by = :decided_by, decided_at = :now
WHERE id = :id AND status = 'pending' AND expires_at >= :now
RETURNING id, conversation_id, call_id, tool, kind, risk, request, deciders,
    status, decision, decided_by, expires_at, decided_at, created_at;

-- name: ApprovalExpire
UPDATE approvals
SET status = 'expired'
WHERE id IN (
    SELECT id FROM approvals
    WHERE status = 'pending' AND expires_at < :now
    ORDER BY expires_at, rowid
    LIMIT :limit
)
RETURNING id, conversation_id, call_id, tool, kind, risk, request, deciders,
    status, decision, decided_by, expires_at, decided_at, created_at;

-- name: AuditInsert
INSERT INTO audit (id, conversation_id, actor, action, risk, decision, result, detail, created_at)
VALUES (:id, :conversation_id, :actor, :action, :risk, :decision, :result, :detail, :created_at);

-- name: AuditList
SELECT id, conversation_id, actor, action, risk, decision, result, detail, created_at
FROM audit
WHERE conversation_id = :conversation_id
ORDER BY created_at, rowid;

-- name: UsageInsert
INSERT INTO usage (
    id, conversation_id, turn_id, agent_id, provider, model, input_tokens,
    output_tokens, cached_tokens, reasoning_tokens, cost_micro_usd, created_at
) VALUES (
    :id, :conversation_id, :turn_id, :agent_id, :provider, :model, :input_tokens,
    :output_tokens, :cached_tokens, :reasoning_tokens, :cost_micro_usd, :created_at
);

-- name: UsageList
SELECT id, conversation_id, turn_id, agent_id, provider, model, input_tokens,
    output_tokens, cached_tokens, reasoning_tokens, cost_micro_usd, created_at
FROM usage
WHERE conversation_id = :conversation_id
ORDER BY created_at, rowid;

-- name: LeaseAcquire
-- Inserts a free lease, or takes it over when it is expired or already
-- Owner's; otherwise changes nothing (0 rows affected).
INSERT INTO named_leases (name, owner, expires_at, updated_at)
VALUES (:name, :owner, :expires_at, :now)
ON CONFLICT (name) DO UPDATE
SET owner = excluded.owner, expires_at = excluded.expires_at, updated_at = excluded.updated_at
WHERE named_leases.owner = excluded.owner OR named_leases.expires_at <= excluded.updated_at;

-- name: LeaseRelease
DELETE FROM named_leases WHERE name = :name AND owner = :owner;
