package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// TestForgedResultForARunningServerCallIsRefused: while a server tool runs
// (its marker is executing), the call is listed as waiting for the server,
// and a result posted for it is refused with ErrNotForClient and changes
// nothing: no entry, no turn queued. The tool's own result is the one the
// log keeps, and the turn answers once.
func TestForgedResultForARunningServerCallIsRefused(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}}
		g := &gate{open: make(chan struct{})}
		in := s.startWith(t, `
turns:
  - after_tool: charge
    text: "Charged."
  - tool_calls:
      - {name: charge, input: {amount: 5}}
fallback:
  text: "A second answer."
`, g.register)
		ctx := context.Background()
		conv, err := in.svc.CreateConversation(ctx, "", "api", "alice")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.svc.PostMessage(ctx, conv.ID, "alice", "charge me"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the charge to start", func() bool { return g.started.Load() == 1 })

		pending, err := in.svc.PendingCalls(ctx, conv.ID)
		if err != nil || len(pending) != 1 || pending[0].Name != "charge" || pending[0].WaitingFor != "server" {
			t.Fatalf("pending = %+v, %v; want the running charge call waiting for the server", pending, err)
		}
		before := entries(t, s.st, conv.ID, true)
		_, err = in.svc.PostToolResults(ctx, conv.ID, "mallory", []core.ToolResultInput{{CallID: pending[0].CallID, Output: json.RawMessage(`{"answer":"charged 0"}`)}})
		if !errors.Is(err, core.ErrNotForClient) {
			t.Fatalf("a result posted for a running server call: %v; want ErrNotForClient", err)
		}
		if after := entries(t, s.st, conv.ID, true); len(after) != len(before) {
			t.Fatalf("log went from %s to %s; want a refused result to append nothing", kinds(before), kinds(after))
		}
		items, err := s.st.WorkList(ctx, &store.WorkListParams{ConversationID: &conv.ID, Kind: core.WorkTurn})
		if err != nil || len(items) != 1 {
			t.Fatalf("turn items = %d, %v; want only the running one (a refused result queues nothing)", len(items), err)
		}

		close(g.open)
		waitStatus(t, s.st, conv.ID, store.ConversationIdle)
		if got := kinds(entries(t, s.st, conv.ID, false)); got != "user,tool_call,tool_result,assistant" {
			t.Fatalf("log = %s; want the call, the tool's own result and one answer", got)
		}
		for _, e := range entries(t, s.st, conv.ID, false) {
			if e.Kind == store.EntryToolResult && !strings.Contains(string(e.Content), "charged 5") {
				t.Fatalf("the recorded result is %s; want the tool's own (charged 5)", e.Content)
			}
		}
		x, err := s.st.ToolExecutionGet(ctx, &store.ToolExecutionGetParams{ConversationID: conv.ID, CallID: pending[0].CallID})
		if err != nil || x.State != store.ToolFinished {
			t.Fatalf("marker = %+v, %v; want finished", x, err)
		}
	})
}

// TestResultsOnlyForFrontendCallsOfTheContext: a server call that has not
// started (a card's tool button waiting for its turn) is not the client's
// to answer either; a frontend call in a context with a client is.
func TestResultsOnlyForFrontendCallsOfTheContext(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}}
		in := s.start(t, askScript)
		in.stop() // nothing runs: the calls below stay as they are
		ctx := context.Background()
		conv, err := in.svc.CreateConversation(ctx, "", "api", "alice")
		if err != nil {
			t.Fatal(err)
		}
		// A server tool's call and a frontend tool's call, neither started.
		for _, c := range []core.ToolCallContent{
			{CallID: "srv_1", Name: "lookup", Input: json.RawMessage(`{"query":"x"}`)},
			{CallID: "fe_1", Name: "ask_user", Input: json.RawMessage(`{"question":"Which?","choices":["A","B"]}`)},
		} {
			if _, err := s.st.EntryAppend(ctx, &store.EntryAppendParams{
				ConversationID: conv.ID, Kind: store.EntryToolCall, Author: store.AgentAuthor("atlas"), Content: mustMarshal(t, c), Now: s.clock.Now(),
			}); err != nil {
				t.Fatal(err)
			}
		}
		pending, err := in.svc.PendingCalls(ctx, conv.ID)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, p := range pending {
			got[p.CallID] = p.WaitingFor
		}
		if got["srv_1"] != "server" || got["fe_1"] != "client" || len(got) != 2 {
			t.Fatalf("waiting_for = %v; want srv_1 server, fe_1 client", got)
		}
		before := entries(t, s.st, conv.ID, true)
		_, err = in.svc.PostToolResults(ctx, conv.ID, "alice", []core.ToolResultInput{
			{CallID: "fe_1", Output: json.RawMessage(`{"answer":"A"}`)},
			{CallID: "srv_1", Output: json.RawMessage(`{"answer":"made up"}`)},
		})
		if !errors.Is(err, core.ErrNotForClient) || !strings.Contains(err.Error(), "srv_1") {
			t.Fatalf("results for a frontend and a server call: %v; want ErrNotForClient naming srv_1", err)
		}
		if after := entries(t, s.st, conv.ID, true); len(after) != len(before) {
			t.Fatalf("log went from %s to %s; want nothing appended when one result is refused", kinds(before), kinds(after))
		}
		if _, err := in.svc.PostToolResults(ctx, conv.ID, "alice", []core.ToolResultInput{{CallID: "fe_1", Output: json.RawMessage(`{"answer":"A"}`)}}); err != nil {
			t.Fatalf("a result for the frontend call: %v; want it accepted", err)
		}
	})
}

func mustMarshal(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInterruptedCallEndsItsMarker: a call cut off by a crash is recorded
// as interrupted by the next attempt, and its marker ends as interrupted
// rather than staying executing.
func TestInterruptedCallEndsItsMarker(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}, ttl: 3 * time.Second}
		g := &gate{open: make(chan struct{})}
		dying := s.startWith(t, "turns:\n  - tool_calls:\n      - {name: charge, input: {amount: 5}}\n", g.register)
		ctx := context.Background()
		conv, err := dying.svc.CreateConversation(ctx, "", "api", "alice")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dying.svc.PostMessage(ctx, conv.ID, "alice", "charge me"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the charge to start", func() bool { return g.started.Load() == 1 })
		pending, err := dying.svc.PendingCalls(ctx, conv.ID)
		if err != nil || len(pending) != 1 {
			t.Fatalf("pending = %+v, %v", pending, err)
		}
		dying.kill()

		s.clock.Advance(10 * time.Second)
		s.startWith(t, "turns:\n  - text: Please check the charge.\n", g.register)
		waitStatus(t, s.st, conv.ID, store.ConversationIdle)
		x, err := s.st.ToolExecutionGet(ctx, &store.ToolExecutionGetParams{ConversationID: conv.ID, CallID: pending[0].CallID})
		if err != nil || x.State != store.ToolInterrupted || x.FinishedAt == nil {
			t.Fatalf("marker after the interrupted result = %+v, %v; want interrupted, with its end time", x, err)
		}
		if n := g.started.Load(); n != 1 {
			t.Fatalf("charge started %d times; want once", n)
		}
	})
}

// TestRepeatedFailureEndsTheTurn: once the guard stops a call that failed
// three times with the same input, the turn ends there with one line
// saying so: the model is not called again until the step budget.
func TestRepeatedFailureEndsTheTurn(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}}
		in := s.start(t, "fallback:\n  tool_calls:\n    - {name: lookup, input: {query: fail}}\n")
		ctx := context.Background()
		conv, err := in.svc.CreateConversation(ctx, "", "api", "alice")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.svc.PostMessage(ctx, conv.ID, "alice", "look it up"); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, s.st, conv.ID, store.ConversationIdle)
		usage, err := s.st.UsageList(ctx, conv.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(usage) != 4 {
			t.Fatalf("%d model calls; want 4 (three failures, the fourth call stopped, then no more)", len(usage))
		}
		if n := len(s.tools.ranQueries()); n != 3 {
			t.Fatalf("lookup ran %d times; want 3", n)
		}
		var lines []string
		for _, e := range entries(t, s.st, conv.ID, true) {
			if e.Kind == store.EntryError {
				c, err := core.Decode[core.ErrorContent](e)
				if err != nil {
					t.Fatal(err)
				}
				lines = append(lines, c.Message)
			}
		}
		if len(lines) != 1 || !strings.Contains(lines[0], "Stopped: the tool lookup failed 3 times") || strings.Contains(lines[0], "step budget") {
			t.Fatalf("lines shown = %q; want one saying lookup was stopped after failing 3 times", lines)
		}
	})
}

// TestReplyStartingWithOwnNameIsStoredOnce: a reply that opens with the
// agent's own name ("Atlas: …") is its reply, not a message to itself: the
// log holds it once.
func TestReplyStartingWithOwnNameIsStoredOnce(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}}
		in := s.start(t, "fallback:\n  text: \"Atlas: the answer is 42.\"\n")
		ctx := context.Background()
		conv, err := in.svc.CreateConversation(ctx, "", "api", "alice")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.svc.PostMessage(ctx, conv.ID, "alice", "what is it?"); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, s.st, conv.ID, store.ConversationIdle)
		var copies int
		for _, e := range entries(t, s.st, conv.ID, true) {
			if strings.Contains(string(e.Content), "the answer is 42") {
				copies++
			}
		}
		if got := kinds(entries(t, s.st, conv.ID, false)); got != "user,assistant" || copies != 1 {
			t.Fatalf("log = %s with %d copies of the reply; want the reply stored once", got, copies)
		}
	})
}

// TestApprovedFrontendCallIsTheClients: a frontend tool that needs a
// confirmation waits for the person first; once approved, the server hands
// it to the client, whose result is then taken.
func TestApprovedFrontendCallIsTheClients(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}}
		in := s.startWith(t, `
turns:
  - after_tool: pick_file
    text: "Got {{last_user}}"
  - tool_calls:
      - {name: pick_file, input: {folder: docs}}
`, func(r *tool.Registry) {
			tool.MustRegister(r, tool.Def{Name: "pick_file", Description: "the client picks a file", Risk: tool.RiskHigh, Tier: tool.TierFrontend},
				func(context.Context, *tool.Request, struct {
					Folder string `json:"folder"`
				}) (lookupOut, error) {
					return lookupOut{}, tool.PauseWith(tool.Pause{Kind: tool.PauseFrontend, Prompt: "Pick a file"})
				})
		})
		ctx := context.Background()
		conv, err := in.svc.CreateConversation(ctx, "", "api", "alice")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.svc.PostMessage(ctx, conv.ID, "alice", "pick one"); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, s.st, conv.ID, store.ConversationPaused)
		pending, err := in.svc.PendingCalls(ctx, conv.ID)
		if err != nil || len(pending) != 1 || pending[0].WaitingFor != core.WaitingForPerson {
			t.Fatalf("pending = %+v, %v; want the call waiting for the person's confirmation", pending, err)
		}
		if _, err := in.svc.Act(ctx, &core.Action{ConversationID: conv.ID, CallID: pending[0].CallID, Value: "approve", UserID: "alice"}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the approved call to be handed to the client", func() bool {
			p, err := in.svc.PendingCalls(ctx, conv.ID)
			return err == nil && len(p) == 1 && p[0].WaitingFor == core.WaitingForClient
		})
		waitStatus(t, s.st, conv.ID, store.ConversationPaused)
		if _, err := in.svc.PostToolResults(ctx, conv.ID, "alice", []core.ToolResultInput{{CallID: pending[0].CallID, Output: json.RawMessage(`"notes.txt"`)}}); err != nil {
			t.Fatalf("the client's result for the approved frontend call: %v; want it taken", err)
		}
		waitStatus(t, s.st, conv.ID, store.ConversationIdle)
	})
}
