package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/migrations"
	"github.com/switchboardhq/switchboard/store"
)

// Tests of what is particular to SQLite: the file, WAL, the migration runner,
// the one-writer transactions and the in-process notifications. The contract
// itself is checked by TestConformance.

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var t0 = time.Date(2031, time.March, 4, 5, 6, 7, 123456000, time.UTC)

func openAt(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(t.Context(), Options{Path: path})
	if err != nil {
		t.Fatalf("opening %s: %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func countRows(t *testing.T, db *sql.DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRowContext(t.Context(), query, args...).Scan(&n); err != nil {
		t.Fatalf("running %s: %v", query, err)
	}
	return n
}

func TestOpenValidatesOptions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name    string
		opts    Options
		wantErr string // a substring naming the field
	}{
		{"empty path", Options{}, "Path is required"},
		{"memory", Options{Path: ":memory:"}, "Path"},
		{"uri", Options{Path: "file:" + filepath.Join(dir, "x.db")}, "Path"},
		{"query in path", Options{Path: filepath.Join(dir, "x.db?mode=ro")}, "Path"},
		{"negative busy timeout", Options{Path: filepath.Join(dir, "x.db"), BusyTimeout: -time.Second}, "BusyTimeout"},
		{"negative read conns", Options{Path: filepath.Join(dir, "x.db"), MaxReadConns: -1}, "MaxReadConns"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(t.Context(), tc.opts)
			if err == nil {
				_ = s.Close()
				t.Fatalf("Open(%+v): want an error naming %q, got none", tc.opts, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Open(%+v): want an error containing %q, got %v", tc.opts, tc.wantErr, err)
			}
		})
	}
}

func TestOpenCreatesDirectoryAndUsesWAL(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "data", "nested", "switchboard.db")
	s := openAt(t, path)
	if _, err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("migrating: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("want the database file at %s, stat says: %v", path, err)
	}
	for name, db := range map[string]*sql.DB{"writer": s.d.w, "reader": s.d.r} {
		var mode string
		if err := db.QueryRowContext(t.Context(), journalModeSQL).Scan(&mode); err != nil {
			t.Fatalf("reading the %s's journal mode: %v", name, err)
		}
		if mode != "wal" {
			t.Fatalf("%s journal mode: want wal, got %q", name, mode)
		}
	}
	if s.Dialect() != "sqlite" {
		t.Fatalf("Dialect: want sqlite, got %q", s.Dialect())
	}
}

func TestOpenDefaultPathIsRelativeDataDir(t *testing.T) {
	t.Chdir(t.TempDir())
	s := openAt(t, DefaultPath)
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("pinging a store at the default path: %v", err)
	}
	if fi, err := os.Stat("data"); err != nil || !fi.IsDir() {
		t.Fatalf("want ./data created by Open, stat says: %v", err)
	}
}

func loadTestMigration(t *testing.T, file string) migrations.Migration {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", "migrations", file))
	if err != nil {
		t.Fatal(err)
	}
	var v int
	if _, err := fmt.Sscanf(file, "%04d_", &v); err != nil {
		t.Fatalf("migration file %s: %v", file, err)
	}
	return migrations.Migration{Version: v, Name: "testdata/" + file, SQL: string(body)}
}

func TestMigrationFailureLeavesVersionAndNamesFile(t *testing.T) {
	t.Parallel()
	s := openAt(t, filepath.Join(t.TempDir(), "m.db"))
	ctx := t.Context()
	good, bad, fixed := loadTestMigration(t, "0001_good.sql"), loadTestMigration(t, "0002_bad.sql"), loadTestMigration(t, "0002_fixed.sql")

	s.d.migrations = []migrations.Migration{good, bad}
	_, err := s.Migrate(ctx)
	if err == nil {
		t.Fatal("migrating with a broken 0002: want an error, got none")
	}
	if !strings.Contains(err.Error(), bad.Name) {
		t.Fatalf("migration error: want it to name %s, got %v", bad.Name, err)
	}
	applied, latest, err := s.SchemaVersion(ctx)
	if err != nil {
		t.Fatalf("reading the schema version: %v", err)
	}
	if applied != 1 || latest != 2 {
		t.Fatalf("schema version after the failed 0002: want applied 1 latest 2, got %d %d", applied, latest)
	}
	if n := countRows(t, s.d.w, tableExistsSQL, sql.Named("name", "test_half")); n != 0 {
		t.Fatal("the failed migration's first statement is still applied: want it rolled back with the rest")
	}
	if n := countRows(t, s.d.w, tableExistsSQL, sql.Named("name", "test_good")); n != 1 {
		t.Fatal("migration 0001 is missing after 0002 failed")
	}

	s.d.migrations = []migrations.Migration{good, fixed}
	for run := range 2 { // the second run must find nothing to do
		v, err := s.Migrate(ctx)
		if err != nil {
			t.Fatalf("run %d with the fixed 0002: %v", run+1, err)
		}
		if v != 2 {
			t.Fatalf("run %d: want version 2, got %d", run+1, v)
		}
	}
	// 0001 inserted a row: applied twice, there would be two.
	if rows := countRows(t, s.d.w, countTestGoodSQL); rows != 1 {
		t.Fatalf("rows inserted by 0001: want 1 (applied once), got %d", rows)
	}
}

// TestVersionTableFromEarlierBinary: a version table made by a binary from
// before the record of who applied a migration and its floor is given the
// columns when the store opens (its rows read as unknown), and still takes
// an earlier binary's rows afterwards.
func TestVersionTableFromEarlierBinary(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "earlier.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(t.Context(), earlierVersionTableSQL); err != nil {
		t.Fatalf("making the earlier version table: %v", err)
	}
	raw.Close()
	const binary = "v2.0.0 (commit 2222bbbb2222)"
	s, err := Open(t.Context(), Options{Path: path, BinaryVersion: binary})
	if err != nil {
		t.Fatalf("opening a file with an earlier version table: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ms := []migrations.Migration{
		{Version: 1, Name: "test/0001_probe.sql", SQL: "CREATE TABLE schema_probe_1 (id INTEGER)"},
		{Version: 2, Name: "test/0002_probe.sql", SQL: "CREATE TABLE schema_probe_2 (id INTEGER)", Contract: 2},
	}
	migrations.WithFloors(ms)
	s.d.migrations = ms
	ctx := t.Context()
	got, err := s.SchemaState(ctx)
	if err != nil {
		t.Fatalf("reading the schema state: %v", err)
	}
	if want := (store.SchemaState{Applied: 1, Latest: 2, Binary: binary}); *got != want {
		t.Fatalf("schema state of an earlier version table: %+v, want %+v", *got, want)
	}
	if v, err := s.Migrate(ctx); err != nil || v != 2 {
		t.Fatalf("migrating over an earlier version table: %d, %v; want 2", v, err)
	}
	if _, err := s.d.w.ExecContext(ctx, earlierRecordSQL, sql.Named("version", 3), sql.Named("name", "test/0003_by_an_earlier_binary.sql")); err != nil {
		t.Fatalf("an earlier binary recording a version in the table this one extended: %v", err)
	}
	got, err = s.SchemaState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (store.SchemaState{Applied: 3, Latest: 2, Floor: 2, FloorBy: binary, Binary: binary}); *got != want {
		t.Fatalf("schema state after the upgrade and an earlier binary's row: %+v, want %+v", *got, want)
	}
}

func TestSchemaVersionOfEmptyDatabase(t *testing.T) {
	t.Parallel()
	s := openAt(t, filepath.Join(t.TempDir(), "empty.db"))
	applied, latest, err := s.SchemaVersion(t.Context())
	if err != nil {
		t.Fatalf("reading the schema version of an empty file: %v", err)
	}
	want, err := migrations.Latest(Dialect)
	if err != nil {
		t.Fatal(err)
	}
	if applied != 0 || latest != want {
		t.Fatalf("schema version of an empty file: want applied 0 latest %d, got %d %d", want, applied, latest)
	}
}

func TestReopenKeepsData(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "keep.db")
	ctx := t.Context()
	s, err := Open(ctx, Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := s.ConversationCreate(ctx, &store.ConversationCreateParams{Title: "kept", Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := s.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: c.ID, Kind: store.EntryUser, Content: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), Now: t0}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatalf("closing: %v", err)
	}

	s2 := openAt(t, path)
	v, err := s2.Migrate(ctx)
	if err != nil {
		t.Fatalf("migrating the reopened file: %v", err)
	}
	if want, _ := migrations.Latest(Dialect); v != want {
		t.Fatalf("version after reopening: want %d, got %d", want, v)
	}
	got, err := s2.ConversationGet(ctx, c.ID)
	if err != nil {
		t.Fatalf("reading the conversation after reopening: %v", err)
	}
	if got.Title != "kept" || got.LastSeq != 3 {
		t.Fatalf("conversation after reopening: want title kept, last seq 3; got %q, %d", got.Title, got.LastSeq)
	}
	es, err := s2.EntryList(ctx, &store.EntryListParams{ConversationID: c.ID})
	if err != nil || len(es) != 3 {
		t.Fatalf("entries after reopening: want 3, got %d (%v)", len(es), err)
	}
	// The log goes on where it stopped.
	res, err := s2.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: c.ID, Kind: store.EntryUser, Now: t0})
	if err != nil || res.Entry.SeqValue() != 4 {
		t.Fatalf("append after reopening: want seq 4, got %v (%v)", res, err)
	}
}

// recv waits for one notification or fails after a deadline.
func recv(t *testing.T, ch <-chan store.Notification) store.Notification {
	t.Helper()
	select {
	case n, ok := <-ch:
		if !ok {
			t.Fatal("subscription closed while waiting for a notification")
		}
		return n
	case <-time.After(5 * time.Second):
		t.Fatal("no notification within 5s")
	}
	return store.Notification{}
}

func TestNotificationsOnlyAfterCommit(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	ctx := t.Context()
	ch, err := s.Subscribe(ctx, store.TopicEntries)
	if err != nil {
		t.Fatal(err)
	}
	rolledBack, err := s.ConversationCreate(ctx, &store.ConversationCreateParams{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	committed, err := s.ConversationCreate(ctx, &store.ConversationCreateParams{Now: t0})
	if err != nil {
		t.Fatal(err)
	}

	errRollback := errors.New("roll back")
	err = s.InTx(ctx, func(q store.Queries) error {
		if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: rolledBack.ID, Kind: store.EntryUser, Now: t0}); err != nil {
			return err
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatalf("InTx: want the function's error back, got %v", err)
	}

	err = s.InTx(ctx, func(q store.Queries) error {
		if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: committed.ID, Kind: store.EntryUser, Now: t0}); err != nil {
			return err
		}
		select {
		case n := <-ch:
			return fmt.Errorf("notification %+v delivered before the commit", n)
		default:
			return nil
		}
	})
	if err != nil {
		t.Fatalf("InTx: %v", err)
	}
	// Publishing is ordered, so had the rolled-back append notified, its
	// wake-up would arrive first.
	if n := recv(t, ch); n.Payload != committed.ID.String() {
		t.Fatalf("first notification: want the committed conversation %s, got %+v (the rolled-back one is %s)", committed.ID, n, rolledBack.ID)
	}
	if es, _ := s.EntryList(ctx, &store.EntryListParams{ConversationID: rolledBack.ID}); len(es) != 0 {
		t.Fatalf("entries of the rolled-back transaction: want none, got %d", len(es))
	}
}

func TestInTxFailedCallLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	ctx := t.Context()
	c, err := s.ConversationCreate(ctx, &store.ConversationCreateParams{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "turn", ConversationID: &c.ID, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WorkClaim(ctx, &store.WorkClaimParams{Worker: "w1", Limit: 1, LeaseTTL: 10 * time.Second, Now: t0}); err != nil {
		t.Fatal(err)
	}
	// w1 stalls; its lease runs out and someone else takes the conversation.
	if _, err := s.DB().ExecContext(ctx, takeLeaseSQL, sql.Named("id", c.ID.String()), sql.Named("owner", "other"),
		sql.Named("expires_at", t0.Add(80*time.Second).UnixMicro())); err != nil {
		t.Fatal(err)
	}

	// WorkHeartbeat extends the item first, then finds the conversation
	// taken: inside a transaction the caller commits anyway, the item's
	// extension must not survive.
	err = s.InTx(ctx, func(q store.Queries) error {
		_, err := q.WorkHeartbeat(ctx, &store.WorkLeaseParams{ID: w.Item.ID, Worker: "w1", LeaseTTL: time.Hour, Now: t0.Add(21 * time.Second)})
		if !errors.Is(err, store.ErrLeaseLost) {
			return fmt.Errorf("heartbeat of a lost lease: want ErrLeaseLost, got %v", err)
		}
		// A failed statement does not end the transaction: later calls work.
		_, err = q.ConversationCreate(ctx, &store.ConversationCreateParams{ID: c.ID, Now: t0})
		if !errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("creating a duplicate id: want ErrConflict, got %v", err)
		}
		_, err = q.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: c.ID, Kind: store.EntryUser, Now: t0})
		return err
	})
	if err != nil {
		t.Fatalf("InTx: %v", err)
	}
	got, err := s.WorkGet(ctx, w.Item.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := t0.Add(10 * time.Second); got.LeaseExpiresAt == nil || !got.LeaseExpiresAt.Equal(want) {
		t.Fatalf("item lease after the refused heartbeat: want %s (unchanged), got %v", want, got.LeaseExpiresAt)
	}
	if conv, _ := s.ConversationGet(ctx, c.ID); conv.LastSeq != 1 {
		t.Fatalf("last seq after the committed append: want 1, got %d", conv.LastSeq)
	}
}

func TestInTxPanicReleasesTheWriter(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	func() {
		defer func() {
			if r := recover(); r == nil {
				t.Fatal("want the panic to propagate out of InTx")
			}
		}()
		_ = s.InTx(t.Context(), func(q store.Queries) error {
			if _, err := q.ConversationCreate(t.Context(), &store.ConversationCreateParams{Title: "lost", Now: t0}); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := s.ConversationCreate(ctx, &store.ConversationCreateParams{Now: t0}); err != nil {
		t.Fatalf("writing after a panicking transaction: want the writer free, got %v", err)
	}
}

func TestClaimFailsItemExpiredOnLastAttempt(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	ctx := t.Context()
	w, err := s.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "job", MaxAttempts: 1, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if items, err := s.WorkClaim(ctx, &store.WorkClaimParams{Worker: "w1", Limit: 1, LeaseTTL: 10 * time.Second, Now: t0}); err != nil || len(items) != 1 {
		t.Fatalf("first claim: want 1 item, got %d (%v)", len(items), err)
	}
	items, err := s.WorkClaim(ctx, &store.WorkClaimParams{Worker: "w2", Limit: 1, LeaseTTL: 10 * time.Second, Now: t0.Add(time.Minute)})
	if err != nil || len(items) != 0 {
		t.Fatalf("claim after the only attempt's lease expired: want nothing, got %d (%v)", len(items), err)
	}
	got, err := s.WorkGet(ctx, w.Item.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != store.WorkFailed || got.LastError == "" || got.FinishedAt == nil {
		t.Fatalf("item after its last attempt expired: want failed with an error and a finish time, got state %s error %q finished %v", got.State, got.LastError, got.FinishedAt)
	}
}

// Two Stores on one file stand in for two processes: their writers meet on
// SQLite's file lock, where busy_timeout makes the loser wait.
func TestTwoProcessesAppendWithoutGaps(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "shared.db")
	a, b := openAt(t, path), openAt(t, path)
	ctx := t.Context()
	if _, err := a.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := a.ConversationCreate(ctx, &store.ConversationCreateParams{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	const perStore, goroutines = 20, 4
	var wg sync.WaitGroup
	errs := make(chan error, 2*goroutines)
	for _, s := range []*Store{a, b} {
		for range goroutines {
			wg.Go(func() {
				for range perStore / goroutines {
					if _, err := s.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: c.ID, Kind: store.EntryUser, Now: t0}); err != nil {
						errs <- err
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("appending from two stores on one file: %v", err)
	}
	es, err := b.EntryList(ctx, &store.EntryListParams{ConversationID: c.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2*perStore {
		t.Fatalf("entries: want %d, got %d", 2*perStore, len(es))
	}
	for i, e := range es {
		if e.SeqValue() != int64(i+1) {
			t.Fatalf("entry %d: want seq %d (no gaps, no duplicates), got %d", i, i+1, e.SeqValue())
		}
	}
}

func TestCloseEndsSubscriptions(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "close.db")
	s, err := Open(t.Context(), Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := s.Subscribe(context.Background(), store.TopicWork)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("closing: %v", err)
	}
	select {
	case _, ok := <-ch:
		if ok {
			t.Fatal("want the subscription closed by Close, got a notification")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("subscription still open 5s after Close")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("closing twice: want nil, got %v", err)
	}
	if _, err := s.Subscribe(context.Background(), store.TopicWork); err == nil {
		t.Fatal("subscribing to a closed store: want an error")
	}
}

func TestSubscribeEndsWithContextAndDropsForSlowReaders(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	slow, err := s.Subscribe(ctx, store.TopicWork)
	if err != nil {
		t.Fatal(err)
	}
	// Nobody reads slow: enqueueing more than its buffer must not block.
	for i := range subscriptionBuffer + 10 {
		if _, err := s.WorkEnqueue(t.Context(), &store.WorkEnqueueParams{Kind: fmt.Sprintf("k%d", i), Now: t0}); err != nil {
			t.Fatalf("enqueue %d with a full subscriber: %v", i, err)
		}
	}
	if got := len(slow); got != subscriptionBuffer {
		t.Fatalf("buffered notifications of a slow subscriber: want %d (the rest dropped), got %d", subscriptionBuffer, got)
	}
	cancel()
	for range subscriptionBuffer {
		<-slow
	}
	select {
	case _, ok := <-slow:
		if ok {
			t.Fatal("want the channel closed after its context ended, got a notification")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("subscription still open 5s after its context ended")
	}
}

func TestErrorsAreMappedToSentinels(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	ctx := t.Context()
	missing := uuid.New()
	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"append to a missing conversation", func() error {
			_, err := s.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: missing, Kind: store.EntryUser, Now: t0})
			return err
		}, store.ErrNotFound},
		{"enqueue for a missing conversation (foreign key)", func() error {
			_, err := s.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "turn", ConversationID: &missing, Now: t0})
			return err
		}, store.ErrNotFound},
		{"get a missing entry", func() error {
			_, err := s.EntryGet(ctx, missing)
			return err
		}, store.ErrNotFound},
		{"invalid JSON content", func() error {
			_, err := s.ConversationCreate(ctx, &store.ConversationCreateParams{Metadata: json.RawMessage(`{`), Now: t0})
			return err
		}, store.ErrInvalid},
		{"heartbeat of a missing item", func() error {
			_, err := s.WorkHeartbeat(ctx, &store.WorkLeaseParams{ID: missing, Worker: "w", LeaseTTL: time.Second, Now: t0})
			return err
		}, store.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, tc.want) {
				t.Fatalf("want %v, got %v", tc.want, err)
			}
			if strings.Contains(fmt.Sprintf("%T", errors.Unwrap(err)), "sqlite.Error") {
				t.Fatalf("a driver error type reached the caller: %T", errors.Unwrap(err))
			}
		})
	}
}

// Completing a conversation's item frees the conversation, which makes its
// next item claimable: workers of that kind are woken.
func TestCompleteWakesTheConversationsNextItem(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	ctx := t.Context()
	c, err := s.ConversationCreate(ctx, &store.ConversationCreateParams{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"turn", "followup"} {
		if _, err := s.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: kind, ConversationID: &c.ID, Now: t0}); err != nil {
			t.Fatal(err)
		}
	}
	items, err := s.WorkClaim(ctx, &store.WorkClaimParams{Worker: "w1", Limit: 10, LeaseTTL: time.Minute, Now: t0})
	if err != nil || len(items) != 1 || items[0].Kind != "turn" {
		t.Fatalf("claim: want only the conversation's first item (turn), got %d items (%v)", len(items), err)
	}
	ch, err := s.Subscribe(ctx, store.TopicWork)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WorkComplete(ctx, &store.WorkLeaseParams{ID: items[0].ID, Worker: "w1", Now: t0}); err != nil {
		t.Fatal(err)
	}
	if n := recv(t, ch); n.Payload != "followup" {
		t.Fatalf("wake-up after completing the conversation's item: want kind followup, got %+v", n)
	}
}
