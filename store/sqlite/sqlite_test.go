package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/storetest"
)

// newTestStore opens and migrates a store on a fresh file under t.TempDir and
// closes it when the test ends.
func newTestStore(tb testing.TB) *Store {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "switchboard.db")
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

var harness = storetest.Harness{
	Name: "sqlite",
	New:  func(tb testing.TB) store.Store { return newTestStore(tb) },
	NewRawInserter: func(tb testing.TB, st store.Store) func(ctx context.Context) error {
		return newRawInserter(tb, st.(*Store))
	},
}

func TestConformance(t *testing.T) {
	storetest.Run(t, harness)
}

func TestScheduleConformance(t *testing.T) {
	storetest.RunSchedule(t, harness)
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, harness)
}
