-- History and artifacts.
--
-- A conversation's filing (its folder, whether it is archived or deleted)
-- sits beside it in conversation_filing, one row made the first time it is
-- filed: the conversations row, which every turn writes, keeps its shape.
-- Deleting hides a conversation from the history and the API and lowers its
-- parent's child_count; the log itself is append-only and stays.

CREATE TABLE folders (
    id           uuid PRIMARY KEY,
    -- NULL: the operator's (conversations outside any workspace).
    workspace_id uuid REFERENCES workspaces (id) ON DELETE CASCADE,
    name         text NOT NULL CHECK (name <> ''),
    color        text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL
);

CREATE INDEX folders_workspace_idx ON folders (workspace_id, name);

CREATE TABLE conversation_filing (
    conversation_id uuid PRIMARY KEY REFERENCES conversations (id),
    folder_id       uuid REFERENCES folders (id) ON DELETE SET NULL,
    archived_at     timestamptz,
    deleted_at      timestamptz,
    updated_at      timestamptz NOT NULL
);

CREATE INDEX conversation_filing_folder_idx ON conversation_filing (folder_id) WHERE folder_id IS NOT NULL;

-- Artifacts: a versioned document, page or code attached to a conversation.
-- version is the current one; every version (the first included) is a row
-- of artifact_versions, never changed.
CREATE TABLE artifacts (
    id              uuid PRIMARY KEY,
    conversation_id uuid NOT NULL REFERENCES conversations (id),
    kind            text NOT NULL CHECK (kind IN ('document', 'page', 'code')),
    title           text NOT NULL CHECK (title <> ''),
    language        text NOT NULL DEFAULT '',
    content         text NOT NULL DEFAULT '',
    version         integer NOT NULL CHECK (version >= 1),
    created_by      text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);

CREATE INDEX artifacts_conversation_idx ON artifacts (conversation_id, created_at);

CREATE TABLE artifact_versions (
    artifact_id uuid NOT NULL REFERENCES artifacts (id) ON DELETE CASCADE,
    version     integer NOT NULL CHECK (version >= 1),
    title       text NOT NULL,
    language    text NOT NULL DEFAULT '',
    content     text NOT NULL DEFAULT '',
    author      text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (artifact_id, version)
);

CREATE TABLE artifact_comments (
    id          uuid PRIMARY KEY,
    artifact_id uuid NOT NULL REFERENCES artifacts (id) ON DELETE CASCADE,
    version     integer NOT NULL CHECK (version >= 1),
    author      text NOT NULL DEFAULT '',
    text        text NOT NULL CHECK (text <> ''),
    created_at  timestamptz NOT NULL
);

CREATE INDEX artifact_comments_artifact_idx ON artifact_comments (artifact_id, created_at);
