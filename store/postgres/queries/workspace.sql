-- Workspaces, members, platform team bindings and where agents answer.

-- name: WorkspaceInsert :one
INSERT INTO workspaces (id, name, kind, owner_person_id, created_at)
VALUES (@id, @name, @kind, @owner_person_id, @now::timestamptz)
RETURNING *;

-- name: WorkspacePersonalInsert :one
-- No row back: the person has a personal workspace already.
INSERT INTO workspaces (id, name, kind, owner_person_id, created_at)
VALUES (@id, @name, 'personal', @owner_person_id, @now::timestamptz)
ON CONFLICT (owner_person_id) WHERE kind = 'personal' DO NOTHING
RETURNING *;

-- name: WorkspacePersonalGet :one
SELECT * FROM workspaces WHERE owner_person_id = @owner_person_id AND kind = 'personal';

-- name: WorkspaceGet :one
SELECT * FROM workspaces WHERE id = @id;

-- name: WorkspaceListByPerson :many
SELECT sqlc.embed(w), m.role
FROM workspace_members m JOIN workspaces w ON w.id = m.workspace_id
WHERE m.person_id = @person_id
ORDER BY w.created_at, w.id;

-- name: WorkspaceDelete :execrows
DELETE FROM workspaces WHERE id = @id;

-- name: WorkspaceMemberUpsert :one
INSERT INTO workspace_members (workspace_id, person_id, role, created_at)
VALUES (@workspace_id, @person_id, @role, @now::timestamptz)
ON CONFLICT (workspace_id, person_id) DO UPDATE SET role = EXCLUDED.role
RETURNING *;

-- name: WorkspaceMemberGet :one
SELECT * FROM workspace_members WHERE workspace_id = @workspace_id AND person_id = @person_id;

-- name: WorkspaceMemberList :many
SELECT * FROM workspace_members WHERE workspace_id = @workspace_id ORDER BY created_at, person_id;

-- name: WorkspaceMemberDelete :execrows
DELETE FROM workspace_members WHERE workspace_id = @workspace_id AND person_id = @person_id;

-- name: WorkspaceBind :one
-- A team bound to the same workspace again keeps its row; bound to another,
-- no row comes back (the driver reports the conflict).
INSERT INTO workspace_bindings (platform, external_id, workspace_id, created_at)
VALUES (@platform, @external_id, @workspace_id, @now::timestamptz)
ON CONFLICT (platform, external_id) DO UPDATE SET workspace_id = EXCLUDED.workspace_id
WHERE workspace_bindings.workspace_id = EXCLUDED.workspace_id
RETURNING *;

-- name: WorkspaceBindingFind :one
SELECT * FROM workspace_bindings WHERE platform = @platform AND external_id = @external_id;

-- name: ConversationWorkspace :one
SELECT workspace_id FROM conversations WHERE id = @id;

-- name: ScheduleWorkspace :one
SELECT workspace_id FROM schedules WHERE id = @id;

-- name: ConversationWorkspaceSet :execrows
-- No row: the conversation is missing or in another workspace.
UPDATE conversations SET workspace_id = @workspace_id
WHERE id = @id AND (workspace_id IS NULL OR workspace_id = @workspace_id);

-- name: AgentSharingGet :one
SELECT * FROM agent_sharing WHERE agent_id = @agent_id;

-- name: AgentPinList :many
SELECT workspace_id FROM agent_pins WHERE agent_id = @agent_id ORDER BY created_at, workspace_id;

-- name: AgentOwnerSet :exec
INSERT INTO agent_sharing (agent_id, owner_person_id, updated_at)
VALUES (@agent_id, @owner_person_id, @now::timestamptz)
ON CONFLICT (agent_id) DO UPDATE SET owner_person_id = EXCLUDED.owner_person_id, updated_at = EXCLUDED.updated_at;

-- name: AgentPinsReplace :exec
-- Replaces the pin set in one statement: the old pins go, the new ones
-- (keeping their first pin time) come in. The ids travel as text, which the
-- simple protocol (PgBouncer) can encode.
WITH gone AS (
    DELETE FROM agent_pins WHERE agent_id = @agent_id AND NOT (workspace_id::text = ANY (@workspace_ids::text[]))
), touched AS (
    INSERT INTO agent_sharing (agent_id, updated_at) VALUES (@agent_id, @now::timestamptz)
    ON CONFLICT (agent_id) DO UPDATE SET updated_at = EXCLUDED.updated_at
)
INSERT INTO agent_pins (agent_id, workspace_id, created_at)
SELECT @agent_id, w::uuid, @now::timestamptz FROM unnest(@workspace_ids::text[]) AS w
ON CONFLICT (agent_id, workspace_id) DO NOTHING;

-- name: AgentPublishSet :exec
INSERT INTO agent_sharing (agent_id, published, updated_at)
VALUES (@agent_id, @published, @now::timestamptz)
ON CONFLICT (agent_id) DO UPDATE SET published = EXCLUDED.published, updated_at = EXCLUDED.updated_at;

-- name: AgentListVisible :many
-- One agent, one queue, seen wherever its owner belongs: the operator's
-- agents (no owner) everywhere, a person's where the person is a member;
-- pins narrow both.
SELECT a.id AS agent_id, a.name, s.owner_person_id
FROM agents a LEFT JOIN agent_sharing s ON s.agent_id = a.id
WHERE (s.owner_person_id IS NULL OR EXISTS (
        SELECT 1 FROM workspace_members m WHERE m.workspace_id = @workspace_id AND m.person_id = s.owner_person_id))
  AND (NOT EXISTS (SELECT 1 FROM agent_pins p WHERE p.agent_id = a.id)
       OR EXISTS (SELECT 1 FROM agent_pins p WHERE p.agent_id = a.id AND p.workspace_id = @workspace_id))
ORDER BY a.name;

-- name: AgentDirectory :many
SELECT a.id AS agent_id, a.name, s.owner_person_id
FROM agent_sharing s JOIN agents a ON a.id = s.agent_id
WHERE s.published
ORDER BY a.name;
