package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/headless"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// clock is a test clock the store and the engine share.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// instance is one "process": a service and its worker over a shared store.
type instance struct {
	svc    *core.Service
	worker *core.Worker
	cancel context.CancelFunc
	st     *mortal
}

// mortal is the store as one process sees it. kill cuts the process off, as
// kill -9 would: from then on nothing it writes lands.
type mortal struct {
	store.Store
	dead atomic.Bool
	// dieAfter, when set, is asked after each commit whether the process
	// dies right then: that commit lands, nothing after it does.
	dieAfter func() bool
}

var errKilled = errors.New("test: the process was killed")

func (m *mortal) alive() error {
	if m.dead.Load() {
		return errKilled
	}
	return nil
}

func (m *mortal) InTx(ctx context.Context, fn func(q store.Queries) error) error {
	if err := m.alive(); err != nil {
		return err
	}
	err := m.Store.InTx(ctx, fn)
	if err == nil && m.dieAfter != nil && m.dieAfter() {
		m.dead.Store(true)
	}
	return err
}

func (m *mortal) EntryAppend(ctx context.Context, p *store.EntryAppendParams) (*store.EntryAppendResult, error) {
	if err := m.alive(); err != nil {
		return nil, err
	}
	return m.Store.EntryAppend(ctx, p)
}

func (m *mortal) WorkClaim(ctx context.Context, p *store.WorkClaimParams) ([]*store.WorkItem, error) {
	if err := m.alive(); err != nil {
		return nil, err
	}
	return m.Store.WorkClaim(ctx, p)
}

func (m *mortal) WorkHeartbeat(ctx context.Context, p *store.WorkLeaseParams) (*store.WorkItem, error) {
	if err := m.alive(); err != nil {
		return nil, err
	}
	return m.Store.WorkHeartbeat(ctx, p)
}

func (m *mortal) WorkComplete(ctx context.Context, p *store.WorkLeaseParams) (*store.WorkItem, error) {
	if err := m.alive(); err != nil {
		return nil, err
	}
	return m.Store.WorkComplete(ctx, p)
}

func (m *mortal) WorkFail(ctx context.Context, p *store.WorkFailParams) (*store.WorkItem, error) {
	if err := m.alive(); err != nil {
		return nil, err
	}
	return m.Store.WorkFail(ctx, p)
}

func (m *mortal) WorkRelease(ctx context.Context, p *store.WorkLeaseParams) (*store.WorkItem, error) {
	if err := m.alive(); err != nil {
		return nil, err
	}
	return m.Store.WorkRelease(ctx, p)
}

func (m *mortal) ToolExecutionStart(ctx context.Context, p *store.ToolExecutionStartParams) (*store.ToolExecutionStartResult, error) {
	if err := m.alive(); err != nil {
		return nil, err
	}
	return m.Store.ToolExecutionStart(ctx, p)
}

func (m *mortal) ToolExecutionFinish(ctx context.Context, p *store.ToolExecutionFinishParams) (*store.ToolExecution, error) {
	if err := m.alive(); err != nil {
		return nil, err
	}
	return m.Store.ToolExecutionFinish(ctx, p)
}

func (m *mortal) ConversationSetStatus(ctx context.Context, p *store.ConversationStatusParams) (*store.Conversation, error) {
	if err := m.alive(); err != nil {
		return nil, err
	}
	return m.Store.ConversationSetStatus(ctx, p)
}

func (m *mortal) AuditRecord(ctx context.Context, r *store.AuditRecord) error {
	if err := m.alive(); err != nil {
		return err
	}
	return m.Store.AuditRecord(ctx, r)
}

type testTools struct {
	mu       sync.Mutex
	ran      []string
	reqs     []tool.Request // what each lookup call was told about itself
	riskyRan int
}

type lookupIn struct {
	Query string `json:"query"`
}
type lookupOut struct {
	Answer string `json:"answer"`
}
type riskyIn struct {
	Target string `json:"target"`
}

func registry(t *testing.T, tt *testTools) *tool.Registry {
	t.Helper()
	r := tool.NewRegistry()
	if err := headless.RegisterBuiltins(r); err != nil {
		t.Fatal(err)
	}
	if err := core.RegisterPostResult(r, cards.DefaultLibrary()); err != nil {
		t.Fatal(err)
	}
	tool.MustRegister(r, tool.Def{Name: "lookup", Description: "look something up", Risk: tool.RiskLow},
		func(ctx context.Context, req *tool.Request, in lookupIn) (lookupOut, error) {
			tt.mu.Lock()
			tt.ran = append(tt.ran, in.Query)
			tt.reqs = append(tt.reqs, *req)
			tt.mu.Unlock()
			if in.Query == "fail" {
				return lookupOut{}, errors.New("lookup backend is down")
			}
			return lookupOut{Answer: "42 for " + in.Query}, nil
		})
	tool.MustRegister(r, tool.Def{Name: "delete_everything", Description: "risky", Risk: tool.RiskHigh},
		func(ctx context.Context, _ *tool.Request, in riskyIn) (lookupOut, error) {
			tt.mu.Lock()
			tt.riskyRan++
			tt.mu.Unlock()
			return lookupOut{Answer: "deleted " + in.Target}, nil
		})
	return r
}

func writeScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

type setup struct {
	st     store.Store
	clock  *clock
	tools  *testTools
	budget int
	ttl    time.Duration
	// configure, when set, adjusts the service's options last.
	configure func(*core.Options)
	// finisher, when set, finishes the slack events taken by Accept.
	finisher core.InboundFinisher
	// workerID names the next instance started; empty for a fresh one.
	workerID string
	// dieAfter is the next instance's mortal.dieAfter.
	dieAfter func() bool
}

// start runs one instance with script as the agent's model.
func (s *setup) start(t *testing.T, script string) *instance {
	t.Helper()
	return s.startWith(t, script, nil)
}

// startWith is start with extra tools registered.
func (s *setup) startWith(t *testing.T, script string, extra func(*tool.Registry)) *instance {
	t.Helper()
	budget := s.budget
	if budget == 0 {
		budget = 25
	}
	agents := &config.Config{Agents: []config.Agent{{
		Name: "atlas", Persona: "You test things.", Model: "scripted:" + writeScript(t, script),
		MaxTokens: 1000, StepBudget: budget, Answers: config.Answers{Default: true},
	}}}
	reg := registry(t, s.tools)
	if extra != nil {
		extra(reg)
	}
	ttl := s.ttl
	if ttl == 0 {
		ttl = 30 * time.Second
	}
	st := &mortal{Store: s.st, dieAfter: s.dieAfter}
	opts := core.Options{
		Store: st, Agents: agents, Registry: reg,
		Tools:    func(c tool.ContextName) []*tool.Tool { return headless.ToolsFor(reg, c) },
		Logger:   testenv.Logger(t),
		Now:      s.clock.Now,
		LeaseTTL: ttl,
		WorkerID: s.workerID,
	}
	if s.configure != nil {
		s.configure(&opts)
	}
	svc, err := core.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if s.finisher != nil {
		svc.SetInboundFinisher("slack", s.finisher)
	}
	handlers := core.NewHandlers()
	core.AddHandler(handlers, svc.RunTurn)
	core.AddHandler(handlers, svc.RunSummarize)
	core.AddHandler(handlers, svc.RunInbound)
	core.AddHandler(handlers, svc.RunAskAnswer)
	w, err := core.NewWorker(core.WorkerOptions{
		Store: st, WorkerID: svc.WorkerID(), LeaseTTL: ttl, PollInterval: 20 * time.Millisecond,
		Handlers: handlers,
		Logger:   testenv.Logger(t), Now: s.clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	in := &instance{svc: svc, worker: w, cancel: cancel, st: st}
	t.Cleanup(in.stop)
	return in
}

// stop is a hard stop: running turns are cut off at once and released.
func (in *instance) stop() {
	in.cancel()
	_ = in.worker.Stop(context.Background())
}

// kill is kill -9: the process stops writing at once and releases nothing,
// so its leases stay until they expire or it restarts under its id.
func (in *instance) kill() {
	in.st.dead.Store(true)
	in.stop()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	// A deadline for a wait, not a speed bound: a CI machine at a load of
	// 20 on 2 cores has taken over 20 s.
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func kinds(es []*store.Entry) string {
	var out []string
	for _, e := range es {
		out = append(out, string(e.Kind))
	}
	return strings.Join(out, ",")
}

func entries(t *testing.T, st store.Store, conv uuid.UUID, withErrors bool) []*store.Entry {
	t.Helper()
	es, err := st.EntryList(context.Background(), &store.EntryListParams{ConversationID: conv, WithErrors: withErrors})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// waitStatus waits until the conversation's turn is over in the given state
// and no turn item is left to run.
func waitStatus(t *testing.T, st store.Store, conv uuid.UUID, want store.ConversationStatus) {
	t.Helper()
	waitFor(t, fmt.Sprintf("conversation %s to be %s", conv, want), func() bool {
		c, err := st.ConversationGet(context.Background(), conv)
		if err != nil || c.Status != want {
			return false
		}
		items, err := st.WorkList(context.Background(), &store.WorkListParams{
			ConversationID: &conv, States: []store.WorkState{store.WorkAvailable, store.WorkRunning},
		})
		return err == nil && len(items) == 0
	})
}

func textOf(t *testing.T, e *store.Entry) string {
	t.Helper()
	c, err := core.Decode[core.AssistantContent](e)
	if err != nil {
		t.Fatal(err)
	}
	return c.Text
}

func slackMessage(id, user, text string) *core.Inbound {
	return &core.Inbound{
		Platform: "slack", EventID: id, Workspace: "T1", Channel: "C1", Thread: "1700000000.000100",
		MessageID: id, UserID: user, UserName: user, Text: text, Mentioned: true,
	}
}

func TestPlainReplyStreamsAndRecordsUsage(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}}
		in := s.start(t, "turns:\n  - text: Hello there, I am a scripted reply.\n")
		conv, err := in.svc.CreateConversation(context.Background(), "", "api", "alice")
		if err != nil {
			t.Fatal(err)
		}
		deltas, unsubscribe := in.svc.Hub().Subscribe(conv.ID, 1024)
		defer unsubscribe()
		seq, err := in.svc.PostMessage(context.Background(), conv.ID, "alice", "hi")
		if err != nil || seq != 1 {
			t.Fatalf("PostMessage = %d, %v; want seq 1", seq, err)
		}
		waitStatus(t, s.st, conv.ID, store.ConversationIdle)
		es := entries(t, s.st, conv.ID, true)
		if got := kinds(es); got != "user,assistant" {
			t.Fatalf("log = %s, want user,assistant", got)
		}
		var streamed strings.Builder
		for done := false; !done; {
			select {
			case ev := <-deltas:
				switch ev.Kind {
				case core.EventDelta:
					streamed.WriteString(ev.Text)
				case core.EventTurnEnd:
					done = true
				}
			case <-time.After(5 * time.Second):
				t.Fatal("no turn_end event")
			}
		}
		if final := textOf(t, es[1]); streamed.String() != final || final == "" {
			t.Fatalf("streamed %q, final entry %q: the deltas must add up to the final text", streamed.String(), final)
		}
		usage, err := s.st.UsageList(context.Background(), conv.ID)
		if err != nil || len(usage) != 1 || usage[0].Provider != "scripted" {
			t.Fatalf("usage = %+v, %v; want one scripted model call recorded", usage, err)
		}
	})
}

func TestToolsRunConcurrentlyAndChartIsAttached(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}}
		in := s.start(t, `
turns:
  - text: Let me check.
    tool_calls:
      - {name: lookup, input: {query: weather}}
      - {name: lookup, input: {query: fail}}
      - {name: render_chart, input: {title: Sales, kind: line, series: [{name: s, points: [{x: 1, y: 2}, {x: 2, y: 3}]}]}}
      - {name: no_such_tool, input: {}}
  - text: Done checking.
`)
		res, err := in.svc.Submit(context.Background(), slackMessage("Ev1", "U1", "check things"))
		if err != nil || res.Ignored || res.Duplicate {
			t.Fatalf("Submit = %+v, %v", res, err)
		}
		dup, err := in.svc.Submit(context.Background(), slackMessage("Ev1", "U1", "check things"))
		if err != nil || !dup.Duplicate {
			t.Fatalf("second Submit of one event = %+v, %v; want Duplicate", dup, err)
		}
		waitStatus(t, s.st, res.ConversationID, store.ConversationIdle)
		es := entries(t, s.st, res.ConversationID, false)
		if got := kinds(es); got != "user,assistant,tool_call,tool_call,tool_call,tool_call,tool_result,tool_result,tool_result,tool_result,assistant" {
			t.Fatalf("log = %s", got)
		}
		results := map[string]core.ToolResultContent{}
		for _, e := range es {
			if e.Kind == store.EntryToolResult {
				c, _ := core.Decode[core.ToolResultContent](e)
				results[c.Name+":"+string(c.Output)] = c
			}
		}
		var sawChart, sawFail, sawUnknown bool
		for _, r := range results {
			switch {
			case r.Name == "render_chart":
				sawChart = !r.IsError && len(r.Attachments) == 1 && r.Attachments[0].MimeType == "image/png" && len(r.Attachments[0].Data) > 100
			case r.Name == "lookup" && r.IsError:
				sawFail = strings.Contains(string(r.Output), "lookup backend is down")
			case r.Name == "no_such_tool":
				sawUnknown = r.IsError
			}
		}
		if !sawChart || !sawFail || !sawUnknown {
			t.Fatalf("results = %+v; want a chart PNG attached, the handler error and the unknown tool as tool errors", results)
		}
		callIDs := map[string]bool{}
		for _, e := range es {
			if e.Kind == store.EntryToolCall {
				c, _ := core.Decode[core.ToolCallContent](e)
				callIDs[c.CallID] = true
			}
		}
		s.tools.mu.Lock()
		reqs := slices.Clone(s.tools.reqs)
		s.tools.mu.Unlock()
		if len(reqs) != 2 {
			t.Fatalf("lookup got %d requests, want one per call (2)", len(reqs))
		}
		for _, req := range reqs {
			if req.ConversationID != res.ConversationID || req.Context != tool.ContextSlack || req.Starter != "U1" ||
				req.Agent == "" || req.TurnID == uuid.Nil || !callIDs[req.CallID] {
				t.Fatalf("lookup request = %+v; want conversation %s, context slack, starter U1, the agent, the turn and a call id of the log", req, res.ConversationID)
			}
		}
		if textOf(t, es[len(es)-1]) != "Done checking." {
			t.Fatalf("final text = %q", textOf(t, es[len(es)-1]))
		}
		audit, err := s.st.AuditList(context.Background(), &store.AuditListParams{ConversationID: &res.ConversationID})
		if err != nil || len(audit) != 4 {
			t.Fatalf("audit = %d rows, %v; want one per call", len(audit), err)
		}
	})
}

const askScript = `
turns:
  - after_tool: ask_user
    text: "You chose {{last_user}}"
  - text: Let me ask.
    tool_calls:
      - {name: ask_user, input: {question: "Which colour?", choices: [Blue, Green]}}
`

func TestAskUserPausesAndResumesAfterRestart(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}}
		first := s.start(t, askScript)
		res, err := first.svc.Submit(context.Background(), slackMessage("Ev1", "U1", "pick a colour"))
		if err != nil {
			t.Fatal(err)
		}
		waitStatus(t, s.st, res.ConversationID, store.ConversationPaused)
		first.stop() // the process goes away while the question is open

		pending, err := first.svc.PendingCalls(context.Background(), res.ConversationID)
		if err != nil || len(pending) != 1 || pending[0].WaitingFor != "person" {
			t.Fatalf("pending = %+v, %v; want one call waiting for a person", pending, err)
		}
		ap, err := s.st.ApprovalFindByCall(context.Background(), &store.ApprovalFindByCallParams{ConversationID: res.ConversationID, CallID: pending[0].CallID})
		if err != nil {
			t.Fatal(err)
		}
		second := s.start(t, askScript)
		refusedResult(t, second, s.st, res.ConversationID, pending[0].CallID)
		refused, err := second.svc.Act(context.Background(), &core.Action{
			Platform: "slack", EventID: "click-1", ActionID: core.ApprovalActionID(ap.ID), Value: "1", UserID: "U2",
		})
		if err != nil || !refused.Refused {
			t.Fatalf("a click by someone else = %+v, %v; want refused", refused, err)
		}
		ok, err := second.svc.Act(context.Background(), &core.Action{
			Platform: "slack", EventID: "click-2", ActionID: core.ApprovalActionID(ap.ID), Value: "1", UserID: "U1", UserName: "alice",
		})
		if err != nil || ok.Refused || ok.Duplicate {
			t.Fatalf("the asker's click = %+v, %v", ok, err)
		}
		again, err := second.svc.Act(context.Background(), &core.Action{
			Platform: "slack", EventID: "click-3", ActionID: core.ApprovalActionID(ap.ID), Value: "0", UserID: "U1",
		})
		if err != nil || !again.Duplicate {
			t.Fatalf("a second answer = %+v, %v; want Duplicate", again, err)
		}
		waitStatus(t, s.st, res.ConversationID, store.ConversationIdle)
		es := entries(t, s.st, res.ConversationID, false)
		last := es[len(es)-1]
		if last.Kind != store.EntryAssistant || !strings.Contains(textOf(t, last), "Green") {
			t.Fatalf("log = %s, last %s; want the resumed turn to answer with the choice Green", kinds(es), last.Content)
		}
	})
}

// refusedResult checks that a result posted for a call waiting for a person
// is refused and leaves the log and the approval as they were: only the
// person's answer settles it.
func refusedResult(t *testing.T, in *instance, st store.Store, conv uuid.UUID, callID string) {
	t.Helper()
	ctx := context.Background()
	before := len(entries(t, st, conv, true))
	_, err := in.svc.PostToolResults(ctx, conv, "api", []core.ToolResultInput{{CallID: callID, Output: json.RawMessage(`{"answer":"approve"}`)}})
	if !errors.Is(err, core.ErrNeedsPerson) {
		t.Fatalf("posting a result for call %s that waits for a person: %v; want ErrNeedsPerson", callID, err)
	}
	if after := len(entries(t, st, conv, true)); after != before {
		t.Fatalf("log grew from %d to %d entries; want a refused result to append nothing", before, after)
	}
	if ap, err := st.ApprovalFindByCall(ctx, &store.ApprovalFindByCallParams{ConversationID: conv, CallID: callID}); err != nil || ap.Status != store.ApprovalPending {
		t.Fatalf("approval after the refused result = %+v, %v; want it still pending", ap, err)
	}
}

func TestConfirmDeniedAndApproved(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}}
		in := s.start(t, `
turns:
  - after_tool: delete_everything
    text: "Outcome: {{last_user}}"
  - tool_calls:
      - {name: delete_everything, input: {target: prod}}
  - tool_calls:
      - {name: delete_everything, input: {target: staging}}
`)
		for i, decision := range []string{"deny", "approve"} {
			res, err := in.svc.Submit(context.Background(), slackMessage(fmt.Sprintf("Ev%d", i), "U1", "clean up"))
			if err != nil {
				t.Fatal(err)
			}
			waitStatus(t, s.st, res.ConversationID, store.ConversationPaused)
			pending, _ := in.svc.PendingCalls(context.Background(), res.ConversationID)
			if len(pending) != 1 {
				t.Fatalf("pending = %+v; want the risky call waiting", pending)
			}
			ap, err := s.st.ApprovalFindByCall(context.Background(), &store.ApprovalFindByCallParams{ConversationID: res.ConversationID, CallID: pending[0].CallID})
			if err != nil || ap.Kind != store.ApprovalConfirm {
				t.Fatalf("approval = %+v, %v; want a confirm request", ap, err)
			}
			refusedResult(t, in, s.st, res.ConversationID, pending[0].CallID)
			if _, err := in.svc.Act(context.Background(), &core.Action{Platform: "slack", ActionID: core.ApprovalActionID(ap.ID), Value: decision, UserID: "U1"}); err != nil {
				t.Fatal(err)
			}
			waitStatus(t, s.st, res.ConversationID, store.ConversationIdle)
		}
		s.tools.mu.Lock()
		ran := s.tools.riskyRan
		s.tools.mu.Unlock()
		if ran != 1 {
			t.Fatalf("risky tool ran %d times; want once (denied once, approved once)", ran)
		}
	})
}

func TestCrashedTurnIsFinishedByAnotherWorker(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}, ttl: 3 * time.Second}
		// The first process runs a tool, then hangs in the model until it dies.
		dying := s.start(t, `
turns:
  - tool_calls:
      - {name: lookup, input: {query: first-attempt}}
  - text: never finished
    delay: 1h
`)
		conv, err := dying.svc.CreateConversation(context.Background(), "", "api", "alice")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dying.svc.PostMessage(context.Background(), conv.ID, "alice", "do it"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the first attempt's tool result", func() bool {
			return strings.Contains(kinds(entries(t, s.st, conv.ID, false)), "tool_result")
		})
		// A message arrives while the turn hangs; it must survive the retry.
		if _, err := dying.svc.PostMessage(context.Background(), conv.ID, "bob", "also this"); err != nil {
			t.Fatal(err)
		}
		dying.kill() // dies without releasing: the lease stays until it expires

		s.clock.Advance(10 * time.Second) // past the lease TTL
		s.start(t, `
turns:
  - text: The one final answer.
fallback:
  text: nothing more to add
`)
		waitStatus(t, s.st, conv.ID, store.ConversationIdle)
		es := entries(t, s.st, conv.ID, true)
		var finals []string
		var interim, users int
		for _, e := range es {
			switch e.Kind {
			case store.EntryAssistant:
				finals = append(finals, textOf(t, e))
			case store.EntryError:
				c, _ := core.Decode[core.ErrorContent](e)
				if c.Interim {
					interim++
				}
			case store.EntryUser:
				users++
			}
		}
		if got := kinds(entries(t, s.st, conv.ID, false)); got != "user,tool_call,tool_result,user,assistant" {
			t.Fatalf("log = %s; want the dead attempt's call and result kept, bob's message in place and one final answer", got)
		}
		if len(finals) != 1 || finals[0] != "The one final answer." {
			t.Fatalf("answers %q; want one final answer", finals)
		}
		if users != 2 || interim != 1 {
			t.Fatalf("users = %d, interim notices = %d; want both messages kept and one retry notice", users, interim)
		}
		if got := s.tools.ranQueries(); len(got) != 1 {
			t.Fatalf("lookup ran %d times (%q); a completed call must never run again", len(got), got)
		}
	})
}

func (tt *testTools) ranQueries() []string {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return slices.Clone(tt.ran)
}

// gate is a tool that blocks until it is opened or its context ends, and
// counts how often it was started.
type gate struct {
	started atomic.Int32
	open    chan struct{}
}

type gateIn struct {
	Amount int `json:"amount"`
}

func (g *gate) register(r *tool.Registry) {
	tool.MustRegister(r, tool.Def{Name: "charge", Description: "charges a card (side effect)", Risk: tool.RiskLow},
		func(ctx context.Context, _ *tool.Request, in gateIn) (lookupOut, error) {
			g.started.Add(1)
			select {
			case <-g.open:
				return lookupOut{Answer: fmt.Sprintf("charged %d", in.Amount)}, nil
			case <-ctx.Done():
				return lookupOut{}, ctx.Err()
			}
		})
}

// turnItem is the conversation's one turn item.
func turnItem(t *testing.T, st store.Store, conv uuid.UUID) *store.WorkItem {
	t.Helper()
	items, err := st.WorkList(context.Background(), &store.WorkListParams{ConversationID: &conv, Kind: core.WorkTurn})
	if err != nil || len(items) != 1 {
		t.Fatalf("turn items of %s = %d, %v; want one", conv, len(items), err)
	}
	return items[0]
}

func TestGracefulStopKeepsFinishedStepsAndReleasesAtOnce(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}}
		g := &gate{open: make(chan struct{})}
		first := s.startWith(t, `
turns:
  - tool_calls:
      - {name: charge, input: {amount: 5}}
  - text: never finished
    delay: 1h
`, g.register)
		conv, err := first.svc.CreateConversation(context.Background(), "", "api", "alice")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := first.svc.PostMessage(context.Background(), conv.ID, "alice", "charge me"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the charge to start", func() bool { return g.started.Load() == 1 })

		// SIGTERM: the stop lets the running call finish, then cuts the turn
		// off in its next model call when the deadline passes.
		stopCtx, deadline := context.WithCancel(context.Background())
		stopped := make(chan error, 1)
		go func() { stopped <- first.worker.Stop(stopCtx) }()
		close(g.open)
		waitFor(t, "the charge's result", func() bool {
			return strings.Contains(kinds(entries(t, s.st, conv.ID, false)), "tool_result")
		})
		deadline()
		if err := <-stopped; !errors.Is(err, context.Canceled) {
			t.Fatalf("Stop past its deadline = %v; want it to report the cut-off turn", err)
		}
		item := turnItem(t, s.st, conv.ID)
		c, err := s.st.ConversationGet(context.Background(), conv.ID)
		if err != nil {
			t.Fatal(err)
		}
		if item.State != store.WorkAvailable || item.Attempts != 0 || c.LeaseOwner != "" {
			t.Fatalf("after the stop: item %s with %d attempts, conversation lease %q; want it available at once, the attempt not counted, the lease released",
				item.State, item.Attempts, c.LeaseOwner)
		}

		// The next instance takes over without waiting out any lease (the
		// clock does not move) and resumes after the recorded charge.
		s.startWith(t, "turns:\n  - text: Charged you 5.\n", g.register)
		waitStatus(t, s.st, conv.ID, store.ConversationIdle)
		if n := g.started.Load(); n != 1 {
			t.Fatalf("charge started %d times; a call that finished before the stop must not run again", n)
		}
		if got := kinds(entries(t, s.st, conv.ID, true)); got != "user,tool_call,tool_result,assistant" {
			t.Fatalf("log = %s; want the stopped turn's steps kept, no retry notice, and the reply", got)
		}
		if item := turnItem(t, s.st, conv.ID); item.State != store.WorkDone || item.Attempts != 1 {
			t.Fatalf("turn item %s after %d attempts; want done on its first counted attempt", item.State, item.Attempts)
		}
	})
}

func TestCrashWhileToolRunsIsRecordedAndNotRerun(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}, ttl: 3 * time.Second}
		g := &gate{open: make(chan struct{})}
		dying := s.startWith(t, `
turns:
  - tool_calls:
      - {name: charge, input: {amount: 5}}
      - {name: lookup, input: {query: balance}}
`, g.register)
		conv, err := dying.svc.CreateConversation(context.Background(), "", "api", "alice")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dying.svc.PostMessage(context.Background(), conv.ID, "alice", "charge me"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the charge to start and the lookup to finish", func() bool {
			return g.started.Load() == 1 && strings.Contains(kinds(entries(t, s.st, conv.ID, false)), "tool_result")
		})
		dying.kill()

		s.clock.Advance(10 * time.Second) // another instance, after the lease TTL
		s.startWith(t, "turns:\n  - text: The charge may not have gone through; please check.\n", g.register)
		waitStatus(t, s.st, conv.ID, store.ConversationIdle)
		if n := g.started.Load(); n != 1 {
			t.Fatalf("charge started %d times; a call interrupted while it ran must not run again", n)
		}
		if got := s.tools.ranQueries(); len(got) != 1 {
			t.Fatalf("lookup ran %d times; a completed call must not run again", len(got))
		}
		var charge *core.ToolResultContent
		for _, e := range entries(t, s.st, conv.ID, false) {
			if e.Kind != store.EntryToolResult {
				continue
			}
			r, err := core.Decode[core.ToolResultContent](e)
			if err != nil {
				t.Fatal(err)
			}
			if r.Name == "charge" {
				if charge != nil {
					t.Fatal("two results for the charge call")
				}
				charge = &r
			}
		}
		if charge == nil || !charge.IsError || !strings.Contains(string(charge.Output), "interrupted") ||
			!strings.Contains(string(charge.Output), "may or may not have finished") {
			t.Fatalf("charge result = %+v; want an error result saying the call was interrupted and may or may not have finished", charge)
		}
		if got := kinds(entries(t, s.st, conv.ID, false)); got != "user,tool_call,tool_call,tool_result,tool_result,assistant" {
			t.Fatalf("log = %s; want both calls, both results and the reply", got)
		}
		if item := turnItem(t, s.st, conv.ID); item.State != store.WorkDone || item.Attempts != 2 {
			t.Fatalf("turn item %s after %d attempts; want done on the second (the crash counts)", item.State, item.Attempts)
		}
	})
}

func TestSameInstanceRestartReclaimsAtOnce(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}, workerID: "host-a"}
		dying := s.start(t, "turns:\n  - text: never finished\n    delay: 1h\n")
		conv, err := dying.svc.CreateConversation(context.Background(), "", "api", "alice")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dying.svc.PostMessage(context.Background(), conv.ID, "alice", "hi"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the turn to run", func() bool { return turnItem(t, s.st, conv.ID).State == store.WorkRunning })
		dying.kill()

		// The same instance comes back before its 30s lease could expire (the
		// clock does not move): it takes its own lease back at once.
		s.start(t, "turns:\n  - text: Back again.\n")
		waitStatus(t, s.st, conv.ID, store.ConversationIdle)
		es := entries(t, s.st, conv.ID, false)
		if len(es) != 2 || textOf(t, es[1]) != "Back again." {
			t.Fatalf("log = %s; want the reply from the restarted instance", kinds(es))
		}
	})
}

func TestTurnWithALostLeaseWritesNothing(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}}
		// The instance's worker handles only turns, and the item is held by
		// others below, so it never claims it.
		in := s.start(t, "turns:\n  - text: too late\n")
		in.stop()
		ctx := context.Background()
		conv, err := in.svc.CreateConversation(ctx, "", "api", "alice")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.svc.PostMessage(ctx, conv.ID, "alice", "hi"); err != nil {
			t.Fatal(err)
		}
		claim := func(worker string) *store.WorkItem {
			items, err := s.st.WorkClaim(ctx, &store.WorkClaimParams{Worker: worker, Kinds: []string{core.WorkTurn}, Limit: 1, LeaseTTL: 30 * time.Second, Now: s.clock.Now()})
			if err != nil || len(items) != 1 {
				t.Fatalf("claim by %s = %d items, %v; want one", worker, len(items), err)
			}
			return items[0]
		}
		stale := claim("w1")
		s.clock.Advance(31 * time.Second)
		claim("w2") // w1 went quiet; w2 took over

		err = in.svc.RunTurn(ctx, stale, core.TurnArgs{})
		if !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("RunTurn under a lease taken over = %v; want store.ErrLeaseLost", err)
		}
		if got := kinds(entries(t, s.st, conv.ID, true)); got != "user" {
			t.Fatalf("log = %s; want nothing written by the turn that lost its lease", got)
		}
	})
}

func TestStepBudgetAndModelFailure(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}, budget: 2}
		in := s.start(t, `
turns:
  - when_last_user_contains: boom
    failure: {status: 401, message: "invalid x-api-key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"}
fallback:
  tool_calls:
    - {name: lookup, input: {query: again}}
`)
		conv, _ := in.svc.CreateConversation(context.Background(), "", "api", "alice")
		if _, err := in.svc.PostMessage(context.Background(), conv.ID, "alice", "loop forever"); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, s.st, conv.ID, store.ConversationIdle)
		es := entries(t, s.st, conv.ID, true)
		last := es[len(es)-1]
		if last.Kind != store.EntryError || !strings.Contains(string(last.Content), "step budget") {
			t.Fatalf("log = %s, last = %s; want the step budget error", kinds(es), last.Content)
		}
		if n := strings.Count(kinds(es), "tool_call"); n != 2 {
			t.Fatalf("%d tool calls; want 2 (the budget)", n)
		}

		if _, err := in.svc.PostMessage(context.Background(), conv.ID, "alice", "boom"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the model failure to be recorded", func() bool {
			es := entries(t, s.st, conv.ID, true)
			return strings.Contains(string(es[len(es)-1].Content), "401")
		})
		es = entries(t, s.st, conv.ID, true)
		if msg := string(es[len(es)-1].Content); strings.Contains(msg, "abcdefghijklmnop") {
			t.Fatalf("error entry leaks the key: %s", msg)
		}
		for _, e := range entries(t, s.st, conv.ID, false) {
			if e.Kind == store.EntryError {
				t.Fatal("the context read returned an error entry")
			}
		}
	})
}

func TestResultsForCallsNotPendingAreRefused(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	s := &setup{st: st, clock: newClock(), tools: &testTools{}}
	in := s.start(t, askScript)
	conv, _ := in.svc.CreateConversation(context.Background(), "", "api", "alice")
	if _, err := in.svc.PostMessage(context.Background(), conv.ID, "alice", "ask me"); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, st, conv.ID, store.ConversationPaused)
	before := len(entries(t, st, conv.ID, true))
	_, err := in.svc.PostToolResults(context.Background(), conv.ID, "alice", []core.ToolResultInput{{CallID: "nope", Output: json.RawMessage(`{}`)}})
	if !errors.Is(err, core.ErrNotPending) {
		t.Fatalf("result for an unknown call: %v; want ErrNotPending", err)
	}
	if after := len(entries(t, st, conv.ID, true)); after != before {
		t.Fatalf("log grew from %d to %d entries: a refused result must change nothing", before, after)
	}
	// In the api context ask_user is a frontend tool: the client answers.
	pending, _ := in.svc.PendingCalls(context.Background(), conv.ID)
	if len(pending) != 1 || pending[0].WaitingFor != "client" {
		t.Fatalf("pending = %+v; want the frontend call waiting for the client", pending)
	}
	if _, err := in.svc.PostToolResults(context.Background(), conv.ID, "alice", []core.ToolResultInput{{CallID: pending[0].CallID, Output: json.RawMessage(`{"answer":"Blue"}`)}}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, st, conv.ID, store.ConversationIdle)
	es := entries(t, st, conv.ID, false)
	if !strings.Contains(textOf(t, es[len(es)-1]), "Blue") {
		t.Fatalf("final = %s; want the answer used", es[len(es)-1].Content)
	}
}

func writeFile(p, body string) error { return os.WriteFile(p, []byte(body), 0o600) }

func TestPostResultBecomesACardEntry(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	s := &setup{st: st, clock: newClock(), tools: &testTools{}}
	in := s.start(t, `
turns:
  - tool_calls:
      - name: post_result
        input:
          kind: lodging
          template: hotel
          title: Hotels in Lisbon
          items:
            - {title: Casa Azul, price: {amount: 120, currency: EUR}, rating: {value: 4.5}}
  - text: Here are two options.
`)
	res, err := in.svc.Submit(context.Background(), slackMessage("Ev1", "U1", "find hotels"))
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, st, res.ConversationID, store.ConversationIdle)
	es := entries(t, st, res.ConversationID, false)
	if got := kinds(es); got != "user,tool_call,card,tool_result,assistant" {
		t.Fatalf("log = %s; want the card entry stamped before the call's result", got)
	}
	card, err := core.Decode[core.CardContent](es[2])
	if err != nil {
		t.Fatal(err)
	}
	var stamped cards.Stamped
	if err := json.Unmarshal(card.Card, &stamped); err != nil || stamped.Layout.Name != "hotel" || len(stamped.Items) != 1 {
		t.Fatalf("stamped card = %+v, %v; want the hotel layout stamped with one item", stamped, err)
	}
	schema := string(mustTool(t, in, "post_result").Schema())
	if strings.Contains(schema, `"args":{"type":"array"`) {
		t.Fatalf("post_result schema describes args as an array: %s", schema)
	}
}

func mustTool(t *testing.T, in *instance, name string) *tool.Tool {
	t.Helper()
	reg := registry(t, &testTools{})
	tl, ok := reg.Get(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	return tl
}

// The offline demo's tool calls must pass the real tools' schemas, or the
// first thing a new user sees is a tool error.
func TestDemoScriptToolCallsAreValid(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	s := &setup{st: st, clock: newClock(), tools: &testTools{}}
	in := s.start(t, string(mustRead(t, "model/scripts/demo.yaml")))
	conv, err := in.svc.CreateConversation(context.Background(), "", "terminal", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.svc.PostMessage(context.Background(), conv.ID, "alice", "show me a chart"); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, st, conv.ID, store.ConversationIdle)
	if _, err := in.svc.PostMessage(context.Background(), conv.ID, "alice", "ask me a question"); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, st, conv.ID, store.ConversationPaused)
	var chart bool
	for _, e := range entries(t, st, conv.ID, true) {
		switch e.Kind {
		case store.EntryToolResult:
			c, _ := core.Decode[core.ToolResultContent](e)
			if c.IsError {
				t.Fatalf("demo call to %s failed: %s", c.Name, c.Output)
			}
			chart = chart || (c.Name == "render_chart" && len(c.Attachments) == 1)
		case store.EntryError:
			t.Fatalf("error entry: %s", e.Content)
		}
	}
	if !chart {
		t.Fatal("the demo drew no chart")
	}
	pending, _ := in.svc.PendingCalls(context.Background(), conv.ID)
	if len(pending) != 1 || pending[0].Name != "ask_user" || pending[0].WaitingFor != "person" {
		t.Fatalf("pending = %+v; want the demo's question waiting for a person", pending)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type emailIn struct {
	To      string `json:"to"`
	Subject string `json:"subject"`
	Body    string `json:"body,omitempty"`
	Cc      string `json:"cc,omitempty"`
	Bcc     string `json:"bcc,omitempty"`
}

// A card's tool button runs the declared tool through the guard (a risky
// send asks first), with the arguments the card shows; a signal button
// hands the click to the agent.
func TestCardButtonsActThroughTheGuard(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		s := &setup{st: st, clock: newClock(), tools: &testTools{}}
		var sent []emailIn
		var mu sync.Mutex
		script := `
turns:
  - when_last_user_contains: draft
    tool_calls:
      - name: post_result
        input:
          kind: message
          template: email
          title: Offsite dates
          items:
            - title: Offsite dates
              rows: [{label: To, value: team@example.com}]
              sections: [{text: "Shall we do 12-14 June?"}]
          actions: [{id: later, label: Remind me later, kind: signal}]
  - after_tool: send_email
    text: "Sent: {{last_user}}"
  - when_last_user_contains: clicked
    text: "You asked me to remind you later."
fallback:
  text: ok
`
		in := s.startWith(t, script, func(r *tool.Registry) {
			tool.MustRegister(r, tool.Def{Name: cards.ToolSendEmail, Description: "send an email", Risk: tool.RiskHigh},
				func(ctx context.Context, _ *tool.Request, e emailIn) (lookupOut, error) {
					mu.Lock()
					sent = append(sent, e)
					mu.Unlock()
					return lookupOut{Answer: "sent to " + e.To}, nil
				})
		})
		res, err := in.svc.Submit(context.Background(), slackMessage("Ev1", "U1", "draft an email"))
		if err != nil {
			t.Fatal(err)
		}
		waitStatus(t, st, res.ConversationID, store.ConversationIdle)
		var card *store.Entry
		for _, e := range entries(t, st, res.ConversationID, false) {
			if e.Kind == store.EntryCard {
				card = e
			}
		}
		if card == nil {
			t.Fatalf("log = %s; want a card", kinds(entries(t, st, res.ConversationID, false)))
		}

		// Send: a high-risk tool, so the click becomes an approval first.
		act, err := in.svc.Act(context.Background(), &core.Action{Platform: "slack", EventID: "c1", ActionID: cards.ActionID(card.ID, "send"), UserID: "U1"})
		if err != nil || act.Refused {
			t.Fatalf("Send click = %+v, %v", act, err)
		}
		waitStatus(t, st, res.ConversationID, store.ConversationPaused)
		pending, _ := in.svc.PendingCalls(context.Background(), res.ConversationID)
		if len(pending) != 1 || pending[0].Name != cards.ToolSendEmail || !strings.Contains(string(pending[0].Input), "team@example.com") {
			t.Fatalf("pending = %+v; want send_email waiting for approval with the card's recipient", pending)
		}
		ap, err := st.ApprovalFindByCall(context.Background(), &store.ApprovalFindByCallParams{ConversationID: res.ConversationID, CallID: pending[0].CallID})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.svc.Act(context.Background(), &core.Action{Platform: "slack", ActionID: core.ApprovalActionID(ap.ID), Value: "approve", UserID: "U1"}); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, st, res.ConversationID, store.ConversationIdle)
		mu.Lock()
		got := append([]emailIn(nil), sent...)
		mu.Unlock()
		if len(got) != 1 || got[0].To != "team@example.com" || got[0].Subject != "Offsite dates" {
			t.Fatalf("sent = %+v; want one email with what the card shows", got)
		}

		// The first click settled the card: another button of it, by
		// anyone, does nothing and says who chose what.
		late, err := in.svc.Act(context.Background(), &core.Action{Platform: "slack", EventID: "c-late", ActionID: cards.ActionID(card.ID, "later"), UserID: "U2", UserName: "bob"})
		if err != nil || !late.Duplicate || late.Settled == nil || late.Settled.ByUserID != "U1" || late.Settled.Expired {
			t.Fatalf("a click on a settled card = %+v, %v; want Duplicate, settled by U1", late, err)
		}

		// A signal button of a new card: the agent hears about the click.
		res2, err := in.svc.Submit(context.Background(), slackMessage("Ev2", "U1", "draft another"))
		if err != nil || res2.ConversationID != res.ConversationID {
			t.Fatalf("second draft = %+v, %v; want it in the same conversation", res2, err)
		}
		waitStatus(t, st, res.ConversationID, store.ConversationIdle)
		for _, e := range entries(t, st, res.ConversationID, false) {
			if e.Kind == store.EntryCard {
				card = e
			}
		}
		if _, err := in.svc.Act(context.Background(), &core.Action{Platform: "slack", EventID: "c2", ActionID: cards.ActionID(card.ID, "later"), UserID: "U1", UserName: "alice"}); err != nil {
			t.Fatal(err)
		}
		dup, err := in.svc.Act(context.Background(), &core.Action{Platform: "slack", EventID: "c2", ActionID: cards.ActionID(card.ID, "later"), UserID: "U1"})
		if err != nil || !dup.Duplicate {
			t.Fatalf("the same click again = %+v, %v; want Duplicate", dup, err)
		}
		waitStatus(t, st, res.ConversationID, store.ConversationIdle)
		es := entries(t, st, res.ConversationID, false)
		if last := es[len(es)-1]; last.Kind != store.EntryAssistant || textOf(t, last) != "You asked me to remind you later." {
			t.Fatalf("log = %s; want the agent to answer the signal", kinds(es))
		}
		if _, err := in.svc.Act(context.Background(), &core.Action{Platform: "slack", ActionID: cards.ActionID(card.ID, "nope"), UserID: "U1"}); !errors.Is(err, core.ErrInvalid) {
			t.Fatalf("a click on an action the card does not have: %v; want ErrInvalid", err)
		}
	})
}

// A thread the bot answers in is followed without a new mention; a message
// elsewhere without a mention stores nothing.
func TestEngagedThreadsNeedNoMention(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	s := &setup{st: st, clock: newClock(), tools: &testTools{}}
	in := s.start(t, "fallback:\n  text: \"echo: {{last_user}}\"\n")
	ctx := context.Background()
	first, err := in.svc.Submit(ctx, slackMessage("Ev1", "U1", "hello bot"))
	if err != nil || first.Ignored {
		t.Fatalf("mention = %+v, %v", first, err)
	}
	waitStatus(t, st, first.ConversationID, store.ConversationIdle)

	followUp := slackMessage("Ev2", "U2", "and another thing")
	followUp.Mentioned = false
	res, err := in.svc.Submit(ctx, followUp)
	if err != nil || res.Ignored || res.ConversationID != first.ConversationID {
		t.Fatalf("follow-up in the thread = %+v, %v; want it in the same conversation", res, err)
	}
	waitStatus(t, st, first.ConversationID, store.ConversationIdle)
	es := entries(t, st, first.ConversationID, false)
	if last := textOf(t, es[len(es)-1]); !strings.Contains(last, "and another thing") {
		t.Fatalf("last reply = %q; want the follow-up answered", last)
	}

	elsewhere := slackMessage("Ev3", "U2", "chatter")
	elsewhere.Mentioned, elsewhere.Thread = false, "1700000099.000100"
	res, err = in.svc.Submit(ctx, elsewhere)
	if err != nil || !res.Ignored {
		t.Fatalf("unmentioned message in another thread = %+v, %v; want Ignored", res, err)
	}
	if fresh, _ := st.InboundRecord(ctx, &store.InboundRecordParams{Platform: "slack", EventID: "Ev3", Now: time.Now()}); !fresh {
		t.Fatal("an ignored message left a dedupe row: nothing may be stored for it")
	}
}

// The README's chart example pauses on a frontend call in the API; a new
// message is answered, and the call is closed as moved on. On a platform, a
// question to the person is closed the same way.
func TestPausedConversationAnswersANewMessage(t *testing.T) {
	t.Parallel()
	demo, err := os.ReadFile(filepath.Join("model", "scripts", "demo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		s := &setup{st: st, clock: newClock(), tools: &testTools{}}
		in := s.start(t, string(demo))
		ctx := context.Background()
		conv, err := in.svc.CreateConversation(ctx, "", "api", "alice")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.svc.PostMessage(ctx, conv.ID, "alice", "show me a chart"); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, st, conv.ID, store.ConversationPaused)
		if pending, _ := in.svc.PendingCalls(ctx, conv.ID); len(pending) != 1 {
			t.Fatalf("pending = %+v; want the chart waiting for the client", pending)
		}
		if _, err := in.svc.PostMessage(ctx, conv.ID, "alice", "help"); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, st, conv.ID, store.ConversationIdle)
		es := entries(t, st, conv.ID, false)
		last := es[len(es)-1]
		if last.Kind != store.EntryAssistant || textOf(t, last) == "" {
			t.Fatalf("last entry %s %s; want the new message answered", last.Kind, last.Content)
		}
		if pending, _ := in.svc.PendingCalls(ctx, conv.ID); len(pending) != 0 {
			t.Fatalf("pending = %+v; want the chart call closed as moved on", pending)
		}

		// A question asked on a platform is closed the same way.
		if _, err := in.svc.Submit(ctx, slackMessage("EvQ1", "U1", "ask me a question")); err != nil {
			t.Fatal(err)
		}
		b, err := st.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns("slack", "T1", "C1", "1700000000.000100")})
		if err != nil {
			t.Fatal(err)
		}
		waitStatus(t, st, b.ConversationID, store.ConversationPaused)
		if _, err := in.svc.Submit(ctx, slackMessage("EvQ2", "U1", "help")); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, st, b.ConversationID, store.ConversationIdle)
		es = entries(t, st, b.ConversationID, false)
		if last := es[len(es)-1]; last.Kind != store.EntryAssistant {
			t.Fatalf("last entry %s; want the new message answered", last.Kind)
		}
		aps, err := st.ApprovalListPending(ctx, b.ConversationID)
		if err != nil || len(aps) != 0 {
			t.Fatalf("pending approvals %d (%v); want the question closed", len(aps), err)
		}
	})
}
