-- Audit that can be read: one row per tool call, keyed by (conversation,
-- call id), updated as its outcome becomes known, and listed newest first
-- with filters.
--
-- result becomes outcome: pending while the call waits (for a person or a
-- client), then ok, failed, denied, expired or cancelled. decided_by says who
-- decided: a person (user:<id>) for an approval, "policy" when the guard
-- decided alone, "grant" for a standing grant, "system" when nobody did (an
-- expiry, a person who moved on). Rows written before this migration keep
-- their own shape: one per event, with no call id.
--
-- contract: binaries before schema 10 stop working (they read result,
-- renamed outcome here; long shipped, so the floor is this migration)

ALTER TABLE audit_records RENAME COLUMN result TO outcome;
UPDATE audit_records SET outcome = 'failed' WHERE outcome = 'error';

ALTER TABLE audit_records ADD COLUMN call_id text NOT NULL DEFAULT '';
ALTER TABLE audit_records ADD COLUMN agent text NOT NULL DEFAULT '';
ALTER TABLE audit_records ADD COLUMN decided_by text NOT NULL DEFAULT '';
ALTER TABLE audit_records ADD COLUMN updated_at timestamptz;
UPDATE audit_records SET agent = substr(actor, length('agent:') + 1) WHERE actor LIKE 'agent:%';
UPDATE audit_records SET updated_at = created_at;
ALTER TABLE audit_records ALTER COLUMN updated_at SET NOT NULL;

CREATE UNIQUE INDEX audit_records_call_key ON audit_records (conversation_id, call_id)
    WHERE call_id <> '';

-- The list reads newest first, (created_at, id) descending, and pages on
-- that pair; each filter it offers has an index in the same order.
CREATE INDEX audit_records_created_idx ON audit_records (created_at DESC, id DESC);
CREATE INDEX audit_records_agent_idx ON audit_records (agent, created_at DESC, id DESC);
CREATE INDEX audit_records_action_idx ON audit_records (action, created_at DESC, id DESC);
CREATE INDEX audit_records_outcome_idx ON audit_records (outcome, created_at DESC, id DESC);
CREATE INDEX audit_records_decision_idx ON audit_records (decision, created_at DESC, id DESC);
DROP INDEX audit_records_conversation_idx;
CREATE INDEX audit_records_conversation_idx ON audit_records (conversation_id, created_at DESC, id DESC)
    WHERE conversation_id IS NOT NULL;
-- The workspace filter goes through the conversation's bindings.
CREATE INDEX bindings_workspace_idx ON bindings (workspace, conversation_id);
