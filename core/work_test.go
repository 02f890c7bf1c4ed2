package core_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// The stored payload is the args' JSON, unchanged from before typed args:
// rows already queued must still decode.
func TestEnqueueStoresArgsAsBefore(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	ctx := context.Background()
	conv, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{Now: time.Now()})
	require.NoError(t, err)
	tests := []struct {
		name     string
		args     core.WorkArgs
		wantKind string
		wantJSON string
	}{
		{"turn", core.TurnArgs{TriggerSeq: 5, Reason: "message"}, "turn", `{"trigger_seq":5,"reason":"message"}`},
		{"deliver", core.DeliverArgs{}, "deliver", `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := core.Enqueue(ctx, st, tt.args, &core.EnqueueOpts{ConversationID: &conv.ID, MaxAttempts: 4, Now: time.Now()})
			require.NoError(t, err)
			require.Equal(t, tt.wantKind, res.Item.Kind, "the kind comes from Kind()")
			require.JSONEq(t, tt.wantJSON, string(res.Item.Payload), "the stored payload format must not change")
			require.Equal(t, 4, res.Item.MaxAttempts, "opts reach the store")
			require.Equal(t, conv.ID, *res.Item.ConversationID, "opts reach the store")
		})
	}
}

func TestHandlersDecodeArgsOnce(t *testing.T) {
	t.Parallel()
	hs := core.NewHandlers()
	var got []core.TurnArgs
	core.AddHandler(hs, func(_ context.Context, _ *store.WorkItem, args core.TurnArgs) error {
		got = append(got, args)
		return nil
	})
	require.Equal(t, []string{core.WorkTurn}, hs.Kinds())

	ctx := context.Background()
	item := &store.WorkItem{ID: uuid.New(), Kind: core.WorkTurn, Payload: json.RawMessage(`{"trigger_seq":7,"reason":"resume"}`)}
	require.NoError(t, hs.Run(ctx, item))
	require.Equal(t, []core.TurnArgs{{TriggerSeq: 7, Reason: "resume"}}, got)

	bad := &store.WorkItem{ID: uuid.New(), Kind: core.WorkTurn, Payload: json.RawMessage(`{"trigger_seq":"seven"}`)}
	err := hs.Run(ctx, bad)
	require.ErrorContains(t, err, "decoding the turn args of work item "+bad.ID.String())
	require.Len(t, got, 1, "a payload that does not decode must not reach the handler")

	other := &store.WorkItem{ID: uuid.New(), Kind: core.WorkDeliver, Payload: json.RawMessage(`{}`)}
	require.ErrorContains(t, hs.Run(ctx, other), `kind "deliver", which has no handler here`)

	require.Panics(t, func() {
		core.AddHandler(hs, func(context.Context, *store.WorkItem, core.TurnArgs) error { return nil })
	}, "a second handler for a kind is a wiring mistake")
}

// A worker fails an item whose payload does not decode, saying why, and
// never runs its handler.
func TestWorkerFailsUndecodableItem(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	ctx := context.Background()
	ran := make(chan struct{}, 1)
	hs := core.NewHandlers()
	core.AddHandler(hs, func(context.Context, *store.WorkItem, core.DeliverArgs) error {
		ran <- struct{}{}
		return nil
	})
	res, err := st.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: core.WorkDeliver, Payload: json.RawMessage(`[]`), MaxAttempts: 1, Now: time.Now()})
	require.NoError(t, err)

	w, err := core.NewWorker(core.WorkerOptions{Store: st, WorkerID: "w1", Handlers: hs, PollInterval: 20 * time.Millisecond, Logger: testenv.Logger(t)})
	require.NoError(t, err)
	require.NoError(t, w.Start(ctx))
	defer func() { require.NoError(t, w.Stop(ctx)) }()

	var item *store.WorkItem
	waitFor(t, "the undecodable item to fail", func() bool {
		item, err = st.WorkGet(ctx, res.Item.ID)
		require.NoError(t, err)
		return item.State == store.WorkFailed
	})
	require.Equal(t, store.WorkFailed, item.State, "an item whose args do not decode must fail")
	require.Contains(t, item.LastError, "decoding the deliver args of work item", "the failure must say what went wrong")
	select {
	case <-ran:
		t.Fatal("the handler ran on args that did not decode")
	default:
	}
}

// slowCompleteStore holds the completion of one item after its commit, and
// wakes the worker meanwhile: the moment in which the store already hands
// out the conversation's next item while the finished handler has not
// returned yet.
type slowCompleteStore struct {
	store.Store
	hold atomic.Pointer[uuid.UUID]
	wake func()
}

func (s *slowCompleteStore) WorkCompleteMany(ctx context.Context, p *store.WorkCompleteManyParams) ([]*store.WorkItem, error) {
	out, err := s.Store.WorkCompleteMany(ctx, p)
	if h := s.hold.Load(); h != nil && slices.Contains(p.IDs, *h) {
		s.wake()
		time.Sleep(300 * time.Millisecond)
	}
	return out, err
}

type nextArgs struct{}

func (nextArgs) Kind() string { return "next" }

// An item of a conversation claimed while the conversation's previous item
// is finishing here waits for that handler, then runs on its first attempt:
// it is not left to wait out its lease and be counted as a takeover.
func TestWorkerRunsNextItemOfConversationOnItsFirstAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := &slowCompleteStore{Store: testenv.SQLite(t)}
	conv, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{Now: time.Now()})
	require.NoError(t, err)

	var first *store.WorkItem
	nextRan := make(chan *store.WorkItem, 1)
	hs := core.NewHandlers()
	core.AddHandler(hs, func(ctx context.Context, it *store.WorkItem, _ probeArgs) error {
		// Queued while this item runs, so the claim cannot hand it out before
		// this one is completed.
		_, err := core.Enqueue(ctx, st.Store, nextArgs{}, &core.EnqueueOpts{ConversationID: &conv.ID, Now: time.Now()})
		return err
	})
	core.AddHandler(hs, func(_ context.Context, it *store.WorkItem, _ nextArgs) error {
		nextRan <- it
		return nil
	})
	obs := &takeoverObserver{takenOver: map[string]int{}}
	w, err := core.NewWorker(core.WorkerOptions{
		Store: st, WorkerID: "w1", Handlers: hs, LeaseTTL: 3 * time.Second, PollInterval: 20 * time.Millisecond,
		// Each kind in a lane of its own, so the next item is claimed while
		// the first one's slot is still taken.
		Lanes:    []core.Lane{{Kinds: []string{"probe"}, Concurrency: 1}, {Kinds: []string{"next"}, Concurrency: 1}},
		Logger:   testenv.Logger(t),
		Observer: obs,
	})
	require.NoError(t, err)
	st.wake = w.Wake
	res, err := core.Enqueue(ctx, st.Store, probeArgs{}, &core.EnqueueOpts{ConversationID: &conv.ID, Now: time.Now()})
	require.NoError(t, err)
	first = res.Item
	st.hold.Store(&first.ID)
	require.NoError(t, w.Start(ctx))
	defer func() { require.NoError(t, w.Stop(ctx)) }()

	select {
	case it := <-nextRan:
		require.Equal(t, 1, it.Attempts, "the conversation's next item must run on the claim that found it, not after its lease")
	case <-time.After(20 * time.Second):
		t.Fatal("the conversation's next item never ran")
	}
	require.Zero(t, obs.count("next"), "nothing was taken over")
}

// Items of one ordering key have no conversation to hold: the store hands
// out the key's next item only once the previous one is completed, which
// the worker does after its handler returned. So the next item, claimed in
// the moment between that completion and the worker's bookkeeping, runs at
// once, on its first attempt, after everything the previous handler did.
func TestWorkerRunsNextItemOfOrderingKeyAfterThePrevious(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := &slowCompleteStore{Store: testenv.SQLite(t)}
	key := "inbound/slack:T1/C1/1700000000.000100"

	var firstDone atomic.Bool
	type ran struct {
		item       *store.WorkItem
		firstDone  bool
		firstState store.WorkState
	}
	nextRan := make(chan ran, 1)
	var firstID uuid.UUID
	hs := core.NewHandlers()
	core.AddHandler(hs, func(ctx context.Context, it *store.WorkItem, _ probeArgs) error {
		// Queued while this item runs, as a second message of the thread
		// acknowledged meanwhile.
		if _, err := core.Enqueue(ctx, st.Store, nextArgs{}, &core.EnqueueOpts{OrderingKey: &key, Now: time.Now()}); err != nil {
			return err
		}
		firstDone.Store(true)
		return nil
	})
	core.AddHandler(hs, func(ctx context.Context, it *store.WorkItem, _ nextArgs) error {
		first, err := st.Store.WorkGet(ctx, firstID)
		if err != nil {
			return err
		}
		nextRan <- ran{item: it, firstDone: firstDone.Load(), firstState: first.State}
		return nil
	})
	obs := &takeoverObserver{takenOver: map[string]int{}}
	w, err := core.NewWorker(core.WorkerOptions{
		Store: st, WorkerID: "w1", Handlers: hs, LeaseTTL: 3 * time.Second, PollInterval: 20 * time.Millisecond,
		Lanes:    []core.Lane{{Kinds: []string{"probe"}, Concurrency: 1}, {Kinds: []string{"next"}, Concurrency: 1}},
		Logger:   testenv.Logger(t),
		Observer: obs,
	})
	require.NoError(t, err)
	st.wake = w.Wake
	res, err := core.Enqueue(ctx, st.Store, probeArgs{}, &core.EnqueueOpts{OrderingKey: &key, Now: time.Now()})
	require.NoError(t, err)
	firstID = res.Item.ID
	st.hold.Store(&firstID)
	require.NoError(t, w.Start(ctx))
	defer func() { require.NoError(t, w.Stop(ctx)) }()

	select {
	case r := <-nextRan:
		require.True(t, r.firstDone, "the key's next item ran before the previous item's handler had finished")
		require.Equal(t, store.WorkDone, r.firstState, "the key's next item ran while the previous item was not yet completed")
		require.Equal(t, 1, r.item.Attempts, "the key's next item must run on the claim that found it, not after its lease")
	case <-time.After(20 * time.Second):
		t.Fatal("the key's next item never ran")
	}
	require.Zero(t, obs.count("next"), "nothing was taken over")
}
