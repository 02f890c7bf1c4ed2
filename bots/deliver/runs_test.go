package deliver_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/deliver"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// editor is a recorder that can edit what it posted.
type editor struct {
	recorder
	updates []bots.MessageRef
}

func (e *editor) Update(ctx context.Context, ref bots.MessageRef, m *bots.Message) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.updates = append(e.updates, ref)
	return nil
}

func (e *editor) edits() []bots.MessageRef {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]bots.MessageRef(nil), e.updates...)
}

// TestRunProgressPostedOnceAcrossInstances: two instances (two
// Deliverers, each with its own store connection on one database) show
// the same run at the same moment: exactly one posts its progress message
// and the other waits for it and edits it (or, when it lost the claim
// outright, fails and its item is retried). A third, as after a restart,
// edits that message: the run never shows twice.
func TestRunProgressPostedOnceAcrossInstances(t *testing.T) {
	t.Parallel()
	for _, db := range []struct {
		name string
		open func(t *testing.T) (store.Store, store.Store)
	}{
		{"sqlite", func(t *testing.T) (store.Store, store.Store) { st := testenv.SQLite(t); return st, st }},
		{"postgres", func(t *testing.T) (store.Store, store.Store) {
			schema := testenv.PostgresSchema(t)
			return testenv.Postgres(t, schema), testenv.Postgres(t, schema)
		}},
	} {
		t.Run(db.name, func(t *testing.T) {
			st1, st2 := db.open(t)
			ctx := context.Background()
			ed := &editor{}
			newDeliverer := func(st store.Store) *deliver.Deliverer {
				d, err := deliver.New(deliver.Options{Store: st, Adapters: []bots.Adapter{ed}, Logger: testenv.Logger(t)})
				require.NoError(t, err)
				return d
			}
			d1, d2 := newDeliverer(st1), newDeliverer(st2)
			b := bind(t, st1, "C1", "1.1")
			const runs = 10
			for i := range runs {
				r, err := st1.RunCreate(ctx, &store.RunCreateParams{
					ConversationID: b.ConversationID, LeadAgent: "lead", Goal: "race",
					Steps: []store.RunStepSpec{{Key: "a", Title: "A", Agent: "scout", Class: "default"}}, Now: time.Now(),
				})
				require.NoError(t, err)
				steps, err := st1.RunStepList(ctx, r.ID)
				require.NoError(t, err)
				v := &core.RunView{Run: r, Steps: steps}
				before := len(ed.all())
				var wg sync.WaitGroup
				errs := make([]error, 2)
				for j, d := range []*deliver.Deliverer{d1, d2} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						errs[j] = d.ShowRun(ctx, v)
					}()
				}
				wg.Wait()
				require.Len(t, ed.all(), before+1, "run %d: two instances showing it at once posted %d messages, want 1", i, len(ed.all())-before)
				failed := 0
				for _, err := range errs {
					if err != nil {
						failed++
					}
				}
				// The loser either lost the claim (an error: its item is
				// retried) or came second and edited the posted message.
				require.LessOrEqual(t, failed, 1, "run %d: errors %v", i, errs)
				if failed == 0 {
					require.NotEmpty(t, ed.edits(), "run %d: neither instance failed, so the second edited", i)
				}

				// A restarted instance edits the same message.
				editsBefore := len(ed.edits())
				require.NoError(t, newDeliverer(st2).ShowRun(ctx, v))
				require.Len(t, ed.all(), before+1, "run %d: a restarted instance posted again", i)
				got := ed.edits()
				require.Len(t, got, editsBefore+1, "run %d: the restarted instance edits", i)
				require.Equal(t, ed.all()[before].ref, got[len(got)-1], "run %d: it edits the message the first instance posted", i)
			}
		})
	}
}

// TestRunProgressStaleIntentTakenOver: a first post whose answer was lost
// (the process died between the platform call and recording the message)
// leaves an intent. While it is young another process waits (its post may
// be under way); once older than a post takes, the next change takes it
// over and posts again with the same idempotency key, for the platform to
// dedupe, and later changes edit that message.
func TestRunProgressStaleIntentTakenOver(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	ctx := context.Background()
	ed := &editor{recorder: recorder{lost: true}}
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	d, err := deliver.New(deliver.Options{Store: st, Adapters: []bots.Adapter{ed}, Now: clock, Logger: testenv.Logger(t)})
	require.NoError(t, err)
	b := bind(t, st, "C1", "1.1")
	r, err := st.RunCreate(ctx, &store.RunCreateParams{
		ConversationID: b.ConversationID, LeadAgent: "lead", Steps: []store.RunStepSpec{{Key: "a", Title: "A", Agent: "scout", Class: "default"}}, Now: now,
	})
	require.NoError(t, err)
	steps, err := st.RunStepList(ctx, r.ID)
	require.NoError(t, err)
	v := &core.RunView{Run: r, Steps: steps}

	require.Error(t, d.ShowRun(ctx, v), "the first post's answer was lost")
	ed.mu.Lock()
	ed.lost = false
	ed.mu.Unlock()
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	err = d.ShowRun(short, v)
	require.ErrorIs(t, err, context.DeadlineExceeded, "a young intent is another process's post under way: waited for")
	require.Len(t, ed.all(), 1, "nothing posted beside a young intent")

	mu.Lock()
	now = now.Add(3 * time.Minute)
	mu.Unlock()
	require.NoError(t, d.ShowRun(ctx, v))
	got := ed.all()
	require.Len(t, got, 2, "the stale intent was taken over and posted again")
	require.NotEmpty(t, got[0].msg.Key)
	require.Equal(t, got[0].msg.Key, got[1].msg.Key, "the repost carries the first post's idempotency key")
	require.NoError(t, d.ShowRun(ctx, v))
	require.Len(t, ed.all(), 2, "a later change posts nothing")
	require.Equal(t, []bots.MessageRef{got[1].ref}, ed.edits(), "a later change edits the recorded message")
}
