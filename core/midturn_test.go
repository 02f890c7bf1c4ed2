package core_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// TestMessageDuringTurnIsAnswered: a message B that arrives while the turn
// answering A still runs (the model streaming, or a tool running) lands in
// the log before A's reply, which was written without it. B's own turn must
// still answer it: the model is called again, is shown B after A's reply
// (the order in which the agent learnt of them), and a reply follows.
// Before the fix, B's turn found the agent's reply last in the log, took B
// for answered and ended without a model call: B was never answered.
func TestMessageDuringTurnIsAnswered(t *testing.T) {
	t.Parallel()
	const msgA, msgB = "What is the capital of France?", "And of Spain, please?"
	cases := []struct {
		name string
		// hold is the first model reply: it keeps turn A running until
		// release is closed (the stream held, or a tool held).
		hold func(release chan struct{}, g *gate) modeltest.Reply
		// running reports that turn A is held.
		running func(fake *modeltest.Fake, g *gate) bool
		// replies are the model replies after the held one: the rest of
		// turn A, then turn B.
		replies []modeltest.Reply
	}{
		{
			name: "while the model streams",
			hold: func(release chan struct{}, _ *gate) modeltest.Reply {
				return modeltest.Reply{Text: "Paris.", Block: release}
			},
			running: func(fake *modeltest.Fake, _ *gate) bool { return len(fake.Requests()) == 1 },
			replies: []modeltest.Reply{{Text: "Madrid."}},
		},
		{
			name: "while a tool runs",
			hold: func(release chan struct{}, g *gate) modeltest.Reply {
				g.open = release
				return modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "charge", Input: `{"amount":1}`}}}
			},
			running: func(_ *modeltest.Fake, g *gate) bool { return g.started.Load() == 1 },
			replies: []modeltest.Reply{{Text: "Paris."}, {Text: "Madrid."}},
		},
	}
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
				fake := modeltest.NewAnthropic(t)
				release := make(chan struct{})
				g := &gate{}
				fake.Push(tc.hold(release, g))
				fake.Push(tc.replies...)
				st := open(t)
				s := &setup{st: st, clock: newClock(), tools: &testTools{}, configure: anthropicAgent(fake)}
				in := s.startWith(t, "turns: []\n", func(r *tool.Registry) { g.register(r) })
				ctx := context.Background()
				conv, err := in.svc.CreateConversation(ctx, "", "api", "alice")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := in.svc.PostMessage(ctx, conv.ID, "alice", msgA); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "turn A to be under way", func() bool { return tc.running(fake, g) })
				seqB, err := in.svc.PostMessage(ctx, conv.ID, "alice", msgB)
				if err != nil {
					t.Fatal(err)
				}
				close(release)
				waitStatus(t, st, conv.ID, store.ConversationIdle)

				es := entries(t, st, conv.ID, false)
				var replyA *store.Entry
				for _, e := range es {
					if e.Kind == store.EntryAssistant && textOf(t, e) == "Paris." {
						replyA = e
					}
				}
				if replyA == nil || replyA.SeqValue() < seqB {
					t.Fatalf("log %s: want A's reply written after B landed (B at seq %d), the case under test", kinds(es), seqB)
				}
				last := es[len(es)-1]
				if last.Kind != store.EntryAssistant || textOf(t, last) != "Madrid." {
					t.Fatalf("log %s ends with %s %s; want a reply that answers B", kinds(es), last.Kind, last.Content)
				}
				reqs := fake.Requests()
				if fake.Pending() != 0 {
					t.Fatalf("%d model replies unused after %d requests: B's turn never called the model", fake.Pending(), len(reqs))
				}
				final := string(reqs[len(reqs)-1].Body)
				iA, iPar, iB := strings.Index(final, msgA), strings.Index(final, "Paris."), strings.Index(final, msgB)
				if iA < 0 || iPar < 0 || iB < 0 || !(iA < iPar && iPar < iB) {
					t.Fatalf("the call that answers B shows A at %d, A's reply at %d, B at %d; want all three, B after the reply that did not see it", iA, iPar, iB)
				}
				// Exactly one answer per message: nothing doubled.
				var answers []string
				for _, e := range es {
					if e.Kind == store.EntryAssistant {
						answers = append(answers, textOf(t, e))
					}
				}
				if len(answers) != 2 {
					t.Fatalf("answers %q; want one for A and one for B", answers)
				}
				items, err := st.WorkList(ctx, &store.WorkListParams{ConversationID: &conv.ID, Kind: core.WorkTurn})
				if err != nil || len(items) != 2 {
					t.Fatalf("turn items = %d (%v); want one per message", len(items), err)
				}
			})
		})
	}
}
