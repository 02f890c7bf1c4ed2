package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/store"
)

// A backup taken while another connection (as another process would) keeps
// committing is the database as of one commit: every conversation created
// before the backup began is in it, quick_check passes, and the copy opens
// as a store at the source's schema version.
func TestBackupIntoWhileAnotherConnectionWrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	writer := openAt(t, src)
	version, err := writer.Migrate(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	create := func() {
		t.Helper()
		if _, err := writer.ConversationCreate(t.Context(), &store.ConversationCreateParams{Title: "c", Now: t0}); err != nil {
			t.Errorf("creating a conversation: %v", err)
		}
	}
	for range 200 {
		create()
	}

	// The writer goes on while a second store on the same file backs it up.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var during atomic.Int64
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			create()
			during.Add(1)
		}
	})
	// Let some writes land before the backup: the backup must not wait for
	// the writer to pause.
	waitFor(t, func() bool { return during.Load() >= 5 })
	backer := openAt(t, src)
	dst := filepath.Join(dir, "copy.db")
	if err := backer.BackupInto(t.Context(), dst); err != nil {
		t.Fatalf("BackupInto: %v", err)
	}
	close(stop)
	wg.Wait()

	cp := openAt(t, dst)
	sum, err := cp.Inspect(t.Context())
	if err != nil {
		t.Fatalf("Inspect of the copy: %v", err)
	}
	if sum.SchemaVersion != version {
		t.Errorf("copy's schema version = %d, want the source's %d", sum.SchemaVersion, version)
	}
	if sum.Conversations < 200 || sum.Conversations > 200+during.Load() {
		t.Errorf("copy holds %d conversations, want between the 200 created before the backup and the %d created by its end", sum.Conversations, 200+during.Load())
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(time.Millisecond) // polling with a deadline
	}
}

// VACUUM INTO never writes over a file that holds something: the caller's
// refusal of an existing path has SQLite's behind it.
func TestBackupIntoRefusesAFileWithContent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openAt(t, filepath.Join(dir, "src.db"))
	if _, err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "taken")
	if err := os.WriteFile(dst, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.BackupInto(t.Context(), dst); err == nil {
		t.Fatal("BackupInto wrote over a file with content; want an error")
	}
	if b, _ := os.ReadFile(dst); string(b) != "keep me" {
		t.Fatalf("the file now holds %q, want it untouched", b)
	}
}

func TestInspect(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "a.db")
	s := openAt(t, path)
	sum, err := s.Inspect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if leases, err := s.InstanceLeases(t.Context()); err != nil || len(leases) != 0 {
		t.Fatalf("InstanceLeases of an empty file = %v, %v; want none", leases, err)
	}
	if sum.SchemaVersion != 0 || sum.Conversations != 0 {
		t.Fatalf("Inspect of an empty file = %+v, want schema 0 and nothing in it", sum)
	}
	version, err := s.Migrate(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.ConversationCreate(t.Context(), &store.ConversationCreateParams{Now: t0}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	if _, err := s.InstanceLeaseAcquire(t.Context(), &store.InstanceLeaseAcquireParams{
		InstanceID: "host-1", Holder: "h1", Host: "host", PID: 42, TTL: time.Minute, Now: now,
	}); err != nil {
		t.Fatal(err)
	}
	sum, err = s.Inspect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if sum.SchemaVersion != version || sum.Conversations != 3 {
		t.Fatalf("Inspect = %+v, want schema %d and 3 conversations", sum, version)
	}
	leases, err := s.InstanceLeases(t.Context())
	if err != nil || len(leases) != 1 {
		t.Fatalf("InstanceLeases = %v, %v; want one", leases, err)
	}
	if l := leases[0]; l.InstanceID != "host-1" || l.PID != 42 || !l.Live(now) {
		t.Fatalf("lease = %+v, want host-1's, pid 42, live", l)
	}
}

// A damaged file fails Inspect with ErrCorrupt, naming what quick_check
// found.
func TestInspectFindsDamage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "a.db")
	s := openAt(t, path)
	if _, err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	for range 300 {
		if _, err := s.ConversationCreate(t.Context(), &store.ConversationCreateParams{Title: "a title long enough to fill pages", Now: t0}); err != nil {
			t.Fatal(err)
		}
	}
	clean := filepath.Join(dir, "copy.db")
	if err := s.BackupInto(t.Context(), clean); err != nil {
		t.Fatal(err)
	}
	// Scribble over the conversations table's root page: the schema on
	// page 1 and the tables opening the store reads stay intact, so the
	// damage is for quick_check to find, wherever migrations put things.
	root, pageSize := tablePage(t, clean, "conversations")
	b, err := os.ReadFile(clean)
	if err != nil {
		t.Fatal(err)
	}
	for i := (root - 1) * pageSize; i < root*pageSize; i++ {
		b[i] = 0xA5
	}
	if err := os.WriteFile(clean, b, 0o600); err != nil {
		t.Fatal(err)
	}
	damaged, err := Open(context.Background(), Options{Path: clean})
	if err != nil {
		t.Fatalf("opening the damaged copy: %v", err)
	}
	defer damaged.Close()
	if _, err := damaged.Inspect(t.Context()); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Inspect of a damaged file: %v, want ErrCorrupt", err)
	}
}

// tablePage returns the root page number of table in the SQLite file at
// path, and the file's page size.
func tablePage(t *testing.T, path, table string) (root, pageSize int) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(`SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&root); err != nil {
		t.Fatalf("finding %s's root page: %v", table, err)
	}
	if err := db.QueryRow(`PRAGMA page_size`).Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	return root, pageSize
}
