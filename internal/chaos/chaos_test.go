//go:build chaos

package chaos

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
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
	secret   = "chaos-signing-secret"
	botToken = "xoxb-chaos"
	team     = "T0FAKE"
	botUser  = "U0BOT"
	alice    = "U0ALICE"
	channel  = "C0CHAOS"

	// waitLong bounds each wait on the service: far above a turn, so it
	// only decides how long a broken run takes to count as lost.
	waitLong = 30 * time.Second
	// chunkDelay paces the model's stream so a signal lands mid-reply.
	chunkDelay = 60 * time.Millisecond
	leaseTTL   = "3s"
	// termGrace is how long a SIGTERM'd service may take to exit, as a
	// deploy would wait before killing it.
	termGrace = 15 * time.Second
)

// reply is what the fake model answers to every call: about forty words,
// streamed a word at a time.
const reply = "Here is a careful answer in several parts. First, the delivery " +
	"stage records an intent before it posts. Second, a live stream is " +
	"written down so a recovery can take it over. Third, nothing should be " +
	"lost, doubled, cut short or left open after a crash."

var binary string // the switchboard binary TestMain builds

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "switchboard-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "switchboard")
	build := exec.Command("go", "build", "-o", binary, "github.com/switchboardhq/switchboard/cmd/switchboard")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building switchboard: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestKill: kill -9 mid-stream, restart, and the thread ends up with the
// whole reply exactly once.
func TestKill(t *testing.T) {
	runChaos(t, syscall.SIGKILL)
}

// TestSigterm: SIGTERM mid-stream (a deploy), restart, and the thread ends
// up with the whole reply exactly once.
func TestSigterm(t *testing.T) {
	runChaos(t, syscall.SIGTERM)
}

func runChaos(t *testing.T, sig syscall.Signal) {
	runs := 5
	if v := os.Getenv("CHAOS_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CHAOS_RUNS=%q: want a positive number", v)
		}
		runs = n
	}
	h := newHarness(t, database(t))
	h.start()

	var (
		lost, doubled, open, cut int
		latencies                []time.Duration
	)
	for i := range runs {
		thread := fmt.Sprintf("%d.%06d", time.Now().Unix(), 100+i)
		h.mark(fmt.Sprintf("run %d: mention in thread %s", i, thread))
		h.t.Logf("run %d: thread %s", i, thread)
		h.mention(fmt.Sprintf("EvChaos%d%d", i, time.Now().UnixNano()), thread, fmt.Sprintf("question number %d", i))
		// Vary where the signal lands: run 0 at the first streamed words,
		// later runs further into the reply.
		shownAtLeast := len(reply) * (i * 37 % 90) / 100
		if !h.waitMidStream(thread, shownAtLeast) {
			t.Errorf("run %d: no streaming message in thread %s within %s; messages %+v", i, thread, waitLong, h.botMessages(thread))
		}
		h.stop(sig)
		restarted := time.Now()
		h.start()
		if h.waitReply(thread) {
			latencies = append(latencies, time.Since(restarted))
		}
		h.waitIdle()

		c := count(h.botMessages(thread))
		if c.lost+c.doubled+c.open+c.cut > 0 {
			t.Errorf("run %d (thread %s): lost %d, doubled %d, open %d, cut %d; messages:\n%s", i, thread, c.lost, c.doubled, c.open, c.cut, describe(h.botMessages(thread)))
		}
		lost += c.lost
		doubled += c.doubled
		open += c.open
		cut += c.cut
	}
	h.stop(syscall.SIGTERM)

	line := fmt.Sprintf("tried %d, lost %d, doubled %d, open streams %d, cut %d; restart to reply %s",
		runs, lost, doubled, open, cut, percentiles(latencies))
	fmt.Println(t.Name(), os.Getenv("CHAOS_DB"), line)
	if lost+doubled+open+cut > 0 {
		t.Fatalf("a user saw a broken reply: %s", line)
	}
}

// counts is what a user sees wrong in one thread.
type counts struct{ lost, doubled, open, cut int }

func count(msgs []slacktest.Message) counts {
	var c counts
	whole := false
	for _, m := range msgs {
		if m.Streaming {
			c.open++
		}
		s := shown(m)
		if !m.Streaming && s == reply {
			whole = true
		}
		if len(s) < len(reply) && strings.HasPrefix(reply, s) {
			c.cut++
		}
	}
	if !whole {
		c.lost = 1
	}
	if len(msgs) > 1 {
		c.doubled = 1
	}
	return c
}

// shown is what a person sees of a message: the streamed Markdown of a
// chat.startStream message, else its text.
func shown(m slacktest.Message) string {
	if m.Streamed {
		return m.Markdown
	}
	return m.Text
}

func describe(msgs []slacktest.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "  ts %s streamed %v streaming %v edits %d: %q\n", m.TS, m.Streamed, m.Streaming, m.Edits, shown(m))
	}
	return b.String()
}

func percentiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "p50 -, max -"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("p50 %s, max %s", s[(len(s)-1)/2].Round(10*time.Millisecond), s[len(s)-1].Round(10*time.Millisecond))
}

// database is a DATABASE_URL for a fresh store of the kind CHAOS_DB names.
func database(t *testing.T) string {
	switch db := os.Getenv("CHAOS_DB"); db {
	case "", "sqlite":
		return "sqlite:" + filepath.Join(t.TempDir(), "switchboard.db")
	case "postgres":
		base := testenv.PostgresURL(t)
		schema := testenv.PostgresSchema(t)
		sep := "?"
		if strings.Contains(base, "?") {
			sep = "&"
		}
		return base + sep + "switchboard_schema=" + schema
	default:
		t.Fatalf("CHAOS_DB=%q: want sqlite or postgres", db)
		return ""
	}
}

// harness is the fakes and the service subprocess, restarted on one
// database and one address.
type harness struct {
	t     *testing.T
	db    string
	addr  string
	env   []string
	log   *os.File
	slack *slacktest.Server
	model *modeltest.Fake
	http  *http.Client
	st    store.Store

	cmd  *exec.Cmd
	done chan error // the running process's Wait
}

func newHarness(t *testing.T, db string) *harness {
	slack := slacktest.NewServer(slacktest.Options{BotToken: botToken, BotUserID: botUser, TeamID: team})
	t.Cleanup(slack.Close)
	model := modeltest.NewAnthropic(t)
	model.Default(modeltest.Reply{Text: reply, Delay: chunkDelay})

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	dir := t.TempDir()
	log, err := os.Create(filepath.Join(dir, "switchboard.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	h := &harness{
		t: t, db: db, addr: addr, log: log, slack: slack, model: model,
		http: &http.Client{Timeout: 10 * time.Second},
		env: []string{
			"PATH=" + os.Getenv("PATH"),
			"HOME=" + dir,
			"SWITCHBOARD_ADDR=" + addr,
			"SWITCHBOARD_LEASE_TTL=" + leaseTTL,
			"SWITCHBOARD_MODEL=anthropic:claude-sonnet-4-5",
			"SWITCHBOARD_LOG_LEVEL=debug",
			"DATABASE_URL=" + db,
			"SLACK_BOT_TOKEN=" + botToken,
			"SLACK_SIGNING_SECRET=" + secret,
			"SLACK_API_URL=" + slack.APIURL(),
			"ANTHROPIC_API_KEY=sk-ant-test",
			"ANTHROPIC_BASE_URL=" + model.URL,
		},
	}
	t.Cleanup(func() {
		if t.Failed() {
			h.dumpLog()
		}
		if h.cmd != nil {
			_ = syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
			<-h.done
		}
		if h.st != nil {
			h.st.Close()
		}
		h.http.CloseIdleConnections()
	})
	return h
}

// mark writes a line into the service log, to find each run there.
func (h *harness) mark(s string) {
	fmt.Fprintf(h.log, "=== chaos %s %s\n", time.Now().Format("15:04:05.000"), s)
}

// start runs `switchboard serve` in its own process group and waits until
// it is ready.
func (h *harness) start() {
	h.t.Helper()
	h.mark("starting switchboard serve")
	cmd := exec.Command(binary, "serve")
	cmd.Env = h.env
	cmd.Dir = filepath.Dir(h.log.Name())
	cmd.Stdout, cmd.Stderr = h.log, h.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		h.t.Fatalf("starting switchboard: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	h.cmd, h.done = cmd, done

	ok := poll(waitLong, func() bool {
		select {
		case err := <-done:
			done <- err
			return true
		default:
		}
		resp, err := h.http.Get("http://" + h.addr + "/readyz")
		if err != nil {
			return false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	select {
	case err := <-done:
		h.cmd = nil
		h.t.Fatalf("switchboard exited while starting: %v", err)
	default:
	}
	if !ok {
		h.t.Fatalf("switchboard was not ready within %s", waitLong)
	}
	if h.st == nil {
		st, err := dial.Open(context.Background(), dial.Options{DatabaseURL: h.db})
		if err != nil {
			h.t.Fatalf("opening the service's store: %v", err)
		}
		h.st = st
	}
}

// stop signals the process group and waits for the process to end; a
// SIGTERM that is not obeyed within termGrace is a failure.
func (h *harness) stop(sig syscall.Signal) {
	h.t.Helper()
	h.mark("sending " + sig.String())
	if err := syscall.Kill(-h.cmd.Process.Pid, sig); err != nil {
		h.t.Fatalf("signalling switchboard: %v", err)
	}
	select {
	case err := <-h.done:
		h.mark(fmt.Sprintf("exited: %v", err))
	case <-time.After(termGrace):
		h.t.Errorf("switchboard did not exit within %s of %s; killing it", termGrace, sig)
		_ = syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
		<-h.done
	}
	h.cmd = nil
}

// mention sends alice's signed app_mention starting thread.
func (h *harness) mention(eventID, thread, text string) {
	h.t.Helper()
	ev := map[string]any{
		"type": "app_mention", "user": alice, "text": "<@" + botUser + "> " + text,
		"ts": thread, "channel": channel, "team": team, "event_ts": thread,
	}
	body := slacktest.MustJSON(slacktest.EventCallback(team, eventID, ev))
	req := slacktest.NewSignedRequest("http://"+h.addr+"/slack/events", "application/json", secret, time.Now(), body)
	resp, err := h.http.Do(req)
	if err != nil {
		h.t.Fatalf("posting a slack event: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("POST /slack/events answered %d, want 200", resp.StatusCode)
	}
}

// botMessages are the bot's live (not deleted) messages in thread.
func (h *harness) botMessages(thread string) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range h.slack.Messages(channel) {
		if m.User == botUser && m.ThreadTS == thread && !m.Deleted {
			out = append(out, m)
		}
	}
	return out
}

// waitMidStream waits until the thread shows part of the reply, more than
// atLeast bytes of it, in an open stream.
func (h *harness) waitMidStream(thread string, atLeast int) bool {
	return poll(waitLong, func() bool {
		for _, m := range h.botMessages(thread) {
			if m.Streaming && len(m.Markdown) > atLeast && len(m.Markdown) < len(reply) {
				return true
			}
		}
		return false
	})
}

// waitReply waits until the thread shows the whole reply in a finished
// message.
func (h *harness) waitReply(thread string) bool {
	return poll(waitLong, func() bool {
		for _, m := range h.botMessages(thread) {
			if !m.Streaming && shown(m) == reply {
				return true
			}
		}
		return false
	})
}

// waitIdle waits until no work is queued or running, so nothing more will
// be posted for this run.
func (h *harness) waitIdle() {
	h.t.Helper()
	var last string
	ok := poll(waitLong, func() bool {
		items, err := h.st.WorkList(context.Background(), &store.WorkListParams{
			States: []store.WorkState{store.WorkAvailable, store.WorkRunning}, Limit: 1,
		})
		if err != nil {
			last = err.Error()
			return false
		}
		if len(items) == 0 {
			return true
		}
		it := items[0]
		last = fmt.Sprintf("%s item %s %s, attempts %d, last error %q", it.Kind, it.ID, it.State, it.Attempts, it.LastError)
		return false
	})
	if !ok {
		h.t.Errorf("the work queue did not drain within %s; last seen: %s", waitLong, last)
	}
}

// dumpLog writes the end of the service log into the test log.
func (h *harness) dumpLog() {
	f, err := os.Open(h.log.Name())
	if err != nil {
		h.t.Logf("reading the service log: %v", err)
		return
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > 200 {
		lines = lines[len(lines)-200:]
	}
	h.t.Logf("service log (%s), last %d lines:\n%s", h.log.Name(), len(lines), strings.Join(lines, "\n"))
}

// poll calls cond every 10ms until it holds or timeout passes.
func poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		<-tick.C
	}
}
