-- Long conversations and rulebooks, as in Postgres in this dialect's
-- conventions.
--
-- Entry kinds are checked in Go (store.EntryKind.Valid, in the store's
-- rules), so a new kind needs no migration; the table keeps only
-- kind <> ''. SQLite cannot change a CHECK in place: the table is rebuilt
-- with the same columns in the same order, its rows copied as they are,
-- and its index made again. No table references entries and no trigger is
-- defined on it (0001 to 0015), so dropping the old table with foreign
-- keys on is safe; the new table's own reference to conversations is
-- checked as the rows are copied.
CREATE TABLE entries_new (
    id              TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    seq             INTEGER CHECK (seq IS NULL OR seq >= 1),
    after_seq       INTEGER NOT NULL CHECK (after_seq >= 0),
    kind            TEXT NOT NULL CHECK (kind <> ''),
    author          TEXT NOT NULL DEFAULT '',
    content         TEXT NOT NULL DEFAULT '{}',
    turn_id         TEXT,
    created_at      INTEGER NOT NULL,
    CHECK ((kind = 'error') = (seq IS NULL)),
    UNIQUE (conversation_id, seq)
);

-- rowid order is kept: the display order of error entries written at the
-- same after_seq depends on it (EntryListWithErrors).
INSERT INTO entries_new (rowid, id, conversation_id, seq, after_seq, kind, author, content, turn_id, created_at)
SELECT rowid, id, conversation_id, seq, after_seq, kind, author, content, turn_id, created_at FROM entries;

DROP TABLE entries;
ALTER TABLE entries_new RENAME TO entries;

CREATE INDEX entries_errors_idx ON entries (conversation_id, after_seq)
    WHERE seq IS NULL;

-- A turn reads its context from the latest summary on: one index probe.
CREATE INDEX entries_summary_idx ON entries (conversation_id, seq)
    WHERE kind = 'summary';

-- Each conversation's rulebook; no row: no rulebook.
CREATE TABLE conversation_rulebooks (
    conversation_id TEXT PRIMARY KEY REFERENCES conversations (id),
    text            TEXT NOT NULL CHECK (text <> ''),
    set_by          TEXT NOT NULL CHECK (set_by <> ''),
    updated_at      INTEGER NOT NULL
);
