package core_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

type probeArgs struct{}

func (probeArgs) Kind() string { return "probe" }

// takeoverObserver records what the worker reports.
type takeoverObserver struct {
	core.NopObserver
	mu        sync.Mutex
	takenOver map[string]int
}

func (o *takeoverObserver) WorkTakenOver(_ context.Context, kind string, n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.takenOver[kind] += n
}

func (o *takeoverObserver) count(kind string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.takenOver[kind]
}

// TestWorkerObservesTakeovers: an item whose earlier attempt died holding
// its lease is reported as taken over when a worker claims it; a fresh item
// and one retried after a recorded failure are not.
func TestWorkerObservesTakeovers(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	ctx := context.Background()
	past := time.Now().Add(-time.Hour)
	enqueue := func() *store.WorkItem {
		res, err := core.Enqueue(ctx, st, probeArgs{}, &core.EnqueueOpts{Now: past})
		require.NoError(t, err)
		return res.Item
	}
	claimAs := func(worker string) *store.WorkItem {
		items, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: worker, Kinds: []string{"probe"}, Limit: 1, LeaseTTL: time.Second, Now: past})
		require.NoError(t, err)
		require.Len(t, items, 1)
		return items[0]
	}
	// Died holding its lease (which expired an hour ago).
	enqueue()
	claimAs("dead")
	// Failed once, retried: not a takeover.
	enqueue()
	failed := claimAs("dead")
	_, err := st.WorkFail(ctx, &store.WorkFailParams{ID: failed.ID, Worker: "dead", Error: "boom", RetryAt: past, Now: past})
	require.NoError(t, err)
	// Fresh.
	enqueue()

	obs := &takeoverObserver{takenOver: map[string]int{}}
	var mu sync.Mutex
	ran := 0
	hs := core.NewHandlers()
	core.AddHandler(hs, func(context.Context, *store.WorkItem, probeArgs) error {
		mu.Lock()
		defer mu.Unlock()
		ran++
		return nil
	})
	w, err := core.NewWorker(core.WorkerOptions{Store: st, WorkerID: "alive", Handlers: hs, PollInterval: 10 * time.Millisecond, Observer: obs})
	require.NoError(t, err)
	require.NoError(t, w.Start(ctx))
	defer w.Stop(ctx)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return ran == 3
	}, 10*time.Second, 5*time.Millisecond, "the worker runs the three items")
	require.Equal(t, 1, obs.count("probe"), "only the item whose lease expired under a dead attempt is a takeover")
}
