package bench_test

import (
	"testing"

	"github.com/switchboardhq/switchboard/internal/bench"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// TestQueueBurnDown: the burn-down runs every item it enqueued, once, and
// leaves nothing running or waiting, on both stores.
func TestQueueBurnDown(t *testing.T) {
	testenv.Each(t, func(t *testing.T, open func(tb testing.TB) store.Store) {
		st := open(t)
		res, err := bench.QueueBurnDown(t.Context(), bench.BurnDownOptions{Store: st, Items: 600, Workers: 16, Logger: testenv.Logger(t)})
		if err != nil {
			t.Fatalf("burning down: %v", err)
		}
		if res.Items != 600 || res.PerSecond() <= 0 {
			t.Fatalf("result %+v: want 600 items at a positive rate", res)
		}
		done, err := st.WorkList(t.Context(), &store.WorkListParams{States: []store.WorkState{store.WorkDone}, Kind: bench.KindBurnDown})
		if err != nil {
			t.Fatal(err)
		}
		if len(done) != 600 {
			t.Fatalf("items done after the burn-down: %d, want 600", len(done))
		}
		left, err := st.WorkList(t.Context(), &store.WorkListParams{States: []store.WorkState{store.WorkAvailable, store.WorkRunning}})
		if err != nil {
			t.Fatal(err)
		}
		if len(left) != 0 {
			t.Fatalf("items left available or running: %d, want 0", len(left))
		}
	})
}
