package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store/internal/sqlfile"
)

// newRawInserter creates the benchmark's scratch table (shaped like entries)
// and returns a func inserting one row into it on the writer, in autocommit:
// the cheapest durable write SQLite can do, which EntryAppend is compared to.
func newRawInserter(tb testing.TB, s *Store) func(ctx context.Context) error {
	tb.Helper()
	if _, err := s.DB().ExecContext(context.Background(), testSQL.Get("RawCreate")); err != nil {
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
		_, err := s.DB().ExecContext(ctx, testSQL.Get("RawInsert"),
			sql.Named("id", uuid.New().String()),
			sql.Named("conversation_id", conv),
			sql.Named("seq", seq),
			sql.Named("content", string(content)),
		)
		return err
	}
}

var testSQL = sqlfile.MustLoad(os.DirFS("."), "testdata")
