package bench_test

import (
	"testing"

	"github.com/switchboardhq/switchboard/internal/bench"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

// TestPruneFigureKeepsTheTableBounded: at -short (5 s of 500 finished items
// a second, a half-second retention, a sweep every half second) the work
// table stays near its steady state on both stores: without the sweep it
// would hold all 2,500 items, five times that.
func TestPruneFigureKeepsTheTableBounded(t *testing.T) {
	eachURL(t, func(t *testing.T, url string) {
		res, err := bench.Run(t.Context(), bench.Options{DatabaseURL: url, Short: true, Logger: testenv.Logger(t)}, []string{"prune"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 1 {
			t.Fatalf("%d results, want 1", len(res))
		}
		r := res[0]
		t.Logf("%+v", r)
		if raceEnabled {
			// Under the race detector, on a loaded machine, SQLite's one
			// writer may give the sweep no turn in 5 s: the figure ran and
			// sampled; its pace is not the race detector's.
			if r.Extra["samples"] < 1 || r.Extra["enqueued"] < 1 {
				t.Errorf("the figure sampled nothing: %v", r.Extra)
			}
			return
		}
		if r.BaselineValue != bench.PruneRate*1.0 {
			t.Errorf("steady state %v, want %d rows (500/s for 0.5 s retention + a 0.5 s period)", r.BaselineValue, bench.PruneRate)
		}
		if r.Ratio <= 0 || r.Ratio > 1.6 {
			t.Errorf("the last half's most rows %v against the steady state %v: %.2fx; want at most 1.6x", r.Value, r.BaselineValue, r.Ratio)
		}
		if r.Extra["swept"] < 1000 || r.Extra["sweeps"] < 5 {
			t.Errorf("%v sweeps deleted %v items; want most of the run's 2,500 deleted", r.Extra["sweeps"], r.Extra["swept"])
		}
		if r.Extra["enqueued"] < 2000 {
			t.Errorf("%v items enqueued in 5 s, want about 2,500", r.Extra["enqueued"])
		}
	})
}
