package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

// The fake Slack team the service talks to.
const (
	team       = "T0CONSOLE"
	botToken   = "xoxb-console"
	secret     = "console-signing-secret"
	opToken    = "op-console-token"
	alice      = "U0ALICE"
	aliceDM    = "D0ALICE"
	waitLong   = 45 * time.Second
	pollEvery  = 50 * time.Millisecond
	longEnding = "THE-END"
)

// script is the agent's model: a reply streamed word by word, ask_user and
// render_chart turns, and a long reply to restart the server in the middle
// of.
var script = `
name: console
chunk_delay: 25ms
turns:
  - after_tool: ask_user
    text: "Noted: you picked {{last_user}}."
  - after_tool: render_chart
    text: "There is your chart."
  - after_tool: remember
    text: "Remembered, with your leave."
  - when_last_user_contains: "remember the colour"
    tool_calls:
      - name: remember
        input: {text: "The logo is green.", scope: conversation}
  - when_last_user_contains: "pick a colour"
    text: "Let me ask."
    tool_calls:
      - name: ask_user
        input: {question: "Which colour should the logo be?", choices: [Red, Green, Blue]}
  - when_last_user_contains: "chart please"
    tool_calls:
      - name: render_chart
        input: {title: "Sign-ups", kind: bar, labels: {x: Month, y: People}, series: [{name: "2026", points: [{x: Jan, y: 12}, {x: Feb, y: 19}, {x: Mar, y: 15}, {x: Apr, y: 24}]}]}
  - when_last_user_contains: "long story"
    text: "` + strings.Repeat("Once upon a time there was a switchboard that never dropped a word. ", 14) + longEnding + `"
  # After "long story": the model sees both messages as one (an error
  # entry never reaches it), and a restarted process plays the script anew.
  - when_last_user_contains: "break please"
    once: true
    failure: {status: 400, message: "the scripted model refuses"}
fallback:
  text: "Echo from the console agent: {{last_user}}"
`

// chromium finds the browser. Without one the test skips with a message,
// except in CI (CI=true), where a missing browser is a failure: .ci/run
// installs it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH: the browser tests need it in CI (apt-get install -y chromium)")
	}
	t.Skip("no chromium on PATH: install it (apt-get install -y chromium) to run the browser tests")
	return ""
}

// eachStore runs f on SQLite and on Postgres (when TEST_DATABASE_URL is
// set; testenv decides whether its absence skips or fails).
func eachStore(t *testing.T, f func(t *testing.T, db string)) {
	t.Run("sqlite", func(t *testing.T) {
		f(t, "sqlite:"+testenv.SQLiteFile(t))
	})
	t.Run("postgres", func(t *testing.T) {
		base := testenv.PostgresURL(t)
		schema := testenv.PostgresSchema(t)
		sep := "?"
		if strings.Contains(base, "?") {
			sep = "&"
		}
		f(t, base+sep+"switchboard_schema="+schema)
	})
}

// env is the real service (internal/app, as `switchboard serve` wires it)
// on a fixed port, with a fake Slack and the scripted model.
type env struct {
	t     *testing.T
	cfg   app.Config
	app   *app.App
	slack *slacktest.Server
	base  string
	http  *http.Client
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func startEnv(t *testing.T, db string) *env {
	t.Helper()
	return startEnvWith(t, db, nil)
}

// startEnvWith is startEnv with more configuration appended to the file:
// extra gets the path of the script file (for agents of its own).
func startEnvWith(t *testing.T, db string, extra func(scriptPath string) string) *env {
	t.Helper()
	srv := slacktest.NewServer(slacktest.Options{BotToken: botToken, BotUserID: "U0BOT", TeamID: team})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	scriptPath := filepath.Join(dir, "script.yaml")
	config := filepath.Join(dir, "switchboard.yaml")
	if err := os.WriteFile(scriptPath, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	// remember asks first: the approvals inbox decides it.
	cfgText := "access:\n  dm_policy: open\npolicy:\n  tools: {remember: confirm}\n"
	if extra != nil {
		cfgText += extra(scriptPath)
	}
	if err := os.WriteFile(config, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"SWITCHBOARD_MODEL": "scripted:" + scriptPath}
	addr := freePort(t)
	e := &env{
		t: t, slack: srv, base: "http://localhost:" + strings.Split(addr, ":")[1],
		http: &http.Client{Timeout: 30 * time.Second},
		cfg: app.Config{
			Addr: addr, DatabaseURL: db, APIToken: opToken,
			SlackBotToken: botToken, SlackSigningSecret: secret, SlackAPIURL: srv.APIURL(),
			ConfigPath: config, Env: func(k string) string { return vars[k] }, Logger: testenv.Logger(t),
			// A restart in the middle of a reply cuts the turn off at once.
			ShutdownTimeout: 200 * time.Millisecond,
		},
	}
	e.cfg.CLI.DataDir = filepath.Join(dir, "data") // coding steps' worktrees
	e.open()
	t.Cleanup(func() {
		if e.app != nil {
			_ = e.app.Stop(context.Background())
		}
	})
	return e
}

func (e *env) open() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := app.Open(ctx, e.cfg)
	if err != nil {
		e.t.Fatalf("opening the service: %v", err)
	}
	if err := a.Start(context.Background()); err != nil {
		_ = a.Stop(context.Background())
		e.t.Fatalf("starting the service: %v", err)
	}
	e.app = a
}

// restart stops the service as a deploy would and starts a new one on the
// same database and port.
func (e *env) restart() {
	e.t.Helper()
	if err := e.app.Stop(context.Background()); err != nil {
		e.t.Logf("stopping for the restart: %v", err)
	}
	e.app = nil
	e.open()
}

// dm posts a direct message from user to the bot through the Events API.
func (e *env) dm(eventID, user, channel, text string) {
	e.t.Helper()
	now := time.Now()
	ts := fmt.Sprintf("%d.%06d", now.Unix(), now.Nanosecond()/1000)
	ev := map[string]any{"type": "message", "channel_type": "im", "user": user, "text": text, "ts": ts, "channel": channel, "team": team, "event_ts": ts}
	body := slacktest.MustJSON(slacktest.EventCallback(team, eventID, ev))
	resp, err := e.http.Do(slacktest.NewSignedRequest("http://"+e.cfg.Addr+"/slack/events", "application/json", secret, time.Now(), body))
	if err != nil {
		e.t.Fatalf("posting a DM: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("POST /slack/events answered %d", resp.StatusCode)
	}
}

var linkRE = regexp.MustCompile(`https?://[^\s>|]+/login\?t=[A-Za-z0-9_-]+`)

// loginLink sends `!login` in alice's DM and returns the link the bot
// answers with.
func (e *env) loginLink(eventID string) string {
	e.t.Helper()
	before := len(e.slack.Messages(aliceDM))
	e.dm(eventID, alice, aliceDM, "!login")
	deadline := time.Now().Add(waitLong)
	for time.Now().Before(deadline) {
		msgs := e.slack.Messages(aliceDM)
		for _, m := range msgs[min(before, len(msgs)):] {
			if l := linkRE.FindString(m.Text); l != "" {
				return l
			}
		}
		time.Sleep(pollEvery)
	}
	e.t.Fatalf("no sign-in link in %s after !login: %+v", aliceDM, e.slack.Messages(aliceDM))
	return ""
}

// operator calls the API with the operator token.
func (e *env) operator(method, path string, body any, out any) {
	e.t.Helper()
	var rd *strings.Reader
	if body == nil {
		rd = strings.NewReader("")
	} else {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, "http://"+e.cfg.Addr+path, rd)
	req.Header.Set("Authorization", "Bearer "+opToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.http.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		e.t.Fatalf("%s %s answered %d", method, path, resp.StatusCode)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			e.t.Fatalf("decoding %s %s: %v", method, path, err)
		}
	}
}

// waitStatus waits until the conversation's status is want.
func (e *env) waitStatus(conv, want string) {
	e.t.Helper()
	e.waitFor("conversation "+conv+" "+want, func() bool {
		var c struct {
			Status string `json:"status"`
		}
		e.operator("GET", "/api/conversations/"+conv, nil, &c)
		return c.Status == want
	})
}

// waitFor polls cond until it holds, or fails the test after waitLong.
func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(waitLong)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(pollEvery)
	}
	e.t.Fatalf("waiting for %s: not after %s", what, waitLong)
}

// browser starts a headless Chromium of its own for the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1280, 860))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// This run's screenshots only.
	_ = os.RemoveAll(shotDir(t))
	// The first run starts the browser; its context must not time out.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// page runs browser steps with a deadline, failing the test with what was
// being done.
type page struct {
	t   *testing.T
	ctx context.Context
}

func (p page) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, waitLong)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.shot("failed-" + strings.ReplaceAll(what, " ", "-"))
		p.t.Fatalf("%s: %v", what, err)
	}
}

// doOnStillDOM is do for steps that find nodes and then act on them (clicks):
// when the page re-rendered the node between the two ("Could not find node
// with given id", "Node is detached"), the steps run again from the start,
// until waitLong.
func (p page) doOnStillDOM(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, waitLong)
	defer cancel()
	for {
		err := chromedp.Do(ctx, steps...)
		if err == nil {
			return
		}
		if ctx.Err() != nil || !(strings.Contains(err.Error(), "Could not find node") || strings.Contains(err.Error(), "Node is detached")) {
			p.shot("failed-" + strings.ReplaceAll(what, " ", "-"))
			p.t.Fatalf("%s: %v", what, err)
		}
		p.t.Logf("%s: the page re-rendered under the step (%v); again", what, err)
		time.Sleep(pollEvery)
	}
}

// waitJS waits until the expression is truthy.
func (p page) waitJS(what, expr string) {
	p.t.Helper()
	p.do(what, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(pollEvery), chromedp.WithPollingTimeout(waitLong))(ctx, t)
		return err
	}))
}

// eval returns the value of a JavaScript expression (awaited when it is a
// promise).
func eval[T any](p page, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, waitLong)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// shotRun is this test process's folder of screenshots, so that two runs at
// once (or one after the other) never mix or overwrite their pictures.
var shotRun = sync.OnceValue(func() string {
	return fmt.Sprintf("run-%s-%d", time.Now().Format("20060102-150405"), os.Getpid())
})

func shotDir(t *testing.T) string {
	return filepath.Join(os.TempDir(), "switchboard-console", shotRun(), strings.ReplaceAll(t.Name(), "/", "_"))
}

// shot saves a screenshot of the page as test output under
// $TMPDIR/switchboard-console/run-<time>-<pid> (not committed).
func (p page) shot(name string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Logf("screenshot %s: %v", name, err)
		return
	}
	dir := shotDir(p.t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Logf("screenshot dir: %v", err)
		return
	}
	file := filepath.Join(dir, name+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		p.t.Logf("screenshot %s: %v", name, err)
		return
	}
	p.t.Logf("screenshot: %s", file)
}
