-- The audit of guarded tool calls.

-- name: AuditRecord :exec
INSERT INTO audit_records (id, conversation_id, actor, action, risk, decision, result,
                           detail, created_at)
VALUES (@id, @conversation_id, @actor, @action, @risk, @decision, @result, @detail, @created_at);

-- name: AuditList :many
SELECT * FROM audit_records WHERE conversation_id = @conversation_id ORDER BY created_at, id;
