-- Statements only the tests run.

-- name: RawCreate
CREATE TABLE IF NOT EXISTS bench_raw_entries (
    id              TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    after_seq       INTEGER NOT NULL,
    kind            TEXT NOT NULL,
    author          TEXT NOT NULL,
    content         TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    UNIQUE (conversation_id, seq)
);

-- name: RawInsert
INSERT INTO bench_raw_entries (id, conversation_id, seq, after_seq, kind, author, content, created_at)
VALUES (:id, :conversation_id, :seq, :seq - 1, 'user', 'user:bench', :content, 0);

-- name: TableExists
SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = :name;

-- name: CountTestGood
SELECT COUNT(*) FROM test_good;
