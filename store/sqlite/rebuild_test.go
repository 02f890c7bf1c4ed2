package sqlite

import (
	"database/sql"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/migrations"
	"github.com/switchboardhq/switchboard/store"
)

// TestEntriesRebuildKeepsTheLog: migration 0017 rebuilds the entries table
// to relax its kind check. A log written before it (entries and error
// entries, in two conversations) reads back identical after it, in the same
// display order; the table's indexes are there again, foreign keys still
// hold, and a summary entry, refused before, is accepted.
func TestEntriesRebuildKeepsTheLog(t *testing.T) {
	t.Parallel()
	s := openAt(t, t.TempDir()+"/rebuild.db")
	ctx := t.Context()
	all, err := migrations.Load(Dialect)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(all, func(m migrations.Migration) bool { return m.Version == 17 })
	if i < 0 {
		t.Fatal("migration 0017 is missing")
	}
	s.d.migrations = all[:i]
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrating to before 0017: %v", err)
	}

	now := time.Date(2031, 3, 4, 5, 6, 7, 0, time.UTC)
	// The log before 0017 is written as rows of that schema, not with
	// today's ConversationCreate and EntryAppend, which touch columns added
	// since.
	exec := func(query string, args ...any) error {
		t.Helper()
		_, err := s.d.w.ExecContext(ctx, query, args...)
		return err
	}
	var convs []*store.Conversation
	for range 2 {
		c := &store.Conversation{ID: uuid.Must(uuid.NewV7())}
		if err := exec(`INSERT INTO conversations (id, root_id, title, last_seq, created_at, updated_at) VALUES (:id, :id, 'before', 4, :now, :now)`,
			sql.Named("id", c.ID.String()), sql.Named("now", micros(now))); err != nil {
			t.Fatalf("creating a conversation before 0017: %v", err)
		}
		convs = append(convs, c)
		seq, after := int64(0), int64(0)
		for j, k := range []store.EntryKind{store.EntryUser, store.EntryError, store.EntryError, store.EntryAssistant, store.EntryToolCall, store.EntryToolResult} {
			var seqArg any
			if k != store.EntryError {
				seq++
				seqArg = seq
			}
			if err := exec(`INSERT INTO entries (id, conversation_id, seq, after_seq, kind, author, content, created_at) VALUES (:id, :conv, :seq, :after, :kind, 'user:u1', :content, :now)`,
				sql.Named("id", uuid.Must(uuid.NewV7()).String()), sql.Named("conv", c.ID.String()), sql.Named("seq", seqArg), sql.Named("after", after),
				sql.Named("kind", string(k)), sql.Named("content", `{"j":`+string(rune('0'+j))+`}`), sql.Named("now", micros(now))); err != nil {
				t.Fatalf("appending %s: %v", k, err)
			}
			if k != store.EntryError {
				after = seq
			}
		}
	}
	if err := exec(`INSERT INTO entries (id, conversation_id, seq, after_seq, kind, author, content, created_at) VALUES (:id, :conv, 5, 4, 'summary', 'system', '{}', :now)`,
		sql.Named("id", uuid.Must(uuid.NewV7()).String()), sql.Named("conv", convs[0].ID.String()), sql.Named("now", micros(now))); err == nil {
		t.Fatal("appending a summary before 0017: want the old kind check to refuse it")
	}
	before := map[int][]*store.Entry{}
	for n, c := range convs {
		before[n], err = s.EntryList(ctx, &store.EntryListParams{ConversationID: c.ID, WithErrors: true})
		if err != nil {
			t.Fatal(err)
		}
	}

	s.d.migrations = all
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrating through 0017: %v", err)
	}
	for n, c := range convs {
		after, err := s.EntryList(ctx, &store.EntryListParams{ConversationID: c.ID, WithErrors: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != len(before[n]) {
			t.Fatalf("conversation %d has %d entries after the rebuild, want the %d it had", n, len(after), len(before[n]))
		}
		for j := range after {
			b, a := before[n][j], after[j]
			if a.ID != b.ID || a.Kind != b.Kind || a.SeqValue() != b.SeqValue() || a.AfterSeq != b.AfterSeq || string(a.Content) != string(b.Content) || !a.CreatedAt.Equal(b.CreatedAt) {
				t.Errorf("conversation %d entry %d after the rebuild = %+v, want %+v", n, j, a, b)
			}
		}
	}
	for _, idx := range []string{"entries_errors_idx", "entries_summary_idx"} {
		if n := countRows(t, s.d.w, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = :name`, sql.Named("name", idx)); n != 1 {
			t.Errorf("index %s after the rebuild: found %d, want 1", idx, n)
		}
	}
	if n := countRows(t, s.d.w, `SELECT count(*) FROM pragma_foreign_key_check`); n != 0 {
		t.Errorf("foreign key violations after the rebuild: %d, want none", n)
	}
	res, err := s.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: convs[0].ID, Kind: store.EntrySummary, Author: "system", Now: now})
	if err != nil {
		t.Fatalf("appending a summary after 0017: %v", err)
	}
	if res.Entry.SeqValue() != 5 {
		t.Errorf("the summary's seq = %d, want 5 (after the four entries with a seq)", res.Entry.SeqValue())
	}
}
