-- Notes, as in Postgres in this dialect's conventions (TEXT ids, INTEGER
-- unix microseconds, tags as a JSON array in TEXT). The full-text index is
-- an FTS5 table over the notes' text and tags (an external-content table:
-- it stores only the index), kept in step by the triggers below.

CREATE TABLE notes (
    id              TEXT PRIMARY KEY,
    agent           TEXT NOT NULL CHECK (agent <> ''),
    family          TEXT NOT NULL CHECK (family <> ''),
    conversation_id TEXT REFERENCES conversations (id) ON DELETE CASCADE,
    scope           TEXT NOT NULL CHECK (scope IN ('agent', 'family', 'conversation')),
    text            TEXT NOT NULL CHECK (text <> ''),
    tags            TEXT NOT NULL DEFAULT '[]',
    pinned          INTEGER NOT NULL DEFAULT 0,
    relevance       REAL NOT NULL DEFAULT 1,
    uses            INTEGER NOT NULL DEFAULT 0 CHECK (uses >= 0),
    last_used_at    INTEGER,
    created_at      INTEGER NOT NULL,
    archived_at     INTEGER,
    supersedes      TEXT REFERENCES notes (id) ON DELETE SET NULL,
    workspace_id    TEXT,
    tags_text       TEXT NOT NULL DEFAULT '',
    CHECK ((scope = 'conversation') = (conversation_id IS NOT NULL))
);

CREATE INDEX notes_agent_idx ON notes (agent, created_at) WHERE archived_at IS NULL;
CREATE INDEX notes_family_idx ON notes (family, created_at) WHERE archived_at IS NULL;
CREATE INDEX notes_conversation_idx ON notes (conversation_id) WHERE conversation_id IS NOT NULL;

CREATE VIRTUAL TABLE notes_fts USING fts5 (
    text, tags_text, content = 'notes', content_rowid = 'rowid', tokenize = 'porter unicode61'
);

CREATE TRIGGER notes_fts_insert AFTER INSERT ON notes
BEGIN
    INSERT INTO notes_fts (rowid, text, tags_text) VALUES (NEW.rowid, NEW.text, NEW.tags_text);
END;

CREATE TRIGGER notes_fts_delete AFTER DELETE ON notes
BEGIN
    INSERT INTO notes_fts (notes_fts, rowid, text, tags_text) VALUES ('delete', OLD.rowid, OLD.text, OLD.tags_text);
END;

CREATE TRIGGER notes_fts_update AFTER UPDATE OF text, tags_text ON notes
BEGIN
    INSERT INTO notes_fts (notes_fts, rowid, text, tags_text) VALUES ('delete', OLD.rowid, OLD.text, OLD.tags_text);
    INSERT INTO notes_fts (rowid, text, tags_text) VALUES (NEW.rowid, NEW.text, NEW.tags_text);
END;
