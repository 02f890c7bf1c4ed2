package core_test

import (
	"context"
	"encoding/json"
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
