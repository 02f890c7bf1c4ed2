package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
)

// Statements only the tests run.
const (
	rawCreateSQL = `CREATE TABLE IF NOT EXISTS bench_raw_entries (
    id              TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    after_seq       INTEGER NOT NULL,
    kind            TEXT NOT NULL,
    author          TEXT NOT NULL,
    content         TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    UNIQUE (conversation_id, seq)
)`
	rawInsertSQL = `INSERT INTO bench_raw_entries (id, conversation_id, seq, after_seq, kind, author, content, created_at)
VALUES (:id, :conversation_id, :seq, :seq - 1, 'user', 'user:bench', :content, 0)`
	// earlierVersionTableSQL is the version table as binaries made it
	// before they recorded who applied a migration and its floor, with
	// version 1 applied; earlierRecordSQL is how such a binary records one.
	earlierVersionTableSQL = `CREATE TABLE switchboard_schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at INTEGER NOT NULL
);
CREATE TABLE schema_probe_1 (id INTEGER);
INSERT INTO switchboard_schema_migrations (version, name, applied_at) VALUES (1, 'test/0001_probe.sql', 0)`
	earlierRecordSQL = `INSERT INTO switchboard_schema_migrations (version, name, applied_at) VALUES (:version, :name, 0)`
	tableExistsSQL   = `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = :name`
	countTestGoodSQL = `SELECT COUNT(*) FROM test_good`
	// takeLeaseSQL hands a conversation's lease to another owner, as a
	// worker that claimed it after an expiry would.
	takeLeaseSQL = `UPDATE conversations SET lease_owner = :owner, lease_expires_at = :expires_at WHERE id = :id`
)

// newRawInserter creates the benchmark's scratch table (shaped like entries)
// and returns a func inserting one row into it on the writer, in autocommit:
// the cheapest durable write SQLite can do, which EntryAppend is compared to.
func newRawInserter(tb testing.TB, s *Store) func(ctx context.Context) error {
	tb.Helper()
	if _, err := s.DB().ExecContext(context.Background(), rawCreateSQL); err != nil {
		tb.Fatalf("creating the raw insert scratch table: %v", err)
	}
	content, err := json.Marshal(map[string]string{"text": "a message of about the size a chat message has, give or take"})
	if err != nil {
		tb.Fatal(err)
	}
	conv := uuid.New().String()
	var seq int64
	return func(ctx context.Context) error {
		seq++
		_, err := s.DB().ExecContext(ctx, rawInsertSQL,
			sql.Named("id", uuid.New().String()),
			sql.Named("conversation_id", conv),
			sql.Named("seq", seq),
			sql.Named("content", string(content)),
		)
		return err
	}
}
