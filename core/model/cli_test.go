package model

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/internal/clitest"
)

// fake is the fake CLI, with a fresh state and log for the test.
func fake(t *testing.T) *clitest.Fake {
	t.Helper()
	return clitest.Build(t)
}

type cliCase struct {
	provider string
	path     func(*clitest.Fake) string
}

var cliCases = []cliCase{
	{ProviderClaudeCode, func(f *clitest.Fake) string { return f.Claude }},
	{ProviderCodex, func(f *clitest.Fake) string { return f.Codex }},
}

// newFakeCLI is a backend on the fake running scenario.
func newFakeCLI(t *testing.T, c cliCase, f *clitest.Fake, scenario string, edit func(*Options)) Backend {
	t.Helper()
	work := t.TempDir()
	o := Options{
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
		CLI:   CLIOptions{Path: c.path(f), Dir: work, Env: f.Env(scenario)},
	}
	if edit != nil {
		edit(&o)
	}
	b, err := New(Spec{Provider: c.provider, Model: "test-model"}, o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return b
}

func userReq(text string) *Request {
	return &Request{
		System:   []SystemBlock{{Text: "You are Coder.", Cache: true}},
		Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: text}}}},
		Turn:     "Current time: Mon, 01 Jan 2026 10:00 UTC.",
	}
}

func collect(evs *[]Event) func(Event) {
	return func(e Event) { *evs = append(*evs, e) }
}

func deltas(evs []Event) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Kind == EventTextDelta {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

func TestCLIStreamsText(t *testing.T) {
	for _, c := range cliCases {
		t.Run(c.provider, func(t *testing.T) {
			f := fake(t)
			b := newFakeCLI(t, c, f, "text", nil)
			var evs []Event
			resp, err := b.Generate(context.Background(), userReq("hello there"), collect(&evs))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if got, want := resp.Text(), "Echo: hello there"; got != want {
				t.Fatalf("text = %q, want %q", got, want)
			}
			if got := deltas(evs); got != resp.Text() {
				t.Errorf("streamed %q, want the final text %q", got, resp.Text())
			}
			if c.provider == ProviderClaudeCode && countKind(evs, EventTextDelta) < 2 {
				t.Errorf("claude-code text came in %d deltas, want it streamed in pieces", countKind(evs, EventTextDelta))
			}
			if len(resp.ToolCalls()) != 0 {
				t.Errorf("response has tool calls %v; the CLI runs its own", resp.ToolCalls())
			}
			if resp.Session == nil || resp.Session.ID == "" || resp.Session.Provider != c.provider {
				t.Fatalf("session = %+v, want the CLI's session id", resp.Session)
			}
			switch c.provider {
			case ProviderClaudeCode:
				want := Usage{InputTokens: 100, CachedTokens: 20, CacheWriteTokens: 5, OutputTokens: 12}
				if resp.Usage != want {
					t.Errorf("usage = %+v, want %+v", resp.Usage, want)
				}
				if !resp.CostReported || resp.CostMicroUSD != 1235 {
					t.Errorf("cost = %d (reported %v), want 1235 micro-USD from total_cost_usd", resp.CostMicroUSD, resp.CostReported)
				}
				if resp.Model != "claude-sonnet-4-5" {
					t.Errorf("model = %q, want the one the CLI reported", resp.Model)
				}
			case ProviderCodex:
				want := Usage{InputTokens: 200, CachedTokens: 1000, OutputTokens: 40, ReasoningTokens: 8}
				if resp.Usage != want {
					t.Errorf("usage = %+v, want %+v (cached split from input)", resp.Usage, want)
				}
				if resp.CostReported {
					t.Error("codex reports no cost, yet the response says it did")
				}
				if countKind(evs, EventThinkingDelta) != 1 {
					t.Errorf("reasoning item gave %d thinking deltas, want 1", countKind(evs, EventThinkingDelta))
				}
			}
			if evs[len(evs)-1].Kind != EventStop || evs[len(evs)-2].Kind != EventUsage {
				t.Errorf("the last events are %v, %v; want usage then stop", evs[len(evs)-2].Kind, evs[len(evs)-1].Kind)
			}

			calls := f.Calls(t)
			if len(calls) != 1 {
				t.Fatalf("the CLI ran %d times, want 1", len(calls))
			}
			call := calls[0]
			var want []string
			switch c.provider {
			case ProviderClaudeCode:
				want = []string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--model", "test-model", "--append-system-prompt"}
				if !strings.Contains(call.Stdin, `"type":"user"`) || !strings.Contains(call.Stdin, "hello there") {
					t.Errorf("stdin = %q, want a stream-json user message with the prompt", call.Stdin)
				}
			case ProviderCodex:
				want = []string{"exec", "--json", "-m", "test-model", "-"}
				if !strings.Contains(call.Stdin, "hello there") {
					t.Errorf("stdin = %q, want the prompt", call.Stdin)
				}
			}
			for _, w := range want {
				if !slices.Contains(call.Args, w) {
					t.Errorf("args %q lack %q", call.Args, w)
				}
			}
			if call.Resume != "" {
				t.Errorf("a first call resumed %q", call.Resume)
			}
			if call.EnvCount != len(f.Env("text")) {
				t.Errorf("the CLI saw %d environment variables, want only the %d it was given", call.EnvCount, len(f.Env("text")))
			}
		})
	}
}

func countKind(evs []Event, k EventKind) int {
	n := 0
	for _, e := range evs {
		if e.Kind == k {
			n++
		}
	}
	return n
}

func TestCLIToolCallThroughMCP(t *testing.T) {
	for _, c := range cliCases {
		t.Run(c.provider, func(t *testing.T) {
			f := fake(t)
			const token = "sbs_lookup_supersecrettokenvalue"
			url := helperMCP(t, token)
			b := newFakeCLI(t, c, f, "tool", func(o *Options) {
				o.CLI.MCP = &CLIMCP{URL: url, Token: token, Exclude: []string{"coder"}}
			})
			var evs []Event
			resp, err := b.Generate(context.Background(), userReq("ask the helper"), collect(&evs))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if !strings.HasSuffix(resp.Text(), "The helper says 42 (asked: what is 6*7?).") {
				t.Errorf("text = %q, want the answer after the tool call", resp.Text())
			}
			if len(resp.ToolCalls()) != 0 {
				t.Errorf("response has tool calls %v; the CLI ran the tool itself", resp.ToolCalls())
			}
			var start, end *Event
			for i := range evs {
				switch evs[i].Kind {
				case EventToolCallStart:
					start = &evs[i]
				case EventToolCallEnd:
					end = &evs[i]
				}
			}
			if start == nil || end == nil || !strings.Contains(start.ToolName, "helper") {
				t.Fatalf("tool events start=%+v end=%+v, want the helper call shown", start, end)
			}
			if !strings.Contains(string(end.Input), "6*7") {
				t.Errorf("tool call input = %s, want the CLI's arguments", end.Input)
			}
			call := f.Calls(t)[0]
			args := strings.Join(call.Args, " ")
			if strings.Contains(args, token) {
				t.Error("the MCP token is on the command line, where ps shows it")
			}
			if !call.MCPTokenSet {
				t.Error("the MCP token variable was not set for the CLI")
			}
			switch c.provider {
			case ProviderClaudeCode:
				for _, w := range []string{"--mcp-config", `"url":"` + url + `"`, "${SWITCHBOARD_MCP_TOKEN}", "--allowedTools mcp__switchboard", "--disallowedTools mcp__switchboard__coder"} {
					if !strings.Contains(args, w) {
						t.Errorf("args %q lack %q", args, w)
					}
				}
			case ProviderCodex:
				for _, w := range []string{`mcp_servers.switchboard.url="` + url + `"`, `mcp_servers.switchboard.bearer_token_env_var="SWITCHBOARD_MCP_TOKEN"`, `mcp_servers.switchboard.disabled_tools=["coder"]`} {
					if !strings.Contains(args, w) {
						t.Errorf("args %q lack %q", args, w)
					}
				}
			}
		})
	}
}

func TestCLIResumesSession(t *testing.T) {
	for _, c := range cliCases {
		t.Run(c.provider, func(t *testing.T) {
			f := fake(t)
			b := newFakeCLI(t, c, f, "text", nil)
			req := userReq("first question")
			first, err := b.Generate(context.Background(), req, nil)
			if err != nil {
				t.Fatalf("first Generate: %v", err)
			}
			// The next turn: the history so far, then a new message.
			req.Messages = append(req.Messages,
				Message{Role: RoleAssistant, Parts: []Part{{Kind: PartText, Text: first.Text()}}},
				Message{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "second question"}}})
			req.Session = &Session{Provider: first.Session.Provider, ID: first.Session.ID, Seen: 2, Totals: first.Session.Totals}
			second, err := b.Generate(context.Background(), req, nil)
			if err != nil {
				t.Fatalf("second Generate: %v", err)
			}
			if second.Usage != first.Usage {
				t.Errorf("the resumed call's usage = %+v, want the same as the first call's %+v (not the session's totals)", second.Usage, first.Usage)
			}
			if c.provider == ProviderCodex && (second.Session.Totals == nil || second.Session.Totals.OutputTokens != 80) {
				t.Errorf("the session's totals after two calls = %+v, want 80 output tokens", second.Session.Totals)
			}
			if second.Text() != "Echo: second question" {
				t.Errorf("second text = %q", second.Text())
			}
			if second.Session == nil || second.Session.ID != first.Session.ID {
				t.Errorf("second session = %+v, want the resumed %q", second.Session, first.Session.ID)
			}
			calls := f.Calls(t)
			if len(calls) != 2 {
				t.Fatalf("the CLI ran %d times, want 2", len(calls))
			}
			if calls[1].Resume != first.Session.ID {
				t.Errorf("second call resumed %q, want %q (args %q)", calls[1].Resume, first.Session.ID, calls[1].Args)
			}
			if strings.Contains(calls[1].Stdin, "first question") {
				t.Errorf("a resumed call sent the history again: %q", calls[1].Stdin)
			}
			if !strings.Contains(calls[1].Stdin, "second question") {
				t.Errorf("a resumed call did not send the new message: %q", calls[1].Stdin)
			}
			// Another backend's session is never resumed.
			req.Session = &Session{Provider: "other", ID: first.Session.ID, Seen: 2}
			if _, err := b.Generate(context.Background(), req, nil); err != nil {
				t.Fatal(err)
			}
			if calls := f.Calls(t); calls[2].Resume != "" || !strings.Contains(calls[2].Stdin, "first question") {
				t.Errorf("a session of another provider was resumed: %+v", calls[2])
			}
		})
	}
}

func TestCLILostSessionStartsAgainWithHistory(t *testing.T) {
	for _, c := range cliCases {
		t.Run(c.provider, func(t *testing.T) {
			f := fake(t)
			b := newFakeCLI(t, c, f, "text", nil)
			req := userReq("first question")
			req.Messages = append(req.Messages,
				Message{Role: RoleAssistant, Parts: []Part{{Kind: PartText, Text: "first answer"}}},
				Message{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "second question"}}})
			req.Session = &Session{Provider: c.provider, ID: "0badf00d-0000-0000-0000-000000000000", Seen: 2}
			resp, err := b.Generate(context.Background(), req, nil)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if resp.Session == nil || resp.Session.ID == req.Session.ID {
				t.Errorf("session = %+v, want a new one", resp.Session)
			}
			calls := f.Calls(t)
			if len(calls) != 2 || calls[0].Resume == "" || calls[1].Resume != "" {
				t.Fatalf("calls = %+v, want a failed resume then a new session", calls)
			}
			if !strings.Contains(calls[1].Stdin, "first question") || !strings.Contains(calls[1].Stdin, "first answer") {
				t.Errorf("the new session was not given the history: %q", calls[1].Stdin)
			}
		})
	}
}

func TestCLICrashMidStreamIsRetried(t *testing.T) {
	for _, c := range cliCases {
		t.Run(c.provider, func(t *testing.T) {
			f := fake(t)
			b := newFakeCLI(t, c, f, "crash_once", nil)
			var evs []Event
			resp, err := b.Generate(context.Background(), userReq("hello"), collect(&evs))
			if err != nil {
				t.Fatalf("Generate after one crash: %v", err)
			}
			if resp.Text() != "Echo: hello" {
				t.Errorf("text = %q", resp.Text())
			}
			if n := len(f.Calls(t)); n != 2 {
				t.Errorf("the CLI ran %d times, want 2 (a crash, then the retry)", n)
			}
			if countKind(evs, EventRestart) != 1 {
				t.Errorf("%d restart events, want 1 so viewers drop the crashed attempt's text", countKind(evs, EventRestart))
			}
		})
	}
}

func TestCLICrashAlwaysFailsRetryableAndRedacted(t *testing.T) {
	for _, c := range cliCases {
		t.Run(c.provider, func(t *testing.T) {
			f := fake(t)
			b := newFakeCLI(t, c, f, "crash", nil)
			_, err := b.Generate(context.Background(), userReq("hello"), nil)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if !e.Retryable || e.Attempts != DefaultMaxAttempts || !errors.Is(err, ErrStreamIncomplete) {
				t.Errorf("err = %v (retryable %v, attempts %d), want a retryable incomplete stream after %d attempts", err, e.Retryable, e.Attempts, DefaultMaxAttempts)
			}
			msg := err.Error()
			if !strings.Contains(msg, "the fake crashed") || !strings.Contains(msg, "exit status") {
				t.Errorf("message %q lacks the CLI's stderr and exit status", msg)
			}
			if strings.Contains(msg, "abcdefghijklmnopqrstuvwxyz0123456789") {
				t.Errorf("message %q leaks the key from stderr", msg)
			}
		})
	}
}

func TestCLIHangTimesOutAndKillsChildren(t *testing.T) {
	for _, c := range cliCases {
		t.Run(c.provider, func(t *testing.T) {
			f := fake(t)
			b := newFakeCLI(t, c, f, "hang", func(o *Options) {
				o.CLI.IdleTimeout = 500 * time.Millisecond
				o.Retry.MaxAttempts = 1
			})
			start := time.Now()
			_, err := b.Generate(context.Background(), userReq("hello"), nil)
			if !errors.Is(err, ErrStreamStalled) || !IsRetryable(err) {
				t.Fatalf("err = %v, want a retryable stall", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("a hang took %s to fail with a 500ms idle timeout", d)
			}
			waitGone(t, f)
		})
	}
}

func TestCLITimeoutIsNotRetried(t *testing.T) {
	f := fake(t)
	b := newFakeCLI(t, cliCases[0], f, "hang", func(o *Options) { o.CLI.Timeout = 500 * time.Millisecond })
	_, err := b.Generate(context.Background(), userReq("hello"), nil)
	var e *Error
	if !errors.As(err, &e) || e.Retryable || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("err = %v, want a non-retryable error naming the time limit", err)
	}
	if n := len(f.Calls(t)); n != 1 {
		t.Errorf("the CLI ran %d times; a call that hit its time limit is not run again", n)
	}
	waitGone(t, f)
}

// A CLI that answered in full but does not exit is killed after the idle
// timeout, and its answer stands.
func TestCLILingeringProcessIsKilled(t *testing.T) {
	for _, c := range cliCases {
		t.Run(c.provider, func(t *testing.T) {
			f := fake(t)
			b := newFakeCLI(t, c, f, "linger", func(o *Options) {
				o.CLI.IdleTimeout = 500 * time.Millisecond
				o.Retry.MaxAttempts = 1
			})
			resp, err := b.Generate(context.Background(), userReq("hello"), nil)
			if err != nil || resp.Text() != "Echo: hello" {
				t.Fatalf("Generate = %v, %v; want the answer it gave before lingering", resp, err)
			}
			waitGone(t, f)
		})
	}
}

func TestCLICancelKillsProcessGroup(t *testing.T) {
	for _, c := range cliCases {
		t.Run(c.provider, func(t *testing.T) {
			f := fake(t)
			b := newFakeCLI(t, c, f, "hang", nil)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := b.Generate(ctx, userReq("hello"), nil)
				done <- err
			}()
			childPID(t, f) // the CLI is running, with a child of its own
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) || IsRetryable(err) {
					t.Errorf("err = %v, want context.Canceled, not retryable", err)
				}
			case <-time.After(2 * time.Second):
				t.Fatal("Generate did not return within 2s of the cancel")
			}
			waitGone(t, f)
		})
	}
}

// childPID waits for the hanging fake to record its child's pid.
func childPID(t *testing.T, f *clitest.Fake) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if raw, err := os.ReadFile(filepath.Join(f.State, "child.pid")); err == nil && len(raw) > 0 {
			pid, err := strconv.Atoi(string(raw))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the fake CLI never started its child")
	return 0
}

// waitGone checks the fake's child process is gone within 2s.
func waitGone(t *testing.T, f *clitest.Fake) {
	t.Helper()
	pid := childPID(t, f)
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		// A killed child of a killed parent is reaped by init; until then
		// it is a zombie, which counts as gone.
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) || zombie(pid) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("the CLI's child %d still runs 2s after the call ended", pid)
}

func zombie(pid int) bool {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(raw), ") ")
	return strings.HasPrefix(rest, "Z")
}

func TestCLINotLoggedIn(t *testing.T) {
	for _, c := range cliCases {
		t.Run(c.provider, func(t *testing.T) {
			f := fake(t)
			b := newFakeCLI(t, c, f, "noauth", nil)
			_, err := b.Generate(context.Background(), userReq("hello"), nil)
			var e *Error
			if !errors.As(err, &e) || e.Type != ErrorTypeNeedsAuth || e.Retryable {
				t.Fatalf("err = %v, want a non-retryable needs_auth *Error", err)
			}
			if n := len(f.Calls(t)); n != 1 {
				t.Errorf("the CLI ran %d times; a login problem is not retried", n)
			}
			want := "claude auth login"
			if c.provider == ProviderCodex {
				want = "codex login"
			}
			if !strings.Contains(err.Error(), "not logged in") || !strings.Contains(err.Error(), want) {
				t.Errorf("message %q does not tell people the CLI is not logged in and how to fix it (%q)", err, want)
			}
		})
	}
}

func TestCLIMissingProgram(t *testing.T) {
	b, err := New(Spec{Provider: ProviderClaudeCode, Model: "sonnet"}, Options{CLI: CLIOptions{Path: filepath.Join(t.TempDir(), "nope"), Dir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Generate(context.Background(), userReq("hi"), nil)
	var e *Error
	if !errors.As(err, &e) || e.Type != ErrorTypeUnreachable || e.Retryable {
		t.Fatalf("err = %v, want a non-retryable unreachable *Error", err)
	}
	if !strings.Contains(err.Error(), "SWITCHBOARD_CLAUDE_CODE_PATH") || !strings.Contains(err.Error(), "npm install -g @anthropic-ai/claude-code") {
		t.Errorf("message %q does not say how to install or point at the program", err)
	}
}

func TestCLINeedsWorkDir(t *testing.T) {
	_, err := New(Spec{Provider: ProviderCodex, Model: "default"}, Options{})
	if err == nil || !strings.Contains(err.Error(), "CLI.Dir") {
		t.Fatalf("err = %v, want one naming CLI.Dir", err)
	}
}

func TestProbe(t *testing.T) {
	f := fake(t)
	for _, c := range cliCases {
		t.Run(c.provider, func(t *testing.T) {
			spec := Spec{Provider: c.provider, Model: "default"}
			cases := []struct {
				name     string
				opts     CLIOptions
				want     ProbeState
				inDetail string
			}{
				{"ready", CLIOptions{Path: c.path(f), Env: f.Env("text")}, ProbeReady, ""},
				{"needs_auth", CLIOptions{Path: c.path(f), Env: f.Env("noauth")}, ProbeNeedsAuth, "login"},
				{"unreachable", CLIOptions{Path: filepath.Join(t.TempDir(), "missing")}, ProbeUnreachable, "npm install -g"},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					res := Probe(context.Background(), spec, tc.opts)
					if res.State != tc.want {
						t.Fatalf("Probe = %+v, want state %s", res, tc.want)
					}
					if !strings.Contains(res.Detail, tc.inDetail) {
						t.Errorf("detail %q lacks %q", res.Detail, tc.inDetail)
					}
					if tc.want != ProbeUnreachable && !strings.Contains(res.Version, "fake") {
						t.Errorf("version = %q, want the CLI's --version", res.Version)
					}
				})
			}
		})
	}
	if res := Probe(context.Background(), Spec{Provider: ProviderAnthropic, Model: "claude-sonnet-4-5"}, CLIOptions{}); res.State != ProbeReady {
		t.Errorf("an HTTP backend probes as %+v, want ready", res)
	}
}

func TestCLISpecs(t *testing.T) {
	for _, s := range []string{"claude-code:sonnet", "codex:gpt-5-codex", "Claude-Code:default"} {
		spec, err := ParseSpec(s)
		if err != nil || !IsCLI(spec.Provider) {
			t.Errorf("ParseSpec(%q) = %+v, %v; want a CLI provider", s, spec, err)
		}
	}
}

func TestCLIPromptSendsTranscriptToANewSession(t *testing.T) {
	req := userReq("one")
	req.Messages = append(req.Messages,
		Message{Role: RoleAssistant, Parts: []Part{{Kind: PartText, Text: "two"}, {Kind: PartToolCall, ToolName: "search", Input: []byte(`{"q": "x"}`)}}},
		Message{Role: RoleUser, Parts: []Part{{Kind: PartToolResult, Output: "found"}, {Kind: PartText, Text: "three"}}})
	got := cliPrompt(req, 0)
	for _, want := range []string{"The conversation so far:", "user: one", "assistant: two", `(called the tool search with {"q":"x"})`, "The latest message:", "(the tool returned: found)", "three", "Current time"} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt lacks %q:\n%s", want, got)
		}
	}
	if got := cliPrompt(req, 2); strings.Contains(got, "one") || !strings.HasPrefix(got, "(the tool returned: found)\nthree") {
		t.Errorf("prompt for a session that saw two messages:\n%s", got)
	}
}

// helperMCP serves an MCP server with one tool, helper, over streamable
// HTTP, refusing requests without the bearer token; it returns its URL.
func helperMCP(t *testing.T, token string) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "switchboard", Version: "test"}, nil)
	type in struct {
		Message string `json:"message"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "helper", Description: "Ask the helper."}, func(ctx context.Context, req *mcp.CallToolRequest, args in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "42 (asked: " + args.Message + ")"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}
