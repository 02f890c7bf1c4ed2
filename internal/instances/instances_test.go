package instances_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

const (
	secret   = "instances-signing-secret"
	botToken = "xoxb-instances"
	appToken = "xapp-instances"
	team     = "T0FAKE"
	botUser  = "U0BOT"
	alice    = "U0ALICE"
	dmAlice  = "D0ALICE" // the fake's DM channel with alice
	leaseTTL = 3 * time.Second
	waitLong = 90 * time.Second
)

// reply is what the fake model answers, a word at a time.
const reply = "Here is the answer, in a few words, streamed one at a time to the thread."

var binary string

func TestMain(m *testing.M) { testenv.MainWithBinary(m, "instances", &binary) }

// instance is one `switchboard serve` process.
type instance struct {
	t    *testing.T
	name string
	addr string
	log  string
	cmd  *exec.Cmd
	done chan error
}

func start(t *testing.T, name string, env []string) *instance {
	t.Helper()
	return startBinary(t, binary, name, env)
}

// startBinary is start with another build of switchboard (the upgrade
// test's previous release).
func startBinary(t *testing.T, binary, name string, env []string) *instance {
	t.Helper()
	dir := t.TempDir()
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	cmd := exec.Command(binary, "serve")
	// Port 0: the process binds a free port and logs it (testenv.ServeAddr).
	cmd.Env = append(env, "SWITCHBOARD_ADDR=127.0.0.1:0", "SWITCHBOARD_INSTANCE_ID="+name, "HOME="+dir)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	in := &instance{t: t, name: name, log: logPath, cmd: cmd, done: make(chan error, 1)}
	exited := make(chan struct{})
	go func() {
		err := cmd.Wait()
		close(exited)
		in.done <- err
	}()
	t.Cleanup(func() {
		if t.Failed() {
			in.dump()
		}
		in.kill()
	})
	addr, err := testenv.ServeAddr(func() string {
		b, _ := os.ReadFile(logPath)
		return string(b)
	}, exited, waitLong)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	in.addr = addr
	client := &http.Client{Timeout: 2 * time.Second}
	if !poll(waitLong, func() bool {
		resp, err := client.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}) {
		t.Fatalf("%s was not ready within %s", name, waitLong)
	}
	return in
}

// kill sends SIGKILL to the process group and waits for the exit.
func (in *instance) kill() {
	if in.cmd == nil {
		return
	}
	_ = syscall.Kill(-in.cmd.Process.Pid, syscall.SIGKILL)
	<-in.done
	in.cmd = nil
}

func (in *instance) dump() {
	b, err := os.ReadFile(in.log)
	if err != nil {
		return
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) > 80 {
		lines = lines[len(lines)-80:]
	}
	in.t.Logf("last lines of %s's log:\n%s", in.name, strings.Join(lines, "\n"))
}

func poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond) // polling with a deadline
	}
	return true
}

// world is the fakes, the instances' settings and a store to look at.
type world struct {
	t     *testing.T
	slack *slacktest.Server
	model *modeltest.Fake
	env   []string
	st    store.Store
	http  *http.Client
	sent  int
}

// newWorld sets up the instances' world: fake Slack, fake model and a
// store, reached directly (a schema of its own) or, with pooled, through
// PgBouncer in transaction mode as Debian ships it (a database of its own:
// a transaction pooler refuses search_path as a startup parameter), with
// DATABASE_LISTEN_URL pointing the wake-ups' LISTEN at the server.
func newWorld(t *testing.T, pooled bool) *world {
	var db, listen string
	if pooled {
		name := testenv.PostgresDatabase(t)
		db = testenv.PgBouncer(t, "transaction", name) + "&switchboard_simple_protocol=1"
		listen = testenv.PostgresDatabaseURL(t, name)
	} else {
		url := testenv.PostgresURL(t)
		sep := "?"
		if strings.Contains(url, "?") {
			sep = "&"
		}
		db = url + sep + "switchboard_schema=" + testenv.PostgresEmptySchema(t)
	}
	return newWorldOn(t, worldOptions{db: db, listen: listen, leaseTTL: leaseTTL, socketMode: true})
}

// worldOptions are what differs between the instances' worlds.
type worldOptions struct {
	db, listen string // DATABASE_URL, DATABASE_LISTEN_URL (optional)
	leaseTTL   time.Duration
	// socketMode gives each instance a Socket Mode connection too
	// (SLACK_APP_TOKEN), with the fake Slack spreading events over them.
	socketMode bool
}

// newWorldOn sets up the fake Slack, the fake model and the instances'
// environment on the store o.db.
func newWorldOn(t *testing.T, o worldOptions) *world {
	slack := slacktest.NewServer(slacktest.Options{BotToken: botToken, AppToken: appToken, BotUserID: botUser, TeamID: team, SpreadEvents: o.socketMode})
	t.Cleanup(slack.Close)
	model := modeltest.NewAnthropic(t)
	config := filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(config, []byte("access:\n  dm_policy: open\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, slack: slack, model: model, http: &http.Client{Timeout: 10 * time.Second}, env: []string{
		"PATH=" + os.Getenv("PATH"),
		"DATABASE_URL=" + o.db, // openStore reads it here
		"SWITCHBOARD_CONFIG=" + config,
		"SWITCHBOARD_LEASE_TTL=" + o.leaseTTL.String(),
		"SWITCHBOARD_MODEL=anthropic:claude-sonnet-4-5",
		"ANTHROPIC_API_KEY=sk-ant-test",
		"ANTHROPIC_BASE_URL=" + model.URL,
		"SLACK_BOT_TOKEN=" + botToken,
		"SLACK_SIGNING_SECRET=" + secret,
		"SLACK_API_URL=" + slack.APIURL(),
	}}
	if o.socketMode {
		w.env = append(w.env, "SLACK_APP_TOKEN="+appToken)
	}
	if o.listen != "" {
		w.env = append(w.env, "DATABASE_LISTEN_URL="+o.listen)
	}
	t.Cleanup(w.http.CloseIdleConnections)
	return w
}

// openStore opens the instances' database, once it is migrated.
func (w *world) openStore() {
	st, err := dial.Open(context.Background(), dial.Options{DatabaseURL: strings.TrimPrefix(w.env[1], "DATABASE_URL=")})
	if err != nil {
		w.t.Fatalf("opening the instances' store: %v", err)
	}
	w.t.Cleanup(func() { st.Close() })
	w.st = st
}

// mention sends alice's mention starting a thread of its own: over HTTP to
// the instance at addr, or through Socket Mode when addr is "". It returns
// the thread's channel.
func (w *world) mention(addr, text string) string {
	w.t.Helper()
	w.sent++
	ch, ts := fmt.Sprintf("C0TWO%04d", w.sent), fmt.Sprintf("1700004000.%06d", w.sent)
	ev := map[string]any{
		"type": "app_mention", "user": alice, "text": "<@" + botUser + "> " + text,
		"ts": ts, "channel": ch, "team": team, "event_ts": ts,
	}
	w.send(addr, ev)
	return ch
}

func (w *world) send(addr string, ev map[string]any) {
	w.t.Helper()
	body := slacktest.EventCallback(team, fmt.Sprintf("EvTwo%05d", w.sent), ev)
	if addr == "" {
		w.slack.SendEvent(body)
		return
	}
	req := slacktest.NewSignedRequest("http://"+addr+"/slack/events", "application/json", secret, time.Now(), slacktest.MustJSON(body))
	resp, err := w.http.Do(req)
	if err != nil {
		w.t.Fatalf("posting a slack event to %s: %v", addr, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		w.t.Fatalf("POST %s/slack/events answered %d, want 200", addr, resp.StatusCode)
	}
}

// replies are the bot's finished, visible messages in channel's threads.
func (w *world) replies(ch string) []string {
	var out []string
	for _, m := range w.slack.Messages(ch) {
		if m.User != botUser || m.Deleted {
			continue
		}
		text := m.Text
		if m.Streamed {
			text = m.Markdown
		}
		if m.Streaming {
			text += " (still streaming)"
		}
		out = append(out, text)
	}
	return out
}

// waitAnswered waits until every channel has a reply, and fails on a
// channel answered twice or with anything but the whole reply.
func (w *world) waitAnswered(chs []string, within time.Duration) time.Duration {
	w.t.Helper()
	start := time.Now()
	ok := poll(within, func() bool {
		for _, ch := range chs {
			r := w.replies(ch)
			if len(r) == 0 || strings.HasSuffix(r[0], "(still streaming)") {
				return false
			}
		}
		return true
	})
	took := time.Since(start)
	if !ok {
		for _, ch := range chs {
			if r := w.replies(ch); len(r) == 0 {
				w.t.Errorf("%s: no reply within %s", ch, within)
			}
		}
		w.t.FailNow()
	}
	w.waitIdle()
	for _, ch := range chs {
		if r := w.replies(ch); len(r) != 1 || r[0] != reply {
			w.t.Errorf("%s: the bot's messages are %q, want the reply exactly once", ch, r)
		}
	}
	return took
}

// waitIdle waits for the queue to drain: nothing more will be posted.
func (w *world) waitIdle() {
	w.t.Helper()
	if !poll(waitLong, func() bool {
		items, err := w.st.WorkList(context.Background(), &store.WorkListParams{
			States: []store.WorkState{store.WorkAvailable, store.WorkRunning}, Limit: 1,
		})
		return err == nil && len(items) == 0
	}) {
		w.t.Fatalf("the work queue did not drain within %s", waitLong)
	}
}

// turnsBy counts the finished turn items by the instance that ran them.
func (w *world) turnsBy() map[string]int {
	w.t.Helper()
	items, err := w.st.WorkList(context.Background(), &store.WorkListParams{States: []store.WorkState{store.WorkDone}, Kind: "turn"})
	if err != nil {
		w.t.Fatal(err)
	}
	out := map[string]int{}
	for _, it := range items {
		out[it.ClaimedBy]++
	}
	return out
}

// TestTwoInstances runs two `switchboard serve` processes on one Postgres
// with the fake Slack, over HTTP events and Socket Mode (each instance its
// own connection, events spread over both as Slack does):
//
//  1. Mentions spread over both: each thread is answered exactly once, both
//     instances run turns, and reminders set on either fire once each.
//  2. One instance is killed with SIGKILL while it runs turns: the other
//     finishes every thread, once, within the lease TTL of the kill plus
//     the turn itself.
//  3. The same burst on the survivor alone gives the 1-instance throughput
//     beside the 2-instance one (logged; on a 2-core machine it need not
//     scale).
func TestTwoInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two service processes")
	}
	t.Run("direct", func(t *testing.T) { twoInstances(t, newWorld(t, false)) })
	// As teams behind a managed pooler run it: every statement through
	// PgBouncer in transaction mode, nothing configured on the pooler for
	// Switchboard, the LISTEN of the wake-ups on a direct connection.
	t.Run("pgbouncer", func(t *testing.T) { twoInstances(t, newWorld(t, true)) })
}

func twoInstances(t *testing.T, w *world) {
	w.model.Default(modeltest.Reply{Text: reply})
	a := start(t, "instance-a", w.env)
	b := start(t, "instance-b", w.env)
	w.openStore()
	if err := w.slack.WaitConnections(2, waitLong); err != nil {
		t.Fatalf("want each instance to hold its own Socket Mode connection: %v", err)
	}

	// 1. Spread: a quarter over HTTP to each instance, half over Socket Mode.
	const burst = 40
	var chs []string
	begin := time.Now()
	for i := range burst {
		addr := []string{a.addr, b.addr, "", ""}[i%4]
		chs = append(chs, w.mention(addr, fmt.Sprintf("question %d", i)))
	}
	w.waitAnswered(chs, waitLong)
	two := time.Since(begin)
	split := w.turnsBy()
	if split["instance-a"] == 0 || split["instance-b"] == 0 {
		t.Errorf("turns run by each instance: %v; want both to do work", split)
	}
	for i := range 4 {
		w.sent++
		ts := fmt.Sprintf("1700005000.%06d", w.sent)
		w.send([]string{a.addr, b.addr}[i%2], map[string]any{
			"type": "message", "channel_type": "im", "user": alice, "text": fmt.Sprintf("!remind in 2s -- stretch number %d", i),
			"ts": ts, "channel": dmAlice, "team": team, "event_ts": ts,
		})
	}
	fired := func(i int) int {
		n := 0
		for _, m := range w.slack.Messages(dmAlice) {
			if m.User == botUser && !m.Deleted && strings.Contains(m.Text+m.Markdown, fmt.Sprintf("stretch number %d", i)) && !strings.Contains(m.Text+m.Markdown, "remind") {
				n++
			}
		}
		return n
	}
	if !poll(waitLong, func() bool {
		for i := range 4 {
			if fired(i) == 0 {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("the four reminders did not all fire within %s; DM: %+v", waitLong, w.slack.Messages(dmAlice))
	}
	w.waitIdle()
	fires, err := w.st.WorkList(context.Background(), &store.WorkListParams{Kind: "schedule_fire"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fires) != 4 {
		t.Errorf("schedule_fire items: %d, want one per reminder (4)", len(fires))
	}
	for i := range 4 {
		if n := fired(i); n != 1 {
			t.Errorf("reminder %d was posted %d times, want once", i, n)
		}
	}

	// 2. kill -9 while instance A runs turns: B takes them over after the
	// lease and answers each thread once.
	w.model.Default(modeltest.Reply{Text: reply, Delay: 150 * time.Millisecond})
	chs = chs[:0]
	for i := range 10 {
		chs = append(chs, w.mention(a.addr, fmt.Sprintf("slow question %d", i)))
	}
	// Either instance may run any of them: under load B can take all ten
	// (a worker claims the turn its own inbound item enqueued at once), so
	// more are sent, one every half second up to 40 in all, until A runs
	// one. Every one sent must be answered once after the kill.
	lastSent := time.Now()
	if !poll(waitLong, func() bool {
		items, err := w.st.WorkList(context.Background(), &store.WorkListParams{States: []store.WorkState{store.WorkRunning}, Kind: "turn"})
		if err != nil {
			return false
		}
		for _, it := range items {
			if it.ClaimedBy == "instance-a" {
				return true
			}
		}
		if len(chs) < 40 && time.Since(lastSent) > 500*time.Millisecond {
			chs = append(chs, w.mention(a.addr, fmt.Sprintf("slow question %d", len(chs))))
			lastSent = time.Now()
		}
		return false
	}) {
		t.Fatalf("instance A never ran one of %d slow turns", len(chs))
	}
	a.kill()
	killed := time.Now()
	turn := time.Duration(len(strings.Fields(reply))) * 150 * time.Millisecond
	took := w.waitAnswered(chs, leaseTTL+time.Duration(2*(len(chs)+9)/10)*turn+10*time.Second)
	t.Logf("after kill -9 of instance A, instance B finished its turns %s later (lease TTL %s, a turn about %s)", time.Since(killed).Round(time.Millisecond), leaseTTL, turn)
	_ = took

	// 3. The same burst on one instance.
	w.model.Default(modeltest.Reply{Text: reply})
	chs = chs[:0]
	begin = time.Now()
	for i := range burst {
		addr := []string{b.addr, ""}[i%2]
		chs = append(chs, w.mention(addr, fmt.Sprintf("question %d", i)))
	}
	w.waitAnswered(chs, waitLong)
	one := time.Since(begin)
	t.Logf("split of %d turns over two instances: %v; throughput: 2 instances %.1f threads/s, 1 instance %.1f threads/s (ratio %.2f)",
		burst, split, float64(burst)/two.Seconds(), float64(burst)/one.Seconds(), one.Seconds()/two.Seconds())
}
