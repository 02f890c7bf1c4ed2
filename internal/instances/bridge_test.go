package instances_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/clitest"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

const (
	operatorToken = "bridge-operator-token"
	bridgeWait    = 5 * time.Second
	bridgeLease   = 2 * time.Second
)

// TestBridge runs `switchboard serve` with no claude on its PATH and a
// runs_on: bridge agent whose model is claude-code:sonnet, and
// `switchboard bridge` processes with a host token on a PATH that has the
// fake Claude Code CLI, on Postgres and on SQLite:
//
//  1. kill -9 of the bridge mid-call (the fake streamed part of an answer
//     and hangs) and a second bridge started: the thread is answered once,
//     with the fake's whole text, no part of the dead call's left.
//  2. A second message is answered by the bridge, once, streamed, and the
//     usage of both calls is recorded for the agent; /readyz and GET
//     /api/bridges list the bridge.
//  3. A session of the bridge's agent reading another agent's
//     conversation: 403.
//  4. No bridge connected: the turn answers one clear line after
//     bridge.wait.
//  5. The host token revoked: the session is refused at its next request,
//     an open announcement stream closes, and the bridge exits.
//  6. A bridge reading its token from a file: the new token written, the
//     old one revoked, its stream closes, it reconnects and answers on.
func TestBridge(t *testing.T) {
	if testing.Short() {
		t.Skip("starts service and bridge processes")
	}
	t.Run("postgres", func(t *testing.T) {
		url := testenv.PostgresURL(t)
		sep := "?"
		if strings.Contains(url, "?") {
			sep = "&"
		}
		url += sep + "switchboard_schema=" + testenv.PostgresEmptySchema(t)
		bridgeScenario(t, newWorldOn(t, worldOptions{db: url, leaseTTL: leaseTTL}))
	})
	t.Run("sqlite", func(t *testing.T) {
		bridgeScenario(t, newSQLiteWorld(t, leaseTTL).world)
	})
}

func bridgeScenario(t *testing.T, w *world) {
	fake := clitest.Build(t)
	t.Cleanup(func() { killPidFile(filepath.Join(fake.State, "self.pid")) })
	config := filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`access:
  dm_policy: open
bridge:
  wait: %s
  lease: %s
agents:
  - name: laptop
    model: claude-code:sonnet
    runs_on: bridge
    answers: {default: true}
  - name: other
    model: anthropic:claude-sonnet-4-5
`, bridgeWait, bridgeLease)), 0o600); err != nil {
		t.Fatal(err)
	}
	// serve's PATH has no claude.
	servePath := pathWithout(t, "claude")
	env := append(replaceEnv(w.env, "PATH", servePath), "SWITCHBOARD_CONFIG="+config, "SWITCHBOARD_API_TOKEN="+operatorToken)
	serve := start(t, "serve", env)
	base := "http://" + serve.addr
	if w.st == nil {
		if strings.HasPrefix(dbOf(w), "sqlite:") {
			(&sqliteWorld{world: w, db: dbOf(w)}).openStore()
		} else {
			w.openStore()
		}
	}

	// A host token for the laptop agent.
	var issued struct {
		ID    string `json:"id"`
		Token string `json:"token"`
	}
	apiCall(t, "POST", base+"/api/keys", operatorToken, map[string]any{"kind": "host", "agents": []string{"laptop"}, "label": "laptop"}, http.StatusCreated, &issued)

	// The bridge's PATH has the fake claude first.
	bridgeEnv := append(fake.Env("text_hang_once"),
		"PATH="+filepath.Dir(fake.Claude)+string(os.PathListSeparator)+servePath,
		"SWITCHBOARD_BRIDGE_TOKEN="+issued.Token,
		"SWITCHBOARD_CLI_ENV=FAKECLI_SCENARIO,FAKECLI_STATE,FAKECLI_LOG",
	)
	startBridge := func(name string, flags ...string) *proc {
		t.Helper()
		args := append([]string{"bridge", "-url", base, "-agent", "laptop", "-id", name, "-dir", t.TempDir(), "-poll", "200ms"}, flags...)
		p := launch(t, name, bridgeEnv, args...)
		if !poll(waitLong, func() bool { return strings.Contains(p.out.String(), "bridge ready") || p.exited() }) || p.exited() {
			t.Fatalf("%s did not connect:\n%s", name, tail(p.out.String(), 40))
		}
		return p
	}

	// 1. kill -9 mid-call, a second bridge takes over.
	a := startBridge("bridge-a")
	ch1 := w.mention(serve.addr, "first question")
	if !poll(waitLong, func() bool { _, err := os.Stat(filepath.Join(fake.State, "self.pid")); return err == nil }) {
		t.Fatalf("the fake never hung mid-answer:\n%s", tail(a.out.String(), 40))
	}
	// The start of the partial answer reached the thread live before the
	// kill.
	if !poll(waitLong, func() bool {
		for _, m := range w.slack.Messages(ch1) {
			if m.User == botUser && m.Streaming && m.Markdown != "" && strings.HasPrefix("I was about to", m.Markdown) {
				return true
			}
		}
		return false
	}) {
		t.Errorf("the partial answer was not streamed to %s: %+v", ch1, w.slack.Messages(ch1))
	}
	killed := time.Now()
	a.kill()
	killPidFile(filepath.Join(fake.State, "self.pid"))
	b := startBridge("bridge-b")
	answered := waitOneReply(t, w, ch1, "Echo: ")
	t.Logf("answered %s after the kill (lease %s)", time.Since(killed).Round(time.Millisecond), bridgeLease)

	// 2. A second message: streamed, once; usage recorded for both calls.
	ch2 := w.mention(serve.addr, "second question")
	r2 := waitOneReply(t, w, ch2, "Echo: ")
	streamed := false
	for _, m := range w.slack.Messages(ch2) {
		if m.User == botUser && m.Streamed && len(m.Chunks) > 1 {
			streamed = true
		}
	}
	if !streamed {
		t.Errorf("the answer in %s was not streamed: %+v", ch2, w.slack.Messages(ch2))
	}
	t.Logf("replies: %q, %q", answered, r2)
	totals, err := w.st.UsageSummary(context.Background(), &store.UsageSummaryParams{By: store.UsageByAgent, Since: time.Now().Add(-time.Hour), Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var laptop *store.UsageTotal
	for _, u := range totals {
		if u.Key == "laptop" {
			laptop = u
		}
	}
	if laptop == nil || laptop.Calls != 2 || laptop.OutputTokens != 24 || laptop.CostMicroUSD == 0 {
		t.Errorf("usage of laptop = %+v, want 2 calls of 12 output tokens each with the CLI's cost", laptop)
	}
	// The bridge calls ran on the bridges: the first attempt's lease lost
	// by bridge-a, both finished by bridge-b.
	items, err := w.st.WorkList(context.Background(), &store.WorkListParams{States: []store.WorkState{store.WorkDone}, Kind: "bridge:laptop"})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.ClaimedBy != "bridge:bridge-b" {
			t.Errorf("bridge call %s finished by %q, want bridge:bridge-b", it.ID, it.ClaimedBy)
		}
	}
	if len(items) != 2 {
		t.Errorf("%d bridge calls done, want 2", len(items))
	}
	if _, body := serve.readyzBody(); !strings.Contains(body, "bridge laptop: bridge-b (") {
		t.Errorf("/readyz does not list bridge-b:\n%s", body)
	}
	var list struct {
		Bridges []struct {
			ID     string   `json:"id"`
			Agents []string `json:"agents"`
		} `json:"bridges"`
	}
	apiCall(t, "GET", base+"/api/bridges", operatorToken, nil, http.StatusOK, &list)
	if len(list.Bridges) != 1 || list.Bridges[0].ID != "bridge-b" || strings.Join(list.Bridges[0].Agents, ",") != "laptop" {
		t.Errorf("GET /api/bridges = %+v, want bridge-b serving laptop", list)
	}

	// 3. The bridge's agent cannot read another agent's conversation.
	var other struct {
		ID string `json:"id"`
	}
	apiCall(t, "POST", base+"/api/conversations", operatorToken, map[string]any{"agent": "other"}, http.StatusCreated, &other)
	var sess struct {
		Token string `json:"token"`
	}
	apiCall(t, "POST", base+"/api/auth/token", issued.Token, map[string]any{"agent": "laptop"}, http.StatusCreated, &sess)
	apiCall(t, "GET", base+"/api/conversations/"+other.ID, sess.Token, nil, http.StatusForbidden, nil)
	apiCall(t, "GET", base+"/api/conversations/"+other.ID+"/entries", sess.Token, nil, http.StatusForbidden, nil)
	// Nor claim the other agent's calls: a host token for laptop has no
	// session of other.
	apiCall(t, "POST", base+"/api/auth/token", issued.Token, map[string]any{"agent": "other"}, http.StatusForbidden, nil)

	// 4. No bridge connected: one clear line after bridge.wait.
	stopProc(t, b)
	if !poll(waitLong, func() bool {
		apiCall(t, "GET", base+"/api/bridges", operatorToken, nil, http.StatusOK, &list)
		return len(list.Bridges) == 0
	}) {
		t.Fatalf("bridge-b still listed after it stopped: %+v", list)
	}
	sent := time.Now()
	ch3 := w.mention(serve.addr, "anyone there?")
	line := waitOneReply(t, w, ch3, "laptop runs on its own machine, and that machine is not connected")
	if took := time.Since(sent); took < bridgeWait {
		t.Errorf("the no-bridge line came after %s, before bridge.wait (%s)", took, bridgeWait)
	}
	t.Logf("no bridge: %q", line)
	// While it waited, the thread's status said so.
	waitingShown := false
	for _, c := range w.slack.Calls() {
		for _, vs := range c.Params {
			for _, v := range vs {
				if strings.Contains(v, "waiting for the agent") && strings.Contains(v, "machine") {
					waitingShown = true
				}
			}
		}
	}
	if !waitingShown {
		t.Errorf("no Slack call showed the waiting status")
	}

	// 5. Revoking the host token: the session is refused at its next
	// request, an open stream closes, and the bridge stops.
	c := startBridge("bridge-c")
	stream, closed := openAnnounce(t, base, sess.Token)
	defer stream.Close()
	apiCall(t, "POST", base+"/api/keys/"+issued.ID+"/revoke", operatorToken, map[string]any{}, http.StatusOK, nil)
	revoked := time.Now()
	select {
	case <-closed:
		t.Logf("announcement stream closed %s after the revocation", time.Since(revoked).Round(time.Millisecond))
	case <-time.After(10 * time.Second):
		t.Errorf("the announcement stream stayed open 10s after the revocation")
	}
	apiCall(t, "POST", base+"/api/bridge/claim", sess.Token, map[string]any{"bridge": "test"}, http.StatusUnauthorized, nil)
	if !poll(waitLong, c.exited) {
		t.Errorf("bridge-c still runs after its token was revoked:\n%s", tail(c.out.String(), 20))
	} else if !strings.Contains(c.out.String(), "refused the bridge's token") {
		t.Errorf("bridge-c exited without saying its token was refused:\n%s", tail(c.out.String(), 20))
	}

	// 6. Rotation without a restart: a bridge reading its token from a
	// file takes the new one when the old is revoked, and answers on.
	var t1, t2 struct {
		ID    string `json:"id"`
		Token string `json:"token"`
	}
	apiCall(t, "POST", base+"/api/keys", operatorToken, map[string]any{"kind": "host", "agents": []string{"laptop"}}, http.StatusCreated, &t1)
	apiCall(t, "POST", base+"/api/keys", operatorToken, map[string]any{"kind": "host", "agents": []string{"laptop"}}, http.StatusCreated, &t2)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(t1.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startBridge("bridge-d", "-token-file", tokenFile)
	if err := os.WriteFile(tokenFile, []byte(t2.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	apiCall(t, "POST", base+"/api/keys/"+t1.ID+"/revoke", operatorToken, map[string]any{}, http.StatusOK, nil)
	if !poll(10*time.Second, func() bool { return strings.Contains(d.out.String(), "reconnecting") }) {
		t.Errorf("bridge-d's stream was not closed at the revocation:\n%s", tail(d.out.String(), 20))
	}
	ch4 := w.mention(serve.addr, "after the rotation")
	waitOneReply(t, w, ch4, "Echo: ")
	if d.exited() {
		t.Errorf("bridge-d stopped at the rotation:\n%s", tail(d.out.String(), 20))
	}
}

// waitOneReply waits for the bot's one finished reply in ch, starting
// with prefix, and fails on a second message or a leftover of a dead
// call.
func waitOneReply(t *testing.T, w *world, ch, prefix string) string {
	t.Helper()
	if !poll(waitLong, func() bool {
		r := w.replies(ch)
		return len(r) > 0 && !strings.HasSuffix(r[len(r)-1], "(still streaming)")
	}) {
		t.Fatalf("%s: no finished reply within %s: %q", ch, waitLong, w.replies(ch))
	}
	w.waitIdle()
	r := w.replies(ch)
	if len(r) != 1 || !strings.HasPrefix(strings.TrimPrefix(r[0], "⚠️ "), prefix) || strings.Contains(r[0], "I was") {
		t.Fatalf("%s: the bot's messages are %q, want one starting %q", ch, r, prefix)
	}
	return r[0]
}

// apiCall sends a JSON request with a bearer token and checks the status.
func apiCall(t *testing.T, method, url, token string, body any, want int, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s answered %d, want %d: %s", method, url, resp.StatusCode, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, url, err, raw)
		}
	}
}

// openAnnounce opens an announcement stream with a session; closed is
// closed when the service ends it.
func openAnnounce(t *testing.T, base, token string) (io.Closer, <-chan struct{}) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/api/bridge/announce?bridge=watcher", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("announce answered %d", resp.StatusCode)
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
		}
	}()
	return resp.Body, closed
}

// stopProc ends a process gracefully (SIGTERM) and waits for it.
func stopProc(t *testing.T, p *proc) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not stop on SIGTERM", p.name)
	}
}

func (in *instance) readyzBody() (int, string) { return readyzAt(in.addr) }

// pathWithout is this process's PATH without the folders holding name.
func pathWithout(t *testing.T, name string) string {
	t.Helper()
	var keep []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, name)); err == nil {
			continue
		}
		keep = append(keep, d)
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

func replaceEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

func dbOf(w *world) string { return strings.TrimPrefix(w.env[1], "DATABASE_URL=") }

func killPidFile(path string) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil && pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = os.Remove(path)
}
