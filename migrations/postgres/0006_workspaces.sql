-- Workspaces, their members and roles, the platform teams and guilds bound
-- to them, and where agents may answer. People are another part's table:
-- persons are referred to by id only, with no foreign key.

CREATE TABLE workspaces (
    id              uuid PRIMARY KEY,
    name            text NOT NULL CHECK (name <> ''),
    kind            text NOT NULL CHECK (kind IN ('personal', 'team')),
    -- Set at creation, never changed: the owner can be neither removed nor
    -- replaced.
    owner_person_id uuid NOT NULL,
    created_at      timestamptz NOT NULL
);

-- Exactly one personal workspace per person.
CREATE UNIQUE INDEX workspaces_personal_key ON workspaces (owner_person_id) WHERE kind = 'personal';

CREATE TABLE workspace_members (
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    person_id    uuid NOT NULL,
    role         text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, person_id)
);

CREATE INDEX workspace_members_person_idx ON workspace_members (person_id);

-- A Slack team or Discord guild belongs to one workspace.
CREATE TABLE workspace_bindings (
    platform     text NOT NULL CHECK (platform <> ''),
    external_id  text NOT NULL CHECK (external_id <> ''),
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (platform, external_id)
);

-- Who an agent belongs to (no row, or a NULL person: the operator, for the
-- agents of switchboard.yaml) and whether it is in the public directory.
CREATE TABLE agent_sharing (
    agent_id        uuid PRIMARY KEY,
    owner_person_id uuid,
    published       boolean NOT NULL DEFAULT false,
    updated_at      timestamptz NOT NULL
);

-- An agent with pins answers only in those workspaces; without any, in every
-- workspace its owner belongs to.
CREATE TABLE agent_pins (
    agent_id     uuid NOT NULL,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (agent_id, workspace_id)
);

-- What carries its workspace. NULL: made before workspaces, or in a place
-- no workspace is bound to (then only the operator sees it).
ALTER TABLE conversations ADD COLUMN workspace_id uuid;
ALTER TABLE schedules ADD COLUMN workspace_id uuid;
ALTER TABLE approvals ADD COLUMN workspace_id uuid;
ALTER TABLE audit_records ADD COLUMN workspace_id uuid;
ALTER TABLE usage_records ADD COLUMN workspace_id uuid;

CREATE INDEX conversations_workspace_idx ON conversations (workspace_id) WHERE workspace_id IS NOT NULL;
CREATE INDEX schedules_workspace_idx ON schedules (workspace_id) WHERE workspace_id IS NOT NULL;

-- The workspace is set when a row is made, by the database, so that every
-- path that makes one (a platform message, a fork, a routine, the engine's
-- approvals, audit and usage) stamps it the same way, in the same statement.

-- A conversation bound to a place of a bound team or guild belongs to that
-- team's workspace.
CREATE FUNCTION switchboard_binding_workspace() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE conversations c SET workspace_id = wb.workspace_id
    FROM workspace_bindings wb
    WHERE c.id = NEW.conversation_id AND c.workspace_id IS NULL
      AND wb.platform = NEW.platform AND wb.external_id = NEW.workspace;
    RETURN NEW;
END $$;

CREATE TRIGGER bindings_workspace AFTER INSERT ON bindings
    FOR EACH ROW EXECUTE FUNCTION switchboard_binding_workspace();

-- A fork stays in its parent's workspace.
CREATE FUNCTION switchboard_fork_workspace() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.workspace_id IS NULL AND NEW.parent_id IS NOT NULL THEN
        SELECT workspace_id INTO NEW.workspace_id FROM conversations WHERE id = NEW.parent_id;
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER conversations_workspace BEFORE INSERT ON conversations
    FOR EACH ROW EXECUTE FUNCTION switchboard_fork_workspace();

-- Approvals, audit rows and usage belong to their conversation's workspace.
CREATE FUNCTION switchboard_conversation_workspace() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.workspace_id IS NULL AND NEW.conversation_id IS NOT NULL THEN
        SELECT workspace_id INTO NEW.workspace_id FROM conversations WHERE id = NEW.conversation_id;
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER approvals_workspace BEFORE INSERT ON approvals
    FOR EACH ROW EXECUTE FUNCTION switchboard_conversation_workspace();
CREATE TRIGGER audit_records_workspace BEFORE INSERT ON audit_records
    FOR EACH ROW EXECUTE FUNCTION switchboard_conversation_workspace();
CREATE TRIGGER usage_records_workspace BEFORE INSERT ON usage_records
    FOR EACH ROW EXECUTE FUNCTION switchboard_conversation_workspace();

-- A schedule belongs to the workspace its place's team or guild is bound
-- to, when it is made; it keeps delivering there wherever its agent is
-- pinned later.
CREATE FUNCTION switchboard_schedule_workspace() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.workspace_id IS NULL THEN
        SELECT workspace_id INTO NEW.workspace_id FROM workspace_bindings
        WHERE platform = NEW.platform AND external_id = NEW.workspace;
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER schedules_workspace BEFORE INSERT ON schedules
    FOR EACH ROW EXECUTE FUNCTION switchboard_schedule_workspace();
