-- Notes: what agents remember (see store/note.go). A note belongs to one
-- agent and to its family (the agents of one owner, named in
-- switchboard.yaml), and is visible by its scope: to the agent everywhere
-- ('agent'), to every agent of the family ('family'), or in one
-- conversation ('conversation'). Notes are never deleted: decay and
-- consolidation archive them (archived_at), and a note that replaced an
-- older one on the same subject links to it (supersedes).
--
-- search is the note's full-text vector (text and tags), kept by the
-- database and indexed with GIN.

CREATE TABLE notes (
    id              uuid PRIMARY KEY,
    agent           text NOT NULL CHECK (agent <> ''),
    family          text NOT NULL CHECK (family <> ''),
    conversation_id uuid REFERENCES conversations (id) ON DELETE CASCADE,
    scope           text NOT NULL CHECK (scope IN ('agent', 'family', 'conversation')),
    text            text NOT NULL CHECK (text <> ''),
    tags            text[] NOT NULL DEFAULT '{}',
    pinned          boolean NOT NULL DEFAULT false,
    relevance       double precision NOT NULL DEFAULT 1,
    uses            integer NOT NULL DEFAULT 0 CHECK (uses >= 0),
    last_used_at    timestamptz,
    created_at      timestamptz NOT NULL,
    archived_at     timestamptz,
    supersedes      uuid REFERENCES notes (id) ON DELETE SET NULL,
    workspace_id    uuid,
    -- tags_text repeats the tags as words, for the vector below
    -- (array_to_string is not immutable, so a generated column cannot use it).
    tags_text       text NOT NULL DEFAULT '',
    search          tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', text), 'A') || setweight(to_tsvector('english', tags_text), 'B')
    ) STORED,
    CHECK ((scope = 'conversation') = (conversation_id IS NOT NULL))
);

CREATE INDEX notes_search_idx ON notes USING gin (search);
CREATE INDEX notes_agent_idx ON notes (agent, created_at) WHERE archived_at IS NULL;
CREATE INDEX notes_family_idx ON notes (family, created_at) WHERE archived_at IS NULL;
CREATE INDEX notes_conversation_idx ON notes (conversation_id) WHERE conversation_id IS NOT NULL;
