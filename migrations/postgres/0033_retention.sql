-- Retention per workspace, and deleting one person's data on request.
--
-- A workspace with a row here keeps its conversations keep_days after their
-- last activity; the sweep then deletes them with everything that hangs
-- off them, exporting each first to export_dir (on the server's disk) when
-- that is set. A workspace without a row keeps its conversations forever.
CREATE TABLE workspace_retention (
    workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
    keep_days    integer NOT NULL CHECK (keep_days BETWEEN 1 AND 36500),
    export_dir   text NOT NULL DEFAULT '',
    updated_at   timestamptz NOT NULL
);

-- The sweep deletes a conversation together with its forks: the tree of
-- one root.
CREATE INDEX conversations_root_idx ON conversations (root_id);

-- Deleting a conversation or a binding reaches these rows through an index
-- (their foreign keys cascade), not a scan of the table.
CREATE INDEX card_choices_conversation_idx ON card_choices (conversation_id);
CREATE INDEX run_messages_binding_idx ON run_messages (binding_id);
