-- Grants held in a workspace by its id, as in Postgres (TEXT ids).
ALTER TABLE grants ADD COLUMN workspace_id TEXT;

UPDATE grants SET workspace_id = (
    SELECT workspace_id FROM workspace_bindings WHERE external_id = grants.workspace LIMIT 1
) WHERE workspace <> '';

CREATE INDEX grants_live_workspace_idx ON grants (agent, tool, workspace_id) WHERE revoked_at IS NULL AND workspace_id IS NOT NULL;
