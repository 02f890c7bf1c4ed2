-- Workspaces, their members and roles, the platform teams and guilds bound
-- to them, and where agents may answer. Same shape as Postgres, in this
-- dialect's conventions (TEXT ids, INTEGER unix microseconds). Persons are
-- another part's rows: referred to by id only, with no foreign key.

CREATE TABLE workspaces (
    id              TEXT PRIMARY KEY,
    name            TEXT NOT NULL CHECK (name <> ''),
    kind            TEXT NOT NULL CHECK (kind IN ('personal', 'team')),
    -- Set at creation, never changed.
    owner_person_id TEXT NOT NULL,
    created_at      INTEGER NOT NULL
);

CREATE UNIQUE INDEX workspaces_personal_key ON workspaces (owner_person_id) WHERE kind = 'personal';

CREATE TABLE workspace_members (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    person_id    TEXT NOT NULL,
    role         TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, person_id)
) WITHOUT ROWID;

CREATE INDEX workspace_members_person_idx ON workspace_members (person_id);

CREATE TABLE workspace_bindings (
    platform     TEXT NOT NULL CHECK (platform <> ''),
    external_id  TEXT NOT NULL CHECK (external_id <> ''),
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (platform, external_id)
) WITHOUT ROWID;

CREATE TABLE agent_sharing (
    agent_id        TEXT PRIMARY KEY,
    owner_person_id TEXT,
    published       INTEGER NOT NULL DEFAULT 0 CHECK (published IN (0, 1)),
    updated_at      INTEGER NOT NULL
);

CREATE TABLE agent_pins (
    agent_id     TEXT NOT NULL,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (agent_id, workspace_id)
) WITHOUT ROWID;

ALTER TABLE conversations ADD COLUMN workspace_id TEXT;
ALTER TABLE schedules ADD COLUMN workspace_id TEXT;
ALTER TABLE approvals ADD COLUMN workspace_id TEXT;
ALTER TABLE audit ADD COLUMN workspace_id TEXT;
ALTER TABLE usage ADD COLUMN workspace_id TEXT;

CREATE INDEX conversations_workspace_idx ON conversations (workspace_id) WHERE workspace_id IS NOT NULL;
CREATE INDEX schedules_workspace_idx ON schedules (workspace_id) WHERE workspace_id IS NOT NULL;

-- The workspace is stamped by the database when a row is made (see the
-- Postgres migration); SQLite's triggers run after the insert, in the same
-- statement's transaction.

CREATE TRIGGER bindings_workspace AFTER INSERT ON bindings
BEGIN
    UPDATE conversations SET workspace_id = (
        SELECT workspace_id FROM workspace_bindings
        WHERE platform = NEW.platform AND external_id = NEW.workspace)
    WHERE id = NEW.conversation_id AND workspace_id IS NULL;
END;

CREATE TRIGGER conversations_workspace AFTER INSERT ON conversations
WHEN NEW.workspace_id IS NULL AND NEW.parent_id IS NOT NULL
BEGIN
    UPDATE conversations SET workspace_id = (SELECT workspace_id FROM conversations WHERE id = NEW.parent_id)
    WHERE id = NEW.id;
END;

CREATE TRIGGER approvals_workspace AFTER INSERT ON approvals
WHEN NEW.workspace_id IS NULL
BEGIN
    UPDATE approvals SET workspace_id = (SELECT workspace_id FROM conversations WHERE id = NEW.conversation_id)
    WHERE id = NEW.id;
END;

CREATE TRIGGER audit_workspace AFTER INSERT ON audit
WHEN NEW.workspace_id IS NULL AND NEW.conversation_id IS NOT NULL
BEGIN
    UPDATE audit SET workspace_id = (SELECT workspace_id FROM conversations WHERE id = NEW.conversation_id)
    WHERE id = NEW.id;
END;

CREATE TRIGGER usage_workspace AFTER INSERT ON usage
WHEN NEW.workspace_id IS NULL
BEGIN
    UPDATE usage SET workspace_id = (SELECT workspace_id FROM conversations WHERE id = NEW.conversation_id)
    WHERE id = NEW.id;
END;

CREATE TRIGGER schedules_workspace AFTER INSERT ON schedules
WHEN NEW.workspace_id IS NULL
BEGIN
    UPDATE schedules SET workspace_id = (
        SELECT workspace_id FROM workspace_bindings
        WHERE platform = NEW.platform AND external_id = NEW.workspace)
    WHERE id = NEW.id;
END;
