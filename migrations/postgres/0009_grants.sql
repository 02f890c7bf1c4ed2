-- Standing grants: "Always allow" on an approval prompt lets an agent run a
-- tool in a workspace without asking again, for any arguments or only the
-- ones approved (args_hash, a hex SHA-256 of their canonical JSON). A grant
-- is revoked, never deleted, so who allowed what stays readable.

CREATE TABLE grants (
    id          uuid PRIMARY KEY,
    agent       text NOT NULL CHECK (agent <> ''),
    tool        text NOT NULL CHECK (tool <> ''),
    workspace   text NOT NULL DEFAULT '',
    args_hash   text NOT NULL DEFAULT '',
    granted_by  text NOT NULL CHECK (granted_by <> ''),
    created_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);

-- The guard's lookup: the live grants of one agent and tool in a workspace.
CREATE INDEX grants_live_idx ON grants (agent, tool, workspace) WHERE revoked_at IS NULL;
