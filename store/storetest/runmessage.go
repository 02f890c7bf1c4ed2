package storetest

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) runMessageTests() []namedTest {
	return []namedTest{
		{"RunMessageLifecycle", s.testRunMessageLifecycle},
		{"RunMessageOneIntent", s.testRunMessageOneIntent},
	}
}

// newRunOnBinding makes a binding and a run in its conversation.
func newRunOnBinding(t *testing.T, st store.Store, clk *clock) (*store.Run, *store.Binding) {
	t.Helper()
	res, err := st.BindingEnsure(ctxFor(t), ensureParams(clk, "C1", "171.1"))
	noErr(t, err, "ensuring a binding")
	r, err := st.RunCreate(ctxFor(t), &store.RunCreateParams{ConversationID: res.Binding.ConversationID, LeadAgent: "lead", Steps: threeSteps(), Now: clk.Now()})
	noErr(t, err, "creating a run")
	return r, res.Binding
}

// testRunMessageLifecycle: the intent (posting, no message) is made once;
// the message is recorded over it, then changed only by a caller naming
// the version it read; a retried run's new intent replaces an ended
// message.
func (s suite) testRunMessageLifecycle(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	r, b := newRunOnBinding(t, st, clk)
	key := &store.RunMessageKey{RunID: r.ID, BindingID: b.ID}

	_, err := st.RunMessageGet(ctx, key)
	errIs(t, err, store.ErrNotFound, "reading the message of a run never shown")
	m, err := st.RunMessageCreate(ctx, &store.RunMessageCreateParams{RunID: r.ID, BindingID: b.ID, Platform: "slack", Kind: "stream", Now: clk.Now()})
	noErr(t, err, "recording the intent")
	eq(t, m.State, store.RunMessagePosting, "state of a new record")
	eq(t, m.MessageID, "", "message of an intent")
	eq(t, string(m.Sent), "{}", "sent of a new record")
	eq(t, m.Version, int64(1), "version of a new record")
	timeEq(t, m.CreatedAt, clk.Now(), "created at")
	_, err = st.RunMessageCreate(ctx, &store.RunMessageCreateParams{RunID: r.ID, BindingID: b.ID, Platform: "slack", Now: clk.Now()})
	errIs(t, err, store.ErrConflict, "a second intent for the same run and binding")

	sent := json.RawMessage(`{"steps":{"find":"in_progress"}}`)
	m, err = st.RunMessageSave(ctx, &store.RunMessageSaveParams{
		RunID: r.ID, BindingID: b.ID, PrevVersion: 1, Channel: "C1", MessageID: "171.2", Kind: "stream", State: store.RunMessageLive, Sent: sent, Now: clk.Advance(time.Second),
	})
	noErr(t, err, "recording the posted message")
	got, err := st.RunMessageGet(ctx, key)
	noErr(t, err, "reading the record")
	eq(t, got.MessageID, "171.2", "message id")
	eq(t, got.Channel, "C1", "channel")
	eq(t, got.State, store.RunMessageLive, "state")
	eq(t, got.Kind, "stream", "kind")
	eq(t, got.Platform, "slack", "platform")
	eq(t, got.Version, int64(2), "version after a save")
	var sentBack map[string]any
	noErr(t, json.Unmarshal(got.Sent, &sentBack), "decoding sent")
	eq(t, sentBack["steps"].(map[string]any)["find"].(string), "in_progress", "sent kept")
	timeEq(t, got.UpdatedAt, clk.Now(), "updated at")
	timeEq(t, got.CreatedAt, m.CreatedAt, "created at kept")

	// A caller that read the intent before the message was recorded
	// cannot overwrite it.
	_, err = st.RunMessageSave(ctx, &store.RunMessageSaveParams{
		RunID: r.ID, BindingID: b.ID, PrevVersion: 1, Channel: "C1", MessageID: "171.9", Kind: "stream", State: store.RunMessageLive, Now: clk.Now(),
	})
	errIs(t, err, store.ErrConflict, "saving over a message the caller did not know")

	_, err = st.RunMessageSave(ctx, &store.RunMessageSaveParams{
		RunID: r.ID, BindingID: b.ID, PrevVersion: 2, Channel: "C1", MessageID: "171.2", Kind: "text", State: store.RunMessageEnded, Now: clk.Now(),
	})
	noErr(t, err, "ending the message")
	// The run is retried: a new intent replaces the ended message.
	m, err = st.RunMessageSave(ctx, &store.RunMessageSaveParams{
		RunID: r.ID, BindingID: b.ID, PrevVersion: 3, Kind: "stream", State: store.RunMessagePosting, Now: clk.Now(),
	})
	noErr(t, err, "a new intent in place of the ended message")
	eq(t, m.MessageID, "", "message of the new intent")
	eq(t, m.State, store.RunMessagePosting, "state of the new intent")
	eq(t, m.Version, int64(4), "version of the new intent")

	_, err = st.RunMessageSave(ctx, &store.RunMessageSaveParams{RunID: r.ID, BindingID: uuid.New(), State: store.RunMessagePosting, Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "saving a record that does not exist")
	_, err = st.RunMessageCreate(ctx, &store.RunMessageCreateParams{RunID: uuid.New(), BindingID: b.ID, Platform: "slack", Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "an intent for a run that does not exist")
	_, err = st.RunMessageCreate(ctx, &store.RunMessageCreateParams{RunID: r.ID, BindingID: uuid.New(), Platform: "slack", Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "an intent on a binding that does not exist")

	for _, tc := range []struct {
		name string
		p    store.RunMessageSaveParams
	}{
		{"a live record without a message", store.RunMessageSaveParams{RunID: r.ID, BindingID: b.ID, State: store.RunMessageLive}},
		{"an unknown state", store.RunMessageSaveParams{RunID: r.ID, BindingID: b.ID, Channel: "C1", MessageID: "1", State: "gone"}},
		{"sent that is not JSON", store.RunMessageSaveParams{RunID: r.ID, BindingID: b.ID, Channel: "C1", MessageID: "1", State: store.RunMessageLive, Sent: json.RawMessage("{")}},
		{"a posting record naming a message", store.RunMessageSaveParams{RunID: r.ID, BindingID: b.ID, Channel: "C1", MessageID: "1", State: store.RunMessagePosting}},
	} {
		_, err := st.RunMessageSave(ctx, &tc.p)
		errIs(t, err, store.ErrInvalid, "%s", tc.name)
	}
	_, err = st.RunMessageCreate(ctx, &store.RunMessageCreateParams{RunID: r.ID, BindingID: b.ID})
	errIs(t, err, store.ErrInvalid, "an intent without a platform")
}

// testRunMessageOneIntent: of callers racing to show a run's first
// message on one binding, exactly one makes the intent, and of callers
// racing to change the version they all read (record a message, take
// over a stale intent), exactly one succeeds.
func (s suite) testRunMessageOneIntent(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	r, b := newRunOnBinding(t, st, clk)
	const n = 8
	var wg sync.WaitGroup
	created, saved := make([]error, n), make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, created[i] = st.RunMessageCreate(ctx, &store.RunMessageCreateParams{RunID: r.ID, BindingID: b.ID, Platform: "discord", Now: clk.Now()})
		}()
	}
	wg.Wait()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, saved[i] = st.RunMessageSave(ctx, &store.RunMessageSaveParams{
				RunID: r.ID, BindingID: b.ID, PrevVersion: 1, Channel: "C1", MessageID: "m" + string(rune('a'+i)), State: store.RunMessageLive, Now: clk.Now(),
			})
		}()
	}
	wg.Wait()
	for what, errs := range map[string][]error{"intent": created, "message recorded": saved} {
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
			} else {
				errIs(t, err, store.ErrConflict, "a racing caller that lost the %s", what)
			}
		}
		eq(t, won, 1, "callers whose %s won", what)
	}
}
