-- Long conversations and rulebooks.
--
-- Entry kinds are checked in Go (store.EntryKind.Valid, in the store's
-- rules) rather than listed here, so a new kind (summary now; side threads
-- and others later) needs no migration. The database still refuses an
-- empty kind, and an error entry still has no seq.
ALTER TABLE entries DROP CONSTRAINT entries_kind_check;
ALTER TABLE entries ADD CONSTRAINT entries_kind_check CHECK (kind <> '');

-- A turn reads its context from the latest summary on: this finds that
-- summary in one index probe however long the log is.
CREATE INDEX entries_summary_idx ON entries (conversation_id, seq)
    WHERE kind = 'summary';

-- Each conversation's rulebook (reply style, length, when not to jump in),
-- sent in its stable prompt block. No row: no rulebook.
CREATE TABLE conversation_rulebooks (
    conversation_id uuid PRIMARY KEY REFERENCES conversations (id),
    text            text NOT NULL CHECK (text <> ''),
    set_by          text NOT NULL CHECK (set_by <> ''),
    updated_at      timestamptz NOT NULL
);
