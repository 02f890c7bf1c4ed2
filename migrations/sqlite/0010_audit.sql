-- Audit that can be read, as on Postgres: one row per tool call keyed by
-- (conversation, call id), its outcome (pending, ok, failed, denied,
-- expired, cancelled) and who decided it kept up to date, listed newest
-- first with filters. Rows written before keep one row per event and no
-- call id.
--
-- contract: binaries before schema 10 stop working (they read result,
-- renamed outcome here; long shipped, so the floor is this migration)

ALTER TABLE audit RENAME COLUMN result TO outcome;
UPDATE audit SET outcome = 'failed' WHERE outcome = 'error';

ALTER TABLE audit ADD COLUMN call_id TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN agent TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN decided_by TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0;
UPDATE audit SET agent = substr(actor, 7) WHERE actor LIKE 'agent:%';
UPDATE audit SET updated_at = created_at;

CREATE UNIQUE INDEX audit_call_key ON audit (conversation_id, call_id) WHERE call_id <> '';

-- Newest first on (created_at, id), one index per filter offered.
CREATE INDEX audit_created_idx ON audit (created_at DESC, id DESC);
CREATE INDEX audit_agent_idx ON audit (agent, created_at DESC, id DESC);
CREATE INDEX audit_action_idx ON audit (action, created_at DESC, id DESC);
CREATE INDEX audit_outcome_idx ON audit (outcome, created_at DESC, id DESC);
CREATE INDEX audit_decision_idx ON audit (decision, created_at DESC, id DESC);
DROP INDEX audit_conversation_idx;
CREATE INDEX audit_conversation_idx ON audit (conversation_id, created_at DESC, id DESC);
CREATE INDEX bindings_workspace_idx ON bindings (workspace, conversation_id);
