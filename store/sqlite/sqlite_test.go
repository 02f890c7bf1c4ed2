package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/dbtemplate"
	"github.com/switchboardhq/switchboard/migrations"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/storetest"
)

// newTestStore opens and migrates a store on a fresh file under t.TempDir and
// closes it when the test ends.
func newTestStore(tb testing.TB) *Store {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "switchboard.db")
	// A copy of a migrated file: migrating each test's store took most of
	// the package's time under the race detector (see internal/dbtemplate).
	if err := dbtemplate.CopySQLite(path, migrateFile); err != nil {
		tb.Fatal(err)
	}
	s, err := Open(context.Background(), Options{Path: path})
	if err != nil {
		tb.Fatalf("opening a store on %s: %v", path, err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("closing the store: %v", err)
		}
	})
	if _, err := s.Migrate(context.Background()); err != nil {
		tb.Fatalf("migrating a fresh store: %v", err)
	}
	return s
}

// migrateFile is the dbtemplate.Migrate of this driver.
func migrateFile(path string) error {
	s, err := Open(context.Background(), Options{Path: path})
	if err != nil {
		return err
	}
	if _, err := s.Migrate(context.Background()); err != nil {
		_ = s.Close()
		return err
	}
	return s.Close()
}

var harness = storetest.Harness{
	Name: "sqlite",
	New:  func(tb testing.TB) store.Store { return newTestStore(tb) },
	NewRawInserter: func(tb testing.TB, st store.Store) func(ctx context.Context) error {
		return newRawInserter(tb, st.(*Store))
	},
}

func TestConformance(t *testing.T) {
	t.Parallel()
	h := harness
	h.TransientFault = transientFault
	h.SchemaDatabase = schemaDatabase
	storetest.Run(t, h)
}

// schemaDatabase is a fresh file; each store opened on it ships ms and
// records binary.
func schemaDatabase(tb testing.TB) func(ms []migrations.Migration, binary string) store.Store {
	path := filepath.Join(tb.TempDir(), "schema.db")
	return func(ms []migrations.Migration, binary string) store.Store {
		s, err := Open(context.Background(), Options{Path: path, BinaryVersion: binary})
		if err != nil {
			tb.Fatalf("opening a store on %s: %v", path, err)
		}
		tb.Cleanup(func() {
			if err := s.Close(); err != nil {
				tb.Errorf("closing the store: %v", err)
			}
		})
		s.d.migrations = ms
		return s
	}
}

// transientFault opens a store that gives up waiting for a lock after 1ms;
// inject takes the write lock on another connection, as a second process
// would, until end.
func transientFault(tb testing.TB, retry bool) (store.Store, func() func()) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "switchboard.db")
	opts := Options{Path: path, BusyTimeout: time.Millisecond}
	if !retry {
		opts.RetryFor = -1
	}
	s, err := Open(context.Background(), opts)
	if err != nil {
		tb.Fatalf("opening a store on %s: %v", path, err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	if _, err := s.Migrate(context.Background()); err != nil {
		tb.Fatalf("migrating a fresh store: %v", err)
	}
	other, err := sql.Open("sqlite", path)
	if err != nil {
		tb.Fatalf("opening a second connection: %v", err)
	}
	tb.Cleanup(func() { _ = other.Close() })
	return s, func() func() {
		conn, err := other.Conn(context.Background())
		if err != nil {
			tb.Fatalf("taking the second connection: %v", err)
		}
		if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
			tb.Fatalf("taking the write lock on the second connection: %v", err)
		}
		var once sync.Once
		return func() {
			once.Do(func() {
				_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
				_ = conn.Close()
			})
		}
	}
}

func TestScheduleConformance(t *testing.T) {
	t.Parallel()
	storetest.RunSchedule(t, harness)
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, harness)
}
