-- Where a pulled event stream was read up to (Matrix's /sync next_batch).
-- Same shape as Postgres in this dialect's conventions (INTEGER unix
-- microseconds); the Postgres file says what the table is for.

CREATE TABLE sync_cursors (
    name       TEXT PRIMARY KEY,
    cursor     TEXT NOT NULL CHECK (cursor <> ''),
    updated_at INTEGER NOT NULL
) WITHOUT ROWID;
