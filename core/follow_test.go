package core_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// TestFollowerReadsTheTurnAndItsAnswer: what a client that follows a
// conversation from outside (the terminal chat, an MCP call) reads through
// core instead of the store: a wake-up when the turn writes, the turn over
// once it ended, and the answer after its message: the agent's text, or,
// for a turn that failed for good, the error people were shown. A
// conversation created in a workspace is in it from the start.
func TestFollowerReadsTheTurnAndItsAnswer(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}}
		in := s.start(t, `
turns:
  - when_last_user_contains: boom
    failure: {status: 401, message: "invalid x-api-key"}
fallback:
  text: "Hello there."
`)
		ctx := context.Background()
		ws, err := s.st.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: "Acme", Kind: store.WorkspaceTeam, OwnerPersonID: uuid.New(), Now: s.clock.Now()})
		if err != nil {
			t.Fatal(err)
		}
		conv, err := in.svc.CreateConversationWith(ctx, &core.CreateConversationParams{Context: "api", Starter: "alice", WorkspaceID: &ws.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.st.ConversationWorkspace(ctx, conv.ID); err != nil || got == nil || *got != ws.ID {
			t.Fatalf("workspace of the new conversation = %v, %v; want %s", got, err, ws.ID)
		}

		wakeCtx, stopWake := context.WithCancel(ctx)
		defer stopWake()
		wake, err := in.svc.EntryWakeups(wakeCtx, conv.ID)
		if err != nil {
			t.Fatal(err)
		}
		ask := func(text string) *core.Answer {
			t.Helper()
			seq, err := in.svc.PostMessage(ctx, conv.ID, "alice", text)
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-wake:
			case <-time.After(20 * time.Second):
				t.Fatalf("no wake-up within 20s of posting %q", text)
			}
			waitFor(t, "the turn answering "+text+" to be over", func() bool {
				over, err := in.svc.TurnsOver(ctx, conv.ID)
				return err == nil && over
			})
			// The log says the turn is over once its last entry is in; the
			// worker marks the item done just after.
			waitFor(t, "the turn queue to empty after the turn answering "+text, func() bool {
				q, err := in.svc.TurnQueue(ctx, conv.ID)
				return err == nil && q.Empty()
			})
			a, err := in.svc.AnswerAfter(ctx, conv.ID, seq)
			if err != nil {
				t.Fatal(err)
			}
			return a
		}

		if a := ask("hi"); !slices.Equal(a.Texts, []string{"Hello there."}) || a.Card != nil || a.Failure != "" {
			t.Fatalf("answer to hi = %+v; want the agent's one text and no failure", a)
		}
		if a := ask("boom"); len(a.Texts) != 0 || a.Failure == "" {
			t.Fatalf("answer to a turn whose model refused the key = %+v; want no text and the error people were shown", a)
		}
	})
}

// movingQueue is a work queue whose one turn item moves on each read (to
// the next of states), as a worker claims or retries it between reads.
type movingQueue struct {
	states []store.WorkState
	reads  int
}

func (m *movingQueue) WorkList(_ context.Context, p *store.WorkListParams) ([]*store.WorkItem, error) {
	state := m.states[min(m.reads, len(m.states)-1)]
	m.reads++
	if !slices.Contains(p.States, state) {
		return nil, nil
	}
	return []*store.WorkItem{{ID: uuid.New(), Kind: core.WorkTurn, State: state}}, nil
}

// TestTurnQueueIsOneRead: a turn claimed (waiting, then running) or retried
// (running, then waiting) while the queue is read is still seen; reading
// each state apart missed it and a follower printed its prompt before the
// resumed turn's reply.
func TestTurnQueueIsOneRead(t *testing.T) {
	t.Parallel()
	for _, states := range [][]store.WorkState{
		{store.WorkAvailable, store.WorkRunning},
		{store.WorkRunning, store.WorkAvailable},
	} {
		q, err := core.ReadTurnQueue(context.Background(), &movingQueue{states: states}, uuid.New())
		if err != nil {
			t.Fatal(err)
		}
		if q.Empty() {
			t.Errorf("the turn queue read empty while its item moved %v", states)
		}
	}
}
