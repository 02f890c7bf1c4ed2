-- Read by sqlc only, never executed: FTS5's hidden column named after the
-- table (the left side of MATCH, the argument of bm25), which sqlc's
-- catalog does not know about.
ALTER TABLE notes_fts ADD COLUMN notes_fts TEXT;
