-- History and artifacts, as in Postgres in this dialect's conventions (TEXT
-- ids, INTEGER unix microseconds).
--
-- A conversation's filing (its folder, whether it is archived or deleted)
-- sits beside it in conversation_filing, one row made the first time it is
-- filed: the conversations row, which every turn writes, keeps its shape.
-- Deleting hides a conversation from the history and the API and lowers its
-- parent's child_count; the log itself is append-only and stays.

CREATE TABLE folders (
    id           TEXT PRIMARY KEY,
    -- NULL: the operator's (conversations outside any workspace).
    workspace_id TEXT REFERENCES workspaces (id) ON DELETE CASCADE,
    name         TEXT NOT NULL CHECK (name <> ''),
    color        TEXT NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);

CREATE INDEX folders_workspace_idx ON folders (workspace_id, name);

CREATE TABLE conversation_filing (
    conversation_id TEXT PRIMARY KEY REFERENCES conversations (id),
    folder_id       TEXT REFERENCES folders (id) ON DELETE SET NULL,
    archived_at     INTEGER,
    deleted_at      INTEGER,
    updated_at      INTEGER NOT NULL
);

CREATE INDEX conversation_filing_folder_idx ON conversation_filing (folder_id) WHERE folder_id IS NOT NULL;

-- Artifacts: a versioned document, page or code attached to a conversation.
-- version is the current one; every version (the first included) is a row
-- of artifact_versions, never changed.
CREATE TABLE artifacts (
    id              TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    kind            TEXT NOT NULL CHECK (kind IN ('document', 'page', 'code')),
    title           TEXT NOT NULL CHECK (title <> ''),
    language        TEXT NOT NULL DEFAULT '',
    content         TEXT NOT NULL DEFAULT '',
    version         INTEGER NOT NULL CHECK (version >= 1),
    created_by      TEXT NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);

CREATE INDEX artifacts_conversation_idx ON artifacts (conversation_id, created_at);

CREATE TABLE artifact_versions (
    artifact_id TEXT NOT NULL REFERENCES artifacts (id) ON DELETE CASCADE,
    version     INTEGER NOT NULL CHECK (version >= 1),
    title       TEXT NOT NULL,
    language    TEXT NOT NULL DEFAULT '',
    content     TEXT NOT NULL DEFAULT '',
    author      TEXT NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (artifact_id, version)
) WITHOUT ROWID;

CREATE TABLE artifact_comments (
    id          TEXT PRIMARY KEY,
    artifact_id TEXT NOT NULL REFERENCES artifacts (id) ON DELETE CASCADE,
    version     INTEGER NOT NULL CHECK (version >= 1),
    author      TEXT NOT NULL DEFAULT '',
    text        TEXT NOT NULL CHECK (text <> ''),
    created_at  INTEGER NOT NULL
);

CREATE INDEX artifact_comments_artifact_idx ON artifact_comments (artifact_id, created_at);
