package scheduler

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/core/mcpclient"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// fakePRs is the state behind an MCP server's read-only tool,
// list_pull_requests, whose answer a test changes.
type fakePRs struct {
	mu    sync.Mutex
	open  string
	calls int
}

func (f *fakePRs) set(s string) { f.mu.Lock(); f.open = s; f.mu.Unlock() }

// TestPulseWatchesAnMCPTool: a pulse whose checklist reads a low-risk tool
// of an MCP server makes no model call while the tool's output stays the
// same, and exactly one when it changes. A tool that is not low risk is
// refused: a pulse only reads.
func TestPulseWatchesAnMCPTool(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(testing.TB) store.Store) {
		prs := &fakePRs{open: "#12 fix login"}
		srv := mcp.NewServer(&mcp.Implementation{Name: "fake-github", Version: "1"}, nil)
		type in struct {
			Repo string `json:"repo"`
		}
		mcp.AddTool(srv, &mcp.Tool{Name: "list_pull_requests", Description: "open pull requests of a repository"},
			func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
				prs.mu.Lock()
				defer prs.mu.Unlock()
				prs.calls++
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Repo + ": " + prs.open}}}, nil, nil
			})
		mcp.AddTool(srv, &mcp.Tool{Name: "merge", Description: "merges a pull request"},
			func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
				t.Error("a pulse called a high-risk tool")
				return &mcp.CallToolResult{}, nil, nil
			})
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
		t.Cleanup(hs.Close)

		e := newEnv(t, open(t), nil)
		servers := &mcpclient.Config{Servers: map[string]*mcpclient.Server{"github": {
			Name: "github", URL: hs.URL, Risk: mcpclient.Risk{Default: tool.RiskHigh, Tools: map[string]tool.Risk{"list_pull_requests": tool.RiskLow}},
		}}}
		m, err := mcpclient.New(mcpclient.Options{Config: servers, Registry: e.reg, Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Stop(context.Background()) })
		if _, ok := e.reg.Get("github__list_pull_requests"); !ok {
			t.Fatalf("the MCP tool is not registered: %+v", m.Status())
		}
		// The pulse turn answers in one model call, without a report.
		e.backend.setRespond(func(*model.Request) *model.Response { return textResponse("noted") })

		ctx := context.Background()
		sc, err := e.sched.CreateSchedule(ctx, ScheduleParams{
			Kind: store.SchedulePulse, Agent: "ops", Name: "prs", Owner: "U1",
			Target: Target{Platform: "slack", Workspace: "T1"}, Spec: "every 30m",
			Pulse: &PulseConfig{Checklist: []ChecklistItem{
				{Item: "New pull requests to review?", Tool: "github__list_pull_requests", Args: map[string]any{"repo": "acme/app"}},
			}},
		})
		if err != nil {
			t.Fatal(err)
		}
		pulse := func() {
			t.Helper()
			e.clock.Advance(30 * time.Minute)
			if n := e.tick(); n != 1 {
				t.Fatalf("want one pulse fire, got %d", n)
			}
			e.runWork()
		}
		pulse()
		if got := e.backend.Calls(); got != 1 {
			t.Fatalf("the first pulse looks: want 1 model call, got %d", got)
		}
		pulse()
		pulse()
		if got := e.backend.Calls(); got != 1 {
			t.Fatalf("the tool's output did not change: want 0 more model calls, got %d in all", got)
		}
		prs.set("#12 fix login, #13 add billing")
		pulse()
		if got := e.backend.Calls(); got != 2 {
			t.Fatalf("the tool's output changed: want exactly 1 more model call, got %d in all", got)
		}
		prs.mu.Lock()
		calls := prs.calls
		prs.mu.Unlock()
		if calls != 4 {
			t.Fatalf("the MCP tool was called %d times, want once per pulse (4)", calls)
		}
		runs := must(e.sched.st.ScheduleRunList(ctx, &store.ScheduleRunListParams{ScheduleID: sc.ID, Limit: 0}))(t)
		if len(runs) != 4 || runs[1].Status != store.RunSkipped || runs[2].Status != store.RunSkipped {
			t.Fatalf("runs: want looked, skipped, skipped, looked (newest first), got %+v", runs)
		}
		conv := must(e.st.EntryList(ctx, &store.EntryListParams{ConversationID: *runs[0].ConversationID}))(t)
		if !strings.Contains(string(conv[0].Content), "#13 add billing") {
			t.Fatalf("the pulse's message shows the tool's output: %s", conv[0].Content)
		}

		// A high-risk tool is refused as an input.
		tl, _ := e.reg.Get("github__merge")
		if _, err := e.sched.toolInput(ctx, sc, ChecklistItem{Item: "x", Tool: tl.Name()}); err == nil || !strings.Contains(err.Error(), "high risk") {
			t.Fatalf("a high-risk tool as a pulse input: err %v, want a refusal naming its risk", err)
		}
	})
}

// TestPulseWatchesItsChannel: a pulse with the built-in source "channel"
// makes no model call while nobody writes in its channel, and exactly one
// when someone does, in the channel or one of its threads; another
// channel's messages do not count.
func TestPulseWatchesItsChannel(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(testing.TB) store.Store) {
		e := newEnv(t, open(t), nil)
		e.backend.setRespond(func(*model.Request) *model.Response { return textResponse("noted") })
		ctx := context.Background()
		say := func(channel, thread, text string) {
			t.Helper()
			b := must(e.st.BindingEnsure(ctx, &store.BindingEnsureParams{
				Place: store.Place{Platform: "slack", Workspace: "T1", Channel: channel, Thread: thread}, Now: e.clock.Now(),
			}))(t)
			must(e.st.EntryAppend(ctx, &store.EntryAppendParams{
				ConversationID: b.Binding.ConversationID, Kind: store.EntryUser, Author: store.UserAuthor("U2"),
				Content: []byte(`{"text":"` + text + `","user_name":"Ana"}`), Now: e.clock.Now(),
			}))(t)
		}
		say("C1", "", "the build is red")
		sc := must(e.sched.CreateSchedule(ctx, ScheduleParams{
			Kind: store.SchedulePulse, Agent: "ops", Name: "watch", Owner: "U1",
			Target: Target{Platform: "slack", Workspace: "T1", Channel: "C1"}, Spec: "every 30m",
			Pulse: &PulseConfig{Checklist: []ChecklistItem{{Item: "Anything new in the channel?", Source: "channel"}}},
		}))(t)
		pulse := func() {
			t.Helper()
			e.clock.Advance(30 * time.Minute)
			if n := e.tick(); n != 1 {
				t.Fatalf("want one pulse fire, got %d", n)
			}
			e.runWork()
		}
		pulse()
		if got := e.backend.Calls(); got != 1 {
			t.Fatalf("the first pulse looks: want 1 model call, got %d", got)
		}
		pulse()
		say("C2", "", "another channel")
		pulse()
		if got := e.backend.Calls(); got != 1 {
			t.Fatalf("nobody wrote in the channel: want 0 more model calls, got %d in all", got)
		}
		say("C1", "1700000000.000100", "the build is green again")
		pulse()
		if got := e.backend.Calls(); got != 2 {
			t.Fatalf("someone wrote in a thread of the channel: want exactly 1 more model call, got %d in all", got)
		}
		runs := must(e.sched.st.ScheduleRunList(ctx, &store.ScheduleRunListParams{ScheduleID: sc.ID, Limit: 0}))(t)
		conv := must(e.st.EntryList(ctx, &store.EntryListParams{ConversationID: *runs[0].ConversationID}))(t)
		if body := string(conv[0].Content); !strings.Contains(body, "Ana: the build is green again") || strings.Contains(body, "another channel") {
			t.Fatalf("the pulse's message shows %s; want the channel's new message and not the other channel's", body)
		}
		pulse()
		if got := e.backend.Calls(); got != 2 {
			t.Fatalf("nothing new since: want no more model calls, got %d in all", got)
		}
	})
}
