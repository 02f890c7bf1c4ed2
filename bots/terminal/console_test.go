package terminal_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/bots/terminal"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/headless"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const waitTimeout = 20 * time.Second

// chatScript echoes plain messages, asks a question on "ask", draws a chart
// on "chart", and says what it got back after each tool.
const chatScript = `
turns:
  - after_tool: ask_user
    text: "You chose {{last_user}}"
  - after_tool: render_chart
    text: "There is your chart."
  - when_last_user_contains: ask
    text: "Let me ask."
    tool_calls:
      - {name: ask_user, input: {question: "Which colour?", choices: [Blue, Green, Orange]}}
  - when_last_user_contains: chart
    text: "Drawing it."
    tool_calls:
      - name: render_chart
        input: {title: Weekly sales, kind: bar, series: [{name: s, points: [{x: Mon, y: 2}, {x: Tue, y: 3}]}]}
fallback:
  text: "echo: {{last_user}} in several words"
`

// output is a terminal: it keeps every write, so a test can tell a streamed
// reply (many writes) from one printed at once.
type output struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes []string
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.writes = append(o.writes, string(p))
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

func (o *output) Writes() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.writes...)
}

// waitCount waits until s appears at least n times in the output.
func (o *output) waitCount(t *testing.T, s string, n int) string {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		if out := o.String(); strings.Count(out, s) >= n {
			return out
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %q to be printed %d times; the terminal shows:\n%s", s, n, o.String())
	return ""
}

// backendFunc builds the agents' backends from a script, whatever model
// they declare.
type backendFunc = core.BackendFunc

func scripted(t *testing.T, body string) backendFunc {
	t.Helper()
	script, err := model.ParseScript([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return func(*config.Agent) (model.Backend, error) { return model.NewScripted(script, model.Options{}), nil }
}

type riskyIn struct {
	Target string `json:"target"`
}

type riskyOut struct {
	Done string `json:"done"`
}

// service starts a service and its worker over st. backend nil uses the
// service's default (the agent's declared model).
func service(t *testing.T, st store.Store, modelName string, backend backendFunc) *core.Service {
	t.Helper()
	return serviceWith(t, st, modelName, backend, true, nil)
}

// serviceWith is service with a choice of running a worker, and a counter
// of runs of the high-risk tool drop_table.
func serviceWith(t *testing.T, st store.Store, modelName string, backend backendFunc, worker bool, dropped *atomic.Int32) *core.Service {
	t.Helper()
	agents := &config.Config{Agents: []config.Agent{{
		Name: "atlas", Persona: "You test the terminal.", Model: modelName,
		MaxTokens: 1000, StepBudget: 25, Answers: config.Answers{Default: true},
	}}}
	reg := tool.NewRegistry()
	if err := headless.RegisterBuiltins(reg); err != nil {
		t.Fatal(err)
	}
	tool.MustRegister(reg, tool.Def{Name: "drop_table", Description: "drops a table", Risk: tool.RiskHigh},
		func(_ context.Context, _ *tool.Request, in riskyIn) (riskyOut, error) {
			if dropped != nil {
				dropped.Add(1)
			}
			return riskyOut{Done: "dropped " + in.Target}, nil
		})
	svc, err := core.New(core.Options{
		Store: st, Agents: agents, Registry: reg, Backend: backend,
		Tools:  func(c tool.ContextName) []*tool.Tool { return headless.ToolsFor(reg, c) },
		Logger: testenv.Logger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := svc.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	if !worker {
		cancel()
		return svc
	}
	handlers := core.NewHandlers()
	core.AddHandler(handlers, svc.RunTurn)
	w, err := core.NewWorker(core.WorkerOptions{
		Store: st, WorkerID: svc.WorkerID(), PollInterval: 20 * time.Millisecond,
		Handlers: handlers,
		Logger:   testenv.Logger(t),
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = w.Stop(context.Background())
	})
	return svc
}

// chat is a running console.Run with a pipe for its keyboard.
type chat struct {
	stdin  *io.PipeWriter
	out    *output
	dir    string
	done   chan error
	events <-chan core.Event
}

func startChat(t *testing.T, svc *core.Service) *chat {
	t.Helper()
	return startChatPoll(t, svc, 0)
}

func startChatPoll(t *testing.T, svc *core.Service, poll time.Duration) *chat {
	t.Helper()
	r, w := io.Pipe()
	events, unsubscribe := svc.Hub().Subscribe(uuid.Nil, 4096)
	t.Cleanup(unsubscribe)
	c := &chat{stdin: w, out: &output{}, dir: t.TempDir(), done: make(chan error, 1), events: events}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		c.done <- terminal.Run(ctx, terminal.Options{Service: svc, In: r, Out: c.out, FileDir: c.dir, PollInterval: poll})
	}()
	t.Cleanup(func() {
		cancel()
		_ = w.Close()
		select {
		case <-c.done:
		case <-time.After(waitTimeout):
			t.Errorf("console.Run did not return after its input closed and its context ended")
		}
	})
	return c
}

// say types a line. The write returns once the console has read it.
func (c *chat) say(t *testing.T, line string) {
	t.Helper()
	written := make(chan error, 1)
	go func() {
		_, err := io.WriteString(c.stdin, line+"\n")
		written <- err
	}()
	select {
	case err := <-written:
		if err != nil {
			t.Fatalf("typing %q: %v", line, err)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("the console did not read the line %q", line)
	}
}

// end is Ctrl-D: the input closes and Run must return nil.
func (c *chat) end(t *testing.T) {
	t.Helper()
	if err := c.stdin.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.done:
		if err != nil {
			t.Fatalf("Run after Ctrl-D = %v; want nil", err)
		}
		c.done <- nil // for the cleanup
	case <-time.After(waitTimeout):
		t.Fatalf("Run did not return after Ctrl-D; the terminal shows:\n%s", c.out.String())
	}
}

const prompt = "\n> "

func TestFirstLineSaysWhichModel(t *testing.T) {
	t.Parallel()
	cases := []struct {
		model    string
		want     string
		wantNone string
	}{
		{"scripted:some-script.yaml", "offline demo model", ""},
		{"anthropic:claude-sonnet-4-5", "Chatting with atlas (anthropic:claude-sonnet-4-5)", "demo"},
	}
	for _, tc := range cases {
		t.Run(tc.model, func(t *testing.T) {
			svc := service(t, testenv.SQLite(t), tc.model, scripted(t, chatScript))
			c := startChat(t, svc)
			out := c.out.waitCount(t, "\n", 1)
			first, _, _ := strings.Cut(out, "\n")
			if !strings.Contains(first, tc.want) || (tc.wantNone != "" && strings.Contains(first, tc.wantNone)) {
				t.Fatalf("first line = %q; want it to contain %q (and not %q)", first, tc.want, tc.wantNone)
			}
			c.end(t)
		})
	}
}

var savedRE = regexp.MustCompile(`\[(\S+) saved to ([^\]]+)\]`)

func TestChatStreamsAsksAndSavesCharts(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		svc := service(t, st, "scripted:chat.yaml", scripted(t, chatScript))
		c := startChat(t, svc)
		c.out.waitCount(t, prompt, 1)

		// A plain message: the reply is streamed, and printed once.
		c.say(t, "hello")
		out := c.out.waitCount(t, prompt, 2)
		reply := "echo: [you] hello in several words"
		if strings.Count(out, "atlas: "+reply) != 1 {
			t.Logf("writes: %q", c.out.Writes())
			t.Fatalf("terminal shows:\n%s\nwant the reply %q printed once after the agent's name", out, reply)
		}
		if !contains(c.out.Writes(), "echo: ") || !contains(c.out.Writes(), "several ") {
			t.Fatalf("writes = %q; want the reply written word by word as it streams", c.out.Writes())
		}

		// A question: a numbered prompt; a wrong answer asks again.
		c.say(t, "ask me something")
		out = c.out.waitCount(t, "choose 1-3: ", 1)
		if !strings.Contains(out, "Which colour?\n  1) Blue\n  2) Green\n  3) Orange\n") {
			t.Fatalf("terminal shows:\n%s\nwant the question with numbered choices", out)
		}
		for i, bad := range []string{"7", "0", "green", ""} {
			c.say(t, bad)
			out = c.out.waitCount(t, "choose 1-3: ", i+2)
			if got := strings.Count(out, "please type one of the numbers"); got != i+1 {
				t.Fatalf("after answering %q the terminal shows:\n%s\nwant %d re-asks", bad, out, i+1)
			}
		}
		c.say(t, "2")
		out = c.out.waitCount(t, prompt, 3)
		if !regexp.MustCompile(`You chose .*Green`).MatchString(out) {
			t.Fatalf("terminal shows:\n%s\nwant the turn to continue with the chosen answer Green", out)
		}
		if n := strings.Count(out, "[atlas is running ask_user…]"); n != 1 {
			t.Fatalf("terminal shows:\n%s\nwant the running ask_user status once, got %d", out, n)
		}
		pending, err := svc.PendingCalls(context.Background(), c.conversation(t))
		if err != nil || len(pending) != 0 {
			t.Fatalf("pending calls after the answer = %+v, %v; want none", pending, err)
		}

		// A chart: the PNG is saved in FileDir and its path printed.
		c.say(t, "draw a chart")
		out = c.out.waitCount(t, prompt, 4)
		m := savedRE.FindStringSubmatch(out)
		if m == nil || !strings.Contains(out, "There is your chart.") {
			t.Fatalf("terminal shows:\n%s\nwant the chart's saved path and the reply after it", out)
		}
		path := m[2]
		if filepath.Dir(path) != c.dir || !strings.HasSuffix(path, ".png") {
			t.Fatalf("chart saved to %s; want a .png file in FileDir %s", path, c.dir)
		}
		data, err := os.ReadFile(path)
		if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
			t.Fatalf("reading %s: %d bytes, %v; want a PNG image", path, len(data), err)
		}

		c.end(t)
	})
}

const riskyScript = `
turns:
  - after_tool: drop_table
    text: "Outcome: {{last_user}}"
  - when_last_user_contains: drop
    tool_calls:
      - {name: drop_table, input: {target: users}}
fallback:
  text: "echo: {{last_user}}"
`

func TestRiskyCallAsksForApproval(t *testing.T) {
	t.Parallel()
	cases := []struct {
		choice  string
		ran     int32
		outcome string
	}{
		{"4", 0, "denied by you"},
		{"1", 1, "dropped users"},
	}
	for _, tc := range cases {
		t.Run("choice "+tc.choice, func(t *testing.T) {
			var dropped atomic.Int32
			svc := serviceWith(t, testenv.SQLite(t), "scripted:risky.yaml", scripted(t, riskyScript), true, &dropped)
			c := startChat(t, svc)
			c.out.waitCount(t, prompt, 1)
			c.say(t, "drop the users table")
			out := c.out.waitCount(t, "choose 1-4: ", 1)
			if !strings.Contains(out, "Approval needed: run drop_table with {\"target\":\"users\"}?\n  1) Allow once\n  2) Always allow\n  3) Always allow these arguments\n  4) Deny\n") {
				t.Fatalf("terminal shows:\n%s\nwant a plain-text approval prompt with Allow once, Always allow (twice) and Deny", out)
			}
			if dropped.Load() != 0 {
				t.Fatal("the high-risk tool ran before anyone approved it")
			}
			c.say(t, tc.choice)
			out = c.out.waitCount(t, prompt, 2)
			if !strings.Contains(out, "Outcome: ") || !strings.Contains(out, tc.outcome) {
				t.Fatalf("terminal shows:\n%s\nwant the outcome %q", out, tc.outcome)
			}
			if got := dropped.Load(); got != tc.ran {
				t.Fatalf("drop_table ran %d times; want %d", got, tc.ran)
			}
			c.end(t)
		})
	}
}

// TestTurnRunByAnotherInstance: with a shared store, another instance's
// worker may run the chat's turns. Its live events never reach this
// process; the chat must still show the whole reply, ask its questions and
// notice the turn ended.
func TestTurnRunByAnotherInstance(t *testing.T) {
	// Not parallel: under a loaded machine the third prompt was seen
	// before the other instance's resumed turn printed (a window to look
	// into; see the closing note of session 11).
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		here := serviceWith(t, st, "scripted:chat.yaml", scripted(t, chatScript), false, nil)
		serviceWith(t, st, "scripted:chat.yaml", scripted(t, chatScript), true, nil) // the other instance
		c := startChatPoll(t, here, 50*time.Millisecond)
		c.out.waitCount(t, prompt, 1)
		c.say(t, "hello")
		out := c.out.waitCount(t, prompt, 2)
		if !contains(c.out.Writes(), "\natlas: echo: [you] hello in several words") {
			t.Fatalf("writes = %q; want the reply printed whole from the log", c.out.Writes())
		}
		c.say(t, "ask me")
		c.out.waitCount(t, "choose 1-3: ", 1)
		c.say(t, "3")
		out = c.out.waitCount(t, prompt, 3)
		if !regexp.MustCompile(`You chose .*Orange`).MatchString(out) {
			t.Fatalf("terminal shows:\n%s\nwant the other instance's resumed turn to show with the answer Orange", out)
		}
		c.end(t)
	})
}

func TestCtrlDWhileAQuestionWaitsEndsTheChat(t *testing.T) {
	t.Parallel()
	svc := service(t, testenv.SQLite(t), "scripted:chat.yaml", scripted(t, chatScript))
	c := startChat(t, svc)
	c.out.waitCount(t, prompt, 1)
	c.say(t, "ask me")
	c.out.waitCount(t, "choose 1-3: ", 1)
	c.end(t)
}

func TestBuiltInDemoDrawsAChart(t *testing.T) {
	t.Parallel()
	svc := service(t, testenv.SQLite(t), "scripted:"+model.DemoScriptName, nil)
	c := startChat(t, svc)
	c.out.waitCount(t, prompt, 1)
	c.say(t, "show me a chart")
	out := c.out.waitCount(t, prompt, 2)
	m := savedRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("terminal shows:\n%s\nwant the demo's chart saved and its path printed", out)
	}
	if data, err := os.ReadFile(m[2]); err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
		t.Fatalf("reading %s: %v; want a PNG", m[2], err)
	}
	c.end(t)
}

func TestRunNeedsServiceAndStreams(t *testing.T) {
	t.Parallel()
	err := terminal.Run(context.Background(), terminal.Options{})
	if err == nil || !strings.Contains(err.Error(), "Service") {
		t.Fatalf("Run without options = %v; want an error naming the missing Service", err)
	}
	svc := service(t, testenv.SQLite(t), "scripted:chat.yaml", scripted(t, chatScript))
	err = terminal.Run(context.Background(), terminal.Options{Service: svc, Agent: "nobody", In: strings.NewReader(""), Out: io.Discard})
	if err == nil || !strings.Contains(err.Error(), `"nobody"`) {
		t.Fatalf("Run with an unknown agent = %v; want an error naming it", err)
	}
	// Input that is already at its end: the chat opens and closes cleanly.
	var out output
	if err := terminal.Run(context.Background(), terminal.Options{Service: svc, In: strings.NewReader(""), Out: &out}); err != nil {
		t.Fatalf("Run with empty input = %v; want nil", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, w := io.Pipe()
	defer w.Close()
	if err := terminal.Run(ctx, terminal.Options{Service: svc, In: r, Out: io.Discard}); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("Run with a cancelled context = %v; want nil or context.Canceled", err)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// conversation is the conversation the chat created, learned from the
// first turn event it published.
func (c *chat) conversation(t *testing.T) uuid.UUID {
	t.Helper()
	select {
	case ev := <-c.events:
		return ev.ConversationID
	case <-time.After(waitTimeout):
		t.Fatal("the chat published no turn event")
	}
	return uuid.Nil
}

// TestCommandLines: a line that starts with "!" goes to the command
// handler, as a private request from the person at the terminal, and its
// answer is printed; the agent never sees it.
func TestCommandLines(t *testing.T) {
	t.Parallel()
	svc := service(t, testenv.SQLite(t), "scripted:chat.yaml", scripted(t, chatScript))
	var got []*core.Command
	var out output
	err := terminal.Run(context.Background(), terminal.Options{
		Service: svc, User: "ana", In: strings.NewReader("!login\n"), Out: &out,
		CommandFunc: func(_ context.Context, in *core.Inbound, cmd *core.Command) (string, error) {
			if in.Platform != terminal.TerminalPlatform || in.UserID != "ana" || !in.IsDM {
				t.Errorf("inbound %+v; want ana on the terminal, in a DM", in)
			}
			got = append(got, cmd)
			return "Sign in to the Switchboard console: http://localhost:8080/login?t=x", nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Text != "login" || !got[0].Private {
		t.Fatalf("commands %+v; want one private login", got)
	}
	if !strings.Contains(out.String(), "/login?t=x") {
		t.Errorf("output %q; want the command's answer", out.String())
	}
	convs, err := svc.Store().ConversationList(context.Background(), &store.ConversationListParams{All: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range convs {
		es, err := svc.Store().EntryList(context.Background(), &store.EntryListParams{ConversationID: c.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != 0 {
			t.Errorf("conversation %s holds %d entries; a command line reaches no agent", c.ID, len(es))
		}
	}
}
