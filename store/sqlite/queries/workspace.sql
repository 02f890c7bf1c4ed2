-- Workspaces, members, platform team bindings and where agents answer.

-- name: WorkspaceInsert :one
INSERT INTO workspaces (id, name, kind, owner_person_id, created_at)
VALUES (sqlc.arg(id), sqlc.arg(name), sqlc.arg(kind), sqlc.arg(owner_person_id), CAST(sqlc.arg(now) AS INTEGER))
RETURNING *;

-- name: WorkspacePersonalInsert :one
-- No row back: the person has one already (the driver reads it).
INSERT INTO workspaces (id, name, kind, owner_person_id, created_at)
VALUES (sqlc.arg(id), sqlc.arg(name), 'personal', sqlc.arg(owner_person_id), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (owner_person_id) WHERE kind = 'personal' DO NOTHING
RETURNING *;

-- name: WorkspacePersonalGet :one
SELECT * FROM workspaces WHERE kind = 'personal' AND owner_person_id = sqlc.arg(owner_person_id);

-- name: WorkspaceGet :one
SELECT * FROM workspaces WHERE id = sqlc.arg(id);

-- name: WorkspaceListByPerson :many
SELECT sqlc.embed(workspaces), workspace_members.role
FROM workspace_members JOIN workspaces ON workspaces.id = workspace_members.workspace_id
WHERE workspace_members.person_id = sqlc.arg(person_id)
ORDER BY workspaces.created_at, workspaces.rowid;

-- name: WorkspaceDelete :execrows
DELETE FROM workspaces WHERE id = sqlc.arg(id);

-- name: WorkspaceMemberUpsert :one
INSERT INTO workspace_members (workspace_id, person_id, role, created_at)
VALUES (sqlc.arg(workspace_id), sqlc.arg(person_id), sqlc.arg(role), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (workspace_id, person_id) DO UPDATE SET role = excluded.role
RETURNING *;

-- name: WorkspaceMemberGet :one
SELECT * FROM workspace_members
WHERE workspace_id = sqlc.arg(workspace_id) AND person_id = sqlc.arg(person_id);

-- name: WorkspaceMemberList :many
SELECT * FROM workspace_members WHERE workspace_id = sqlc.arg(workspace_id)
ORDER BY created_at, person_id;

-- name: WorkspaceMemberDelete :execrows
DELETE FROM workspace_members
WHERE workspace_id = sqlc.arg(workspace_id) AND person_id = sqlc.arg(person_id);

-- name: WorkspaceBindInsert :one
-- No row back: the team is bound already (the driver reads to which).
INSERT INTO workspace_bindings (platform, external_id, workspace_id, created_at)
VALUES (sqlc.arg(platform), sqlc.arg(external_id), sqlc.arg(workspace_id), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (platform, external_id) DO NOTHING
RETURNING *;

-- name: WorkspaceBindingFind :one
SELECT * FROM workspace_bindings
WHERE platform = sqlc.arg(platform) AND external_id = sqlc.arg(external_id);

-- name: ConversationWorkspace :one
SELECT workspace_id FROM conversations WHERE id = sqlc.arg(id);

-- name: ScheduleWorkspace :one
SELECT workspace_id FROM schedules WHERE id = sqlc.arg(id);

-- name: ConversationWorkspaceSet :execrows
UPDATE conversations SET workspace_id = sqlc.arg(workspace_id)
WHERE id = sqlc.arg(id) AND coalesce(workspace_id, sqlc.arg(workspace_id)) = sqlc.arg(workspace_id);

-- name: AgentSharingGet :one
SELECT * FROM agent_sharing WHERE agent_id = sqlc.arg(agent_id);

-- name: AgentPinList :many
SELECT workspace_id FROM agent_pins WHERE agent_id = sqlc.arg(agent_id) ORDER BY created_at, workspace_id;

-- name: AgentOwnerSet :exec
INSERT INTO agent_sharing (agent_id, owner_person_id, updated_at)
VALUES (sqlc.arg(agent_id), sqlc.arg(owner_person_id), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (agent_id) DO UPDATE SET owner_person_id = excluded.owner_person_id, updated_at = excluded.updated_at;

-- name: AgentPinsClear :exec
DELETE FROM agent_pins WHERE agent_id = sqlc.arg(agent_id);

-- name: AgentPinAdd :exec
INSERT INTO agent_pins (agent_id, workspace_id, created_at)
VALUES (sqlc.arg(agent_id), sqlc.arg(workspace_id), CAST(sqlc.arg(now) AS INTEGER));

-- name: AgentSharingTouch :exec
INSERT INTO agent_sharing (agent_id, updated_at) VALUES (sqlc.arg(agent_id), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (agent_id) DO UPDATE SET updated_at = excluded.updated_at;

-- name: AgentPublishSet :exec
INSERT INTO agent_sharing (agent_id, published, updated_at)
VALUES (sqlc.arg(agent_id), sqlc.arg(published), CAST(sqlc.arg(now) AS INTEGER))
ON CONFLICT (agent_id) DO UPDATE SET published = excluded.published, updated_at = excluded.updated_at;

-- name: AgentListVisible :many
SELECT agents.id AS agent_id, agents.name, agent_sharing.owner_person_id
FROM agents LEFT JOIN agent_sharing ON agent_sharing.agent_id = agents.id
WHERE (agent_sharing.owner_person_id IS NULL
       OR agent_sharing.owner_person_id IN (
           SELECT m.person_id FROM workspace_members m WHERE m.workspace_id = sqlc.arg(workspace_id)))
  AND (agents.id NOT IN (SELECT p.agent_id FROM agent_pins p)
       OR agents.id IN (SELECT p.agent_id FROM agent_pins p WHERE p.workspace_id = sqlc.arg(workspace_id)))
ORDER BY agents.name;

-- name: AgentDirectory :many
SELECT agents.id AS agent_id, agents.name, agent_sharing.owner_person_id
FROM agent_sharing JOIN agents ON agents.id = agent_sharing.agent_id
WHERE agent_sharing.published = 1
ORDER BY agents.name;
