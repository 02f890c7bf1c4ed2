-- Retention per workspace, as in Postgres in this dialect's conventions
-- (TEXT ids, INTEGER unix microseconds). No row: conversations are kept
-- forever.
CREATE TABLE workspace_retention (
    workspace_id TEXT PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
    keep_days    INTEGER NOT NULL CHECK (keep_days BETWEEN 1 AND 36500),
    export_dir   TEXT NOT NULL DEFAULT '',
    updated_at   INTEGER NOT NULL
) WITHOUT ROWID;

-- The sweep deletes a conversation together with its forks: the tree of
-- one root.
CREATE INDEX conversations_root_idx ON conversations (root_id);

-- Deleting a conversation or a binding reaches these rows through an index
-- (their foreign keys cascade), not a scan of the table.
CREATE INDEX card_choices_conversation_idx ON card_choices (conversation_id);
CREATE INDEX run_messages_binding_idx ON run_messages (binding_id);
