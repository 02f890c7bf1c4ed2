package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is the fake clock's start: a Monday, a week before New York's 2026
// daylight saving change.
var t0 = time.Date(2026, time.March, 2, 12, 0, 0, 0, time.UTC)

// ---- stores ----

func newSQLite(t testing.TB) store.Store {
	t.Helper()
	path := testenv.SQLiteFile(t)
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: path})
	if err != nil {
		t.Fatalf("opening sqlite on %s: %v", path, err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if _, err := st.Migrate(context.Background()); err != nil {
		t.Fatalf("migrating sqlite: %v", err)
	}
	return st
}

type storeMaker struct {
	name string
	open func(t testing.TB) store.Store
}

// eachStore runs f against SQLite and (with TEST_DATABASE_URL) Postgres.
func eachStore(t *testing.T, f func(t *testing.T, open func(t testing.TB) store.Store)) {
	makers := []storeMaker{
		{"sqlite", newSQLite},
		{"postgres", func(t testing.TB) store.Store { return testenv.Postgres(t, "") }},
	}
	for _, m := range makers {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			f(t, m.open)
		})
	}
}

// ---- the model ----

// fakeBackend counts model calls and answers with respond.
type fakeBackend struct {
	mu      sync.Mutex
	calls   int
	respond func(req *model.Request) *model.Response
}

func (f *fakeBackend) Provider() string { return "scripted" }

func (f *fakeBackend) Generate(_ context.Context, req *model.Request, _ func(model.Event)) (*model.Response, error) {
	f.mu.Lock()
	f.calls++
	respond := f.respond
	f.mu.Unlock()
	if respond == nil {
		return textResponse("done"), nil
	}
	return respond(req), nil
}

func (f *fakeBackend) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *fakeBackend) setRespond(r func(req *model.Request) *model.Response) {
	f.mu.Lock()
	f.respond = r
	f.mu.Unlock()
}

func textResponse(text string) *model.Response {
	return &model.Response{
		Parts:      []model.Part{{Kind: model.PartText, Text: text}},
		StopReason: model.StopEndTurn,
		Usage:      model.Usage{InputTokens: 100, OutputTokens: 10},
	}
}

func toolResponse(name string, input any) *model.Response {
	b, _ := json.Marshal(input)
	return &model.Response{
		Parts:      []model.Part{{Kind: model.PartToolCall, CallID: "call_" + uuid.NewString()[:8], ToolName: name, Input: b}},
		StopReason: model.StopToolUse,
		Usage:      model.Usage{InputTokens: 100, OutputTokens: 10},
	}
}

// afterToolResult reports whether the request's last message carries a tool
// result (the model is asked to go on after its call).
func afterToolResult(req *model.Request) bool {
	if len(req.Messages) == 0 {
		return false
	}
	last := req.Messages[len(req.Messages)-1]
	for _, p := range last.Parts {
		if p.Kind == model.PartToolResult {
			return true
		}
	}
	return false
}

// callThenDone calls tool name with input, then ends the turn.
func callThenDone(name string, input func() any) func(req *model.Request) *model.Response {
	return func(req *model.Request) *model.Response {
		if afterToolResult(req) {
			return textResponse("done")
		}
		return toolResponse(name, input())
	}
}

// ---- the environment ----

type env struct {
	t       testing.TB
	st      store.Store
	clock   *clockwork.FakeClock
	backend *fakeBackend
	reg     *tool.Registry
	svc     *core.Service
	sched   *Scheduler
	// delivered counts deliver items run, by conversation.
	mu        sync.Mutex
	delivered map[uuid.UUID]int
}

type envOption func(*Options)

func newEnv(t testing.TB, st store.Store, clock *clockwork.FakeClock, opts ...envOption) *env {
	t.Helper()
	if clock == nil {
		clock = clockwork.NewFakeClockAt(t0)
	}
	e := &env{t: t, st: st, clock: clock, backend: &fakeBackend{}, reg: tool.NewRegistry(), delivered: map[uuid.UUID]int{}}
	agents := &config.Config{Agents: []config.Agent{
		{Name: "ops", Persona: "You run ops.", Model: "scripted:ops", StepBudget: 5, MaxTokens: 1000, Answers: config.Answers{Default: true}},
		{Name: "lite", Persona: "You run ops, cheaply.", Model: "scripted:lite", StepBudget: 5, MaxTokens: 1000},
	}}
	reg := e.reg
	if err := core.RegisterPostResult(reg, cards.DefaultLibrary()); err != nil {
		t.Fatalf("registering post_result: %v", err)
	}
	svc, err := core.New(core.Options{
		Store: st, Agents: agents, Registry: reg,
		Backend: func(*config.Agent) (model.Backend, error) { return e.backend, nil },
		Tools:   func(tool.ContextName) []*tool.Tool { return reg.List() },
		Logger:  testLogger(t), Now: clock.Now, WorkerID: "test-" + uuid.NewString()[:6],
	})
	if err != nil {
		t.Fatalf("building core: %v", err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatalf("initialising core: %v", err)
	}
	e.svc = svc
	o := Options{Store: st, Service: svc, Registry: reg, Logger: testLogger(t), Clock: clock}
	for _, f := range opts {
		f(&o)
	}
	e.sched, err = New(o)
	if err != nil {
		t.Fatalf("building the scheduler: %v", err)
	}
	if err := e.sched.RegisterTools(reg); err != nil {
		t.Fatalf("registering tools: %v", err)
	}
	return e
}

// handlers runs the scheduler's work and turns as the app does; a delivery
// is only counted.
func (e *env) handlers() *core.Handlers {
	handlers := core.NewHandlers()
	e.sched.AddHandlers(handlers)
	core.AddHandler(handlers, e.svc.RunTurn)
	core.AddHandler(handlers, func(_ context.Context, item *store.WorkItem, _ core.DeliverArgs) error {
		e.mu.Lock()
		e.delivered[*item.ConversationID]++
		e.mu.Unlock()
		return nil
	})
	return handlers
}

// runWork claims and runs every runnable item (turns, fires, checks,
// deliveries) at the current fake time until none is left, in this
// goroutine, and returns how many ran.
func (e *env) runWork() int {
	e.t.Helper()
	ctx := context.Background()
	handlers := e.handlers()
	kinds := handlers.Kinds()
	ran := 0
	for range 500 {
		items, err := e.st.WorkClaim(ctx, &store.WorkClaimParams{Worker: "test-worker", Kinds: kinds, Limit: 1, LeaseTTL: time.Minute, Now: e.clock.Now()})
		if err != nil {
			e.t.Fatalf("claiming work: %v", err)
		}
		if len(items) == 0 {
			return ran
		}
		it := items[0]
		ran++
		if err := handlers.Run(ctx, it); err != nil {
			e.t.Fatalf("running %s item %s: %v", it.Kind, it.ID, err)
		}
		if _, err := e.st.WorkComplete(ctx, &store.WorkLeaseParams{ID: it.ID, Worker: "test-worker", Now: e.clock.Now()}); err != nil {
			e.t.Fatalf("completing %s item %s: %v", it.Kind, it.ID, err)
		}
	}
	e.t.Fatal("work did not run dry after 500 items")
	return ran
}

// tick runs one dispatch pass at the current fake time.
func (e *env) tick() int {
	e.t.Helper()
	n, err := e.sched.Tick(context.Background())
	if err != nil {
		e.t.Fatalf("dispatching: %v", err)
	}
	return n
}

// conversation makes a conversation bound to a Slack channel, started by
// user, as a person talking to the agent would.
func (e *env) conversation(channel, user string) uuid.UUID {
	e.t.Helper()
	res, err := e.svc.Submit(context.Background(), &core.Inbound{
		Platform: "slack", Workspace: "T1", Channel: channel, UserID: user, Text: "hello", Mentioned: true,
		EventID: uuid.NewString(),
	})
	if err != nil {
		e.t.Fatalf("submitting a message: %v", err)
	}
	return res.ConversationID
}

// callTool runs a registered tool as the agent would in conv.
func (e *env) callTool(conv uuid.UUID, starter, name string, input any) tool.Result {
	e.t.Helper()
	tl, ok := e.reg.Get(name)
	if !ok {
		e.t.Fatalf("tool %s is not registered", name)
	}
	b, _ := json.Marshal(input)
	req := &tool.Request{CallID: "call_" + uuid.NewString()[:8], ConversationID: conv, Agent: "ops", Starter: starter, Context: tool.ContextSlack}
	return tl.Call(context.Background(), req, b)
}

// messages returns the text of the assistant entries of conv.
func (e *env) messages(conv uuid.UUID) []string {
	e.t.Helper()
	entries, err := e.st.EntryList(context.Background(), &store.EntryListParams{ConversationID: conv})
	if err != nil {
		e.t.Fatalf("listing entries of %s: %v", conv, err)
	}
	var out []string
	for _, en := range entries {
		if en.Kind == store.EntryAssistant {
			c, err := core.Decode[core.AssistantContent](en)
			if err != nil {
				e.t.Fatalf("decoding: %v", err)
			}
			out = append(out, c.Text)
		}
	}
	return out
}

// dms returns the assistant messages posted to user's DM in a workspace,
// across every conversation bound there.
func (e *env) dms(platform, workspace, user string) []string {
	e.t.Helper()
	var out []string
	for _, conv := range e.boundTo(platform, workspace, "user:"+user) {
		out = append(out, e.messages(conv)...)
	}
	return out
}

// boundTo lists the conversations bound to a channel (any thread), by
// walking every conversation the fires created.
func (e *env) boundTo(platform, workspace, channel string) []uuid.UUID {
	e.t.Helper()
	ctx := context.Background()
	items, err := e.st.WorkList(ctx, &store.WorkListParams{})
	if err != nil {
		e.t.Fatalf("listing work: %v", err)
	}
	seen := map[uuid.UUID]bool{}
	var out []uuid.UUID
	for _, it := range items {
		if it.ConversationID == nil || seen[*it.ConversationID] {
			continue
		}
		seen[*it.ConversationID] = true
		bs, err := e.st.BindingListByConversation(ctx, *it.ConversationID)
		if err != nil {
			e.t.Fatalf("listing bindings: %v", err)
		}
		for _, b := range bs {
			if ch, _ := b.Place.Columns(); b.Place.Platform == platform && b.Place.Workspace == workspace && ch == channel {
				out = append(out, b.ConversationID)
			}
		}
	}
	return out
}

func (e *env) schedule(id uuid.UUID) *store.Schedule {
	e.t.Helper()
	sc, err := e.sched.st.ScheduleGet(context.Background(), id)
	if err != nil {
		e.t.Fatalf("getting schedule %s: %v", id, err)
	}
	return sc
}

func (e *env) fires() []*store.WorkItem {
	e.t.Helper()
	items, err := e.st.WorkList(context.Background(), &store.WorkListParams{Kind: WorkFire})
	if err != nil {
		e.t.Fatalf("listing fires: %v", err)
	}
	return items
}

// ---- logging and assertions ----

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tbWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tbWriter struct{ t testing.TB }

func (w tbWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// must(f())(t) stops the test when f fails.
func must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return v
	}
}

func wantErr(t testing.TB, err, target error, doing string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: want an error matching %v, got %v", doing, target, err)
	}
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func fmtTimes(ts []time.Time) string {
	s := make([]string, len(ts))
	for i, x := range ts {
		s[i] = x.UTC().Format(time.RFC3339)
	}
	return fmt.Sprint(s)
}
