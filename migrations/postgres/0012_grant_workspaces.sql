-- A standing grant holds in a workspace by its id when the conversation it
-- was made in belongs to one; the platform team string (grants.workspace)
-- stays for conversations without a workspace. Grants made before are moved
-- to the workspace their team is bound to. No foreign key: like the
-- conversations of a deleted workspace, its grants keep the id, and so never
-- hold anywhere else.
ALTER TABLE grants ADD COLUMN workspace_id uuid;

UPDATE grants g SET workspace_id = wb.workspace_id
FROM workspace_bindings wb
WHERE g.workspace <> '' AND wb.external_id = g.workspace;

CREATE INDEX grants_live_workspace_idx ON grants (agent, tool, workspace_id) WHERE revoked_at IS NULL AND workspace_id IS NOT NULL;
