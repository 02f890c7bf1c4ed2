package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/internal/bench"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// entryReads is a store recording how many rows each EntryList called on
// it returned (reads inside a transaction are not counted).
type entryReads struct {
	store.Store
	mu    sync.Mutex
	reads []int
}

func (r *entryReads) EntryList(ctx context.Context, p *store.EntryListParams) ([]*store.Entry, error) {
	es, err := r.Store.EntryList(ctx, p)
	r.mu.Lock()
	r.reads = append(r.reads, len(es))
	r.mu.Unlock()
	return es, err
}

// take returns the rows read since the last take, and the most one read
// returned.
func (r *entryReads) take() (rows, most int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.reads {
		rows, most = rows+n, max(most, n)
	}
	r.reads = nil
	return rows, most
}

// fillChat appends n messages and answers to conv in one transaction, as
// an import or a channel's history would: no turn runs.
func fillChat(t testing.TB, st store.Store, conv uuid.UUID, n int) {
	t.Helper()
	ctx := context.Background()
	err := st.InTx(ctx, func(q store.Queries) error {
		for i := 1; i <= n; i++ {
			kind, author, content := store.EntryUser, store.UserAuthor("U2"), any(core.UserContent{Text: fmt.Sprintf("Message %d: the harbour gauge read 3.%d m this morning.", i, i%10), UserID: "U2"})
			if i%2 == 0 {
				kind, author, content = store.EntryAssistant, store.AgentAuthor("bench"), core.AssistantContent{Text: fmt.Sprintf("Reply %d: noted.", i)}
			}
			raw, _ := json.Marshal(content)
			if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: conv, Kind: kind, Author: author, Content: raw, Now: time.Now()}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("filling the log: %v", err)
	}
}

// runNext claims and runs the next item of kind, as a worker would; false
// when none is queued.
func runNext(t testing.TB, st store.Store, hs *core.Handlers, kind string) bool {
	t.Helper()
	ctx := context.Background()
	items, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: "test", Kinds: []string{kind}, Limit: 1, LeaseTTL: time.Minute, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) == 0 {
		return false
	}
	if err := hs.Run(ctx, items[0]); err != nil {
		t.Fatalf("running %s item: %v", kind, err)
	}
	if _, err := st.WorkComplete(ctx, &store.WorkLeaseParams{ID: items[0].ID, Worker: "test", Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return true
}

// TestFirstTurnOfALongLogReadsItsNewestEntries: the first turn of a
// conversation of 2,000 entries with no summary (filled without a turn, as
// an import or a channel's history is) reads a window of its newest
// entries, never the whole log, sends the model about keep_recent's worth,
// writes no summary itself and queues the summary item; that item folds
// the backlog, and the turn after it reads the summary and a short tail.
func TestFirstTurnOfALongLogReadsItsNewestEntries(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := &entryReads{Store: open(t)}
		ctx := context.Background()
		script, err := bench.WriteScript(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		svc, err := bench.TurnService(ctx, st, script, func(a *config.Agent) {
			a.Context = config.ContextSettings{SummarizeAt: 1000, KeepRecent: 200}
		})
		if err != nil {
			t.Fatal(err)
		}
		hs := core.NewHandlers()
		core.AddHandler(hs, svc.RunTurn)
		core.AddHandler(hs, svc.RunSummarize)
		conv, err := svc.CreateConversation(ctx, "", "api", "u")
		if err != nil {
			t.Fatal(err)
		}
		const n = 2000
		fillChat(t, st, conv.ID, n)
		if _, err := svc.PostMessage(ctx, conv.ID, "u", "what did the gauge read last?"); err != nil {
			t.Fatal(err)
		}
		st.take()
		if !runNext(t, st, hs, core.WorkTurn) {
			t.Fatal("no turn queued")
		}
		// The budget and a fifth, and keep_recent, is 1,400 tokens: about
		// 70 of these entries.
		if rows, most := st.take(); rows > 200 || most > 200 {
			t.Fatalf("the first turn read %d rows of the log (at most %d at once); want a window of about 70, not the %d entries", rows, most, n)
		}
		es := entries(t, st, conv.ID, false)
		if last := es[len(es)-1]; last.Kind != store.EntryAssistant || last.SeqValue() != n+2 {
			t.Fatalf("the log ends with a %s at seq %d; want the reply at %d", last.Kind, last.SeqValue(), n+2)
		}
		usage, err := st.UsageList(ctx, conv.ID)
		if err != nil || len(usage) != 1 {
			t.Fatalf("usage = %v, %v; want the turn's one model call", usage, err)
		}
		// The scripted model counts a token per four bytes of its request:
		// the whole log would be some 40,000.
		if in := usage[0].InputTokens; in > 2000 {
			t.Fatalf("the model call carried %d input tokens; want about keep_recent (200) of history, not the whole log", in)
		}
		if _, err := st.EntryLatestSummary(ctx, conv.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("after the first turn EntryLatestSummary = %v; want no summary written inline", err)
		}
		queued, err := st.WorkList(ctx, &store.WorkListParams{States: []store.WorkState{store.WorkAvailable}, Kind: core.WorkSummarize, ConversationID: &conv.ID})
		if err != nil || len(queued) != 1 {
			t.Fatalf("summary items queued = %d, %v; want the one the turn asked for", len(queued), err)
		}

		// The summary item folds the backlog (in rounds, and follow-ups).
		for runNext(t, st, hs, core.WorkSummarize) {
		}
		sum, err := st.EntryLatestSummary(ctx, conv.ID)
		if err != nil {
			t.Fatalf("no summary after the summary items ran: %v", err)
		}
		sc, err := core.Decode[core.SummaryContent](sum)
		if err != nil || sc.ThroughSeq < n-100 {
			t.Fatalf("the summary covers through seq %d (%v); want the backlog, through about %d", sc.ThroughSeq, err, n)
		}

		if _, err := svc.PostMessage(ctx, conv.ID, "u", "and now?"); err != nil {
			t.Fatal(err)
		}
		st.take()
		if !runNext(t, st, hs, core.WorkTurn) {
			t.Fatal("no turn queued")
		}
		if rows, _ := st.take(); rows > 60 {
			t.Fatalf("the turn after the summary read %d rows; want the summary's short tail", rows)
		}
	})
}

// TestApprovalBeforeTheWindowIsStillFound: a risky call waits for its
// approval, then the conversation fills with 2,000 entries of channel
// history, far past the window a turn reads. The call is still listed as
// waiting for a person, a message after the history is answered while the
// approval keeps waiting, and approving it runs the call.
func TestApprovalBeforeTheWindowIsStillFound(t *testing.T) {
	// Not parallel: it failed beside the other core tests on a loaded machine.
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}, configure: func(o *core.Options) {
			o.Agents.Agents[0].Context = config.ContextSettings{SummarizeAt: 1000, KeepRecent: 200}
		}}
		in := s.start(t, `
turns:
  - after_tool: delete_everything
    text: "Outcome: {{last_user}}"
  - when_last_user_contains: clean up
    once: true
    tool_calls:
      - {name: delete_everything, input: {target: prod}}
fallback:
  text: "echo: {{last_user}}"
`)
		ctx := context.Background()
		res, err := in.svc.Submit(ctx, slackMessage("Ev1", "U1", "clean up"))
		if err != nil {
			t.Fatal(err)
		}
		conv := res.ConversationID
		waitStatus(t, s.st, conv, store.ConversationPaused)
		fillChat(t, s.st, conv, 2000)

		pending, err := in.svc.PendingCalls(ctx, conv)
		if err != nil || len(pending) != 1 || pending[0].Name != "delete_everything" || pending[0].WaitingFor != core.WaitingForPerson {
			t.Fatalf("pending calls = %+v, %v; want the risky call, 2,000 entries back, waiting for a person", pending, err)
		}
		ap, err := s.st.ApprovalFindByCall(ctx, &store.ApprovalFindByCallParams{ConversationID: conv, CallID: pending[0].CallID})
		if err != nil {
			t.Fatal(err)
		}

		// A message after the history is answered; the approval waits on.
		if _, err := in.svc.Submit(ctx, slackMessage("Ev2", "U1", "anything new?")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the answer to the message after the history", func() bool {
			es := entries(t, s.st, conv, false)
			last := es[len(es)-1]
			return last.Kind == store.EntryAssistant && strings.Contains(textOf(t, last), "anything new?")
		})
		if again, err := in.svc.PendingCalls(ctx, conv); err != nil || len(again) != 1 || again[0].CallID != ap.CallID {
			t.Fatalf("after the answer pending calls = %+v, %v; want the risky call still waiting", again, err)
		}

		if _, err := in.svc.Act(ctx, &core.Action{Platform: "slack", ActionID: core.ApprovalActionID(ap.ID), Value: core.ChoiceAllowOnce, UserID: "U1"}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the approved call's result", func() bool {
			for _, e := range entries(t, s.st, conv, false) {
				if c, err := core.Decode[core.ToolResultContent](e); err == nil && e.Kind == store.EntryToolResult && c.CallID == ap.CallID {
					return true
				}
			}
			return false
		})
		s.tools.mu.Lock()
		ran := s.tools.riskyRan
		s.tools.mu.Unlock()
		if ran != 1 {
			t.Fatalf("the approved call ran %d times; want once", ran)
		}
	})
}
