//go:build chaos

package chaos

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

const (
	// serviceApp is the application_name the service's pooled connections
	// carry (pgx passes the URL parameter through). Its LISTEN connection
	// always calls itself listenerApp; the fresh database keeps the
	// terminations to this test's service either way.
	serviceApp  = "sbchaos-service"
	listenerApp = "switchboard-listener"
	// observerApp is the test's own store, which reads the work queue and
	// is left alone.
	observerApp = "sbchaos-observer"

	// terminateEvery is how often every service connection is terminated.
	terminateEvery = 2 * time.Second
	// fireOver is how long the mentions take to send, at a steady rate.
	fireOver = 20 * time.Second
	// slackAckTimeout is how long Slack waits for a 200 before it counts a
	// delivery as failed and retries it; slackRetries is how many times it
	// retries, after the waits in slackRetryAfter: Slack documents a retry
	// nearly at once, then after one minute, then after five.
	slackAckTimeout = 3 * time.Second
	slackRetries    = 3
	// repliesWithin bounds the wait for every thread's reply once the last
	// mention is acknowledged.
	repliesWithin = 3 * time.Minute
	// pgBackWithin bounds how long Postgres may take to accept connections
	// again after a restart.
	pgBackWithin = time.Minute
)

// TestPostgresFaults: 120 mentions (CHAOS_MENTIONS) arrive at a steady rate
// while every connection of the service is terminated every 2 s and, with
// CHAOS_PG_RESTART=1, the Postgres cluster restarts once (or, with
// CHAOS_PG_DOWN=8s, stays stopped that long). Every thread ends
// up with exactly one whole reply and no error shown: each fault is far
// shorter than the store's 30 s retry budget.
//
// The restart stops every database of the local cluster, other tests'
// included, so it only happens when CHAOS_PG_RESTART=1 asks for it, only
// against a Postgres on this machine, and the test brings the cluster back
// before it ends.
func TestPostgresFaults(t *testing.T) {
	if db := os.Getenv("CHAOS_DB"); db != "postgres" {
		t.Skipf("TestPostgresFaults terminates Postgres connections: it runs with CHAOS_DB=postgres, not %q", db)
	}
	// Registered first, so it prints last: after the service log the
	// harness dumps on failure, where CI's tail of the output shows it.
	fail := newFailSummary(t)
	mentions := envInt(t, "CHAOS_MENTIONS", 120)
	admin := testenv.PostgresURL(t)
	var cluster string
	if os.Getenv("CHAOS_PG_RESTART") == "1" {
		cluster = localCluster(t, admin)
	} else {
		t.Log("CHAOS_PG_RESTART is not 1: connections are terminated, the cluster is not restarted")
	}

	dbname := testenv.PostgresDatabase(t)
	if cluster != "" {
		// Registered after testenv.PostgresDatabase, so it runs before the drop.
		t.Cleanup(func() { ensurePostgres(t, admin, cluster) })
	}
	sl := newSlack(t)
	h := newHarness(t, withDatabase(t, admin, dbname, observerApp), sl, chunkDelay)
	h.slack = sl.fake
	h.env = setEnv(h.env, "DATABASE_URL", withDatabase(t, admin, dbname, serviceApp))
	defer h.keepLogOnFailure()
	h.start()

	ctx, stopFaults := context.WithCancel(context.Background())
	defer stopFaults()
	f := &pgFaults{admin: admin, dbname: dbname, cluster: cluster, down: envDuration(t, "CHAOS_PG_DOWN"), restart: make(chan struct{}, 1), mark: h.mark, logf: h.logf}
	faultsDone := make(chan struct{})
	go func() {
		defer close(faultsDone)
		f.run(ctx)
	}()

	// Fire the mentions, each in its own thread, at a steady rate; each
	// delivery runs on its own so a slow ack does not slow the rate.
	base := time.Now().Unix()
	threads := make([]string, mentions)
	acks := make([]delivery, mentions)
	var wg sync.WaitGroup
	tick := time.NewTicker(fireOver / time.Duration(mentions))
	h.mark(fmt.Sprintf("firing %d mentions over %s", mentions, fireOver))
	firstSent := time.Now()
	for i := range mentions {
		if i > 0 {
			<-tick.C
		}
		if i == mentions*2/3 {
			f.restart <- struct{}{}
		}
		threads[i] = fmt.Sprintf("%d.%06d", base, 100+i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			acks[i] = h.deliverMention(fmt.Sprintf("EvPg%d_%d", base, i), threads[i], fmt.Sprintf("question number %d", i))
		}()
	}
	tick.Stop()
	wg.Wait()
	lastAck := time.Since(firstSent)
	h.mark("every mention delivered; waiting for the replies")

	// Faults go on until every acknowledged thread has its reply, so they
	// land on turns in every stage.
	var acked []string
	eventOf := make(map[string]string, mentions)
	unacked := 0
	for i, d := range acks {
		eventOf[threads[i]] = d.eventID
		if d.acked {
			acked = append(acked, threads[i])
			if d.attempts > 1 {
				t.Logf("thread %s: acknowledged on attempt %d (earlier: %s); service log:\n%s", threads[i], d.attempts, d.failures, h.logLines(d.eventID))
			}
			continue
		}
		unacked++
		fail.Errorf("thread %s: Slack got no 200 in %d attempts: %s; service log:\n%s", threads[i], d.attempts, d.failures, h.logLines(d.eventID))
	}
	replied := poll(repliesWithin, func() bool { return h.allReplied(acked) })
	stopFaults()
	<-faultsDone
	h.mark(fmt.Sprintf("faults stopped: %d terminations, %d restarts", f.terminations, f.restarts))
	fail.Notef("faults: %d terminations, %d restarts (Postgres back %s after the restart began); the last mention acknowledged %s after the first was sent",
		f.terminations, f.restarts, f.restartTook.Round(10*time.Millisecond), lastAck.Round(time.Second))
	if !replied {
		fail.Errorf("not every thread had its reply within %s of the last mention", repliesWithin)
	}
	for _, e := range f.errs {
		fail.Errorf("injecting faults: %s", e)
	}
	if cluster != "" && f.restarts == 0 {
		fail.Errorf("CHAOS_PG_RESTART=1 but the cluster was not restarted")
	}
	h.waitIdle()

	// Count what users saw, thread by thread.
	all := h.slack.Messages(channel)
	byThread := make(map[string][]slacktest.Message)
	for _, m := range all {
		if m.User == botUser {
			byThread[m.ThreadTS] = append(byThread[m.ThreadTS], m)
		}
	}
	var lost, doubled, errorsShown, open int
	for _, thread := range acked {
		c := sl.count(thread)
		e := 0
		for _, m := range byThread[thread] {
			if isError(slackShown(m)) {
				e++
			}
		}
		if c.lost+c.doubled+c.open+e > 0 {
			fail.Errorf("thread %s: lost %d, doubled %d, open %d, errors shown %d; bot messages (deleted ones too):\n%s\nservice log lines about its event %s:\n%s",
				thread, c.lost, c.doubled, c.open, e, describeAll(byThread[thread]), eventOf[thread], h.logLines(eventOf[thread]))
		}
		lost += c.lost
		doubled += c.doubled
		open += c.open
		errorsShown += e
	}
	ours := make(map[string]bool, len(threads))
	for _, th := range threads {
		ours[th] = true
	}
	for th, msgs := range byThread {
		if !ours[th] {
			errorsShown += len(msgs)
			fail.Errorf("bot messages outside the mentioned threads (thread_ts %q):\n%s", th, describeAll(msgs))
		}
	}
	for _, c := range h.slack.Calls("chat.postEphemeral") {
		if isError(c.Params.Get("text")) {
			errorsShown++
			fail.Errorf("an ephemeral error was shown to %s in %s: %q", c.Params.Get("user"), c.Params.Get("channel"), c.Params.Get("text"))
		}
	}
	h.stop(syscall.SIGTERM)

	line := fmt.Sprintf("tried %d, lost %d, doubled %d, errors shown %d, open streams %d; terminations %d, restarts %d",
		mentions, lost, doubled, errorsShown, open, f.terminations, f.restarts)
	fmt.Println(t.Name(), line)
	if lost+doubled+errorsShown+open+unacked > 0 {
		if unacked > 0 {
			line += fmt.Sprintf("; %d mentions never acknowledged", unacked)
		}
		fail.Fatalf("a user saw a broken reply: %s; error lines of the service log:\n%s", line, h.logLines("level=ERROR"))
	}
}

// pgFaults terminates the service's connections every terminateEvery and
// restarts the cluster once when asked on restart. Its counts are read
// after run returns.
type pgFaults struct {
	admin, dbname string
	cluster       string        // "15/main", or "" for no restart
	down          time.Duration // CHAOS_PG_DOWN: keep the cluster stopped this long instead of restarting it
	restart       chan struct{}
	mark          func(string)                     // into the service log
	logf          func(format string, args ...any) // into both logs

	terminations int // backends terminated
	restarts     int
	restartTook  time.Duration // from the restart's start until Postgres accepted connections
	errs         []string
}

func (f *pgFaults) run(ctx context.Context) {
	tick := time.NewTicker(terminateEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			n, err := f.terminate(ctx)
			if err != nil && ctx.Err() == nil {
				// The cluster may be on its way back from the restart.
				f.logf("terminating connections: %v", err)
				continue
			}
			f.terminations += n
			f.mark(fmt.Sprintf("terminated %d connections", n))
		case <-f.restart:
			if f.cluster == "" {
				continue
			}
			start := time.Now()
			if err := f.restartCluster(); err != nil {
				f.errs = append(f.errs, err.Error())
				continue
			}
			if err := waitPostgres(f.admin, pgBackWithin); err != nil {
				f.errs = append(f.errs, err.Error())
				continue
			}
			f.restarts++
			f.restartTook = time.Since(start)
			f.logf("postgres accepts connections again, %s after the restart began", time.Since(start).Round(10*time.Millisecond))
		}
	}
}

// restartCluster restarts the cluster, or with down > 0 stops it, keeps it
// down that long and starts it: a longer outage than a restart's few
// seconds.
func (f *pgFaults) restartCluster() error {
	if f.down <= 0 {
		f.logf("restarting postgres cluster %s", f.cluster)
		if err := pgCtlCluster(f.cluster, "restart"); err != nil {
			return fmt.Errorf("restarting postgres: %w", err)
		}
		return nil
	}
	f.logf("stopping postgres cluster %s for %s", f.cluster, f.down)
	if err := pgCtlCluster(f.cluster, "stop"); err != nil {
		return fmt.Errorf("stopping postgres: %w", err)
	}
	time.Sleep(f.down) // the outage itself, not a wait for something
	f.logf("starting postgres cluster %s", f.cluster)
	if err := pgCtlCluster(f.cluster, "start"); err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	return nil
}

// terminate ends every connection of the service to the test's database.
func (f *pgFaults) terminate(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, f.admin)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	var n int
	err = conn.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))
		FROM pg_stat_activity
		WHERE datname = $1 AND pid <> pg_backend_pid() AND application_name = ANY($2)`,
		f.dbname, []string{serviceApp, listenerApp}).Scan(&n)
	return n, err
}

// delivery is how Slack's delivery of one event went.
type delivery struct {
	eventID  string
	acked    bool
	attempts int
	failures string // why earlier attempts failed
}

// deliverMention sends alice's signed app_mention starting thread the way
// Slack does: an attempt without a 200 within slackAckTimeout is retried,
// with the retry headers, up to slackRetries times. It runs off the test
// goroutine, so it reports instead of failing the test.
// slackRetryAfter is Slack's documented back-off before each retry.
var slackRetryAfter = []time.Duration{time.Second, time.Minute, 5 * time.Minute}

func (h *harness) deliverMention(eventID, thread, text string) delivery {
	ev := map[string]any{
		"type": "app_mention", "user": alice, "text": "<@" + botUser + "> " + text,
		"ts": thread, "channel": channel, "team": team, "event_ts": thread,
	}
	body := slacktest.MustJSON(slacktest.EventCallback(team, eventID, ev))
	client := &http.Client{Timeout: slackAckTimeout}
	defer client.CloseIdleConnections()
	d := delivery{eventID: eventID}
	var failures []string
	reason := ""
	for d.attempts < 1+slackRetries {
		if d.attempts > 0 {
			time.Sleep(slackRetryAfter[d.attempts-1])
		}
		req := slacktest.NewSignedRequest("http://"+h.addr+"/slack/events", "application/json", secret, time.Now(), body)
		if d.attempts > 0 {
			req.Header.Set("X-Slack-Retry-Num", strconv.Itoa(d.attempts))
			req.Header.Set("X-Slack-Retry-Reason", reason)
		}
		d.attempts++
		resp, err := client.Do(req)
		if err != nil {
			reason = "http_timeout"
			failures = append(failures, err.Error())
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			d.acked = true
			break
		}
		reason = "http_error"
		failures = append(failures, resp.Status)
	}
	d.failures = strings.Join(failures, "; ")
	return d
}

// allReplied reports whether every thread shows the whole reply in a
// finished message.
func (h *harness) allReplied(threads []string) bool {
	done := make(map[string]bool)
	for _, m := range h.slack.Messages(channel) {
		if m.User == botUser && !m.Deleted && !m.Streaming && slackShown(m) == reply {
			done[m.ThreadTS] = true
		}
	}
	for _, th := range threads {
		if !done[th] {
			return false
		}
	}
	return true
}

// logf writes a line into the service log and the test log, from any
// goroutine.
func (h *harness) logf(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	h.mark(s)
	h.t.Log(s)
}

// keepLogOnFailure copies the whole service log out of the test's
// temporary directory when the test failed, to read after it.
func (h *harness) keepLogOnFailure() {
	if !h.t.Failed() {
		return
	}
	data, err := os.ReadFile(h.log.Name())
	if err != nil {
		h.t.Logf("keeping the service log: %v", err)
		return
	}
	f, err := os.CreateTemp("", h.t.Name()+"-*.log")
	if err != nil {
		h.t.Logf("keeping the service log: %v", err)
		return
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		h.t.Logf("keeping the service log: %v", err)
		return
	}
	h.t.Logf("the whole service log is kept in %s", f.Name())
}

// logLines are the service log's lines that contain s, at most 60.
func (h *harness) logLines(s string) string {
	f, err := os.Open(h.log.Name())
	if err != nil {
		return "reading the service log: " + err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), s) {
			lines = append(lines, sc.Text())
		}
	}
	if len(lines) > 60 {
		lines = append(lines[:60], fmt.Sprintf("... and %d more", len(lines)-60))
	}
	return strings.Join(lines, "\n")
}

// isError reports whether a user would read text as an error.
func isError(text string) bool {
	return strings.HasPrefix(text, "⚠️") || strings.Contains(text, "failed")
}

func describeAll(msgs []slacktest.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "  ts %s streamed %v streaming %v deleted %v edits %d: %q\n", m.TS, m.Streamed, m.Streaming, m.Deleted, m.Edits, slackShown(m))
	}
	return b.String()
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

func envDuration(t *testing.T, name string) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d >= 30*time.Second {
		t.Fatalf("%s=%q: want a duration under 30s, as in 8s", name, v)
	}
	return d
}

func setEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

// withDatabase is base pointed at database dbname, its connections named
// app.
func withDatabase(t *testing.T, base, dbname, app string) string {
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("TEST_DATABASE_URL is not a URL: %v", err)
	}
	u.Path = "/" + dbname
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	return u.String()
}

// localCluster is the pg_ctlcluster name ("15/main") of the cluster
// TEST_DATABASE_URL points at, which must be on this machine.
func localCluster(t *testing.T, admin string) string {
	t.Helper()
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("TEST_DATABASE_URL is not a URL: %v", err)
	}
	if h := u.Hostname(); h != "127.0.0.1" && h != "localhost" && h != "::1" {
		t.Fatalf("CHAOS_PG_RESTART=1 restarts the local cluster, but TEST_DATABASE_URL points at %s", h)
	}
	versions, err := os.ReadDir("/etc/postgresql")
	if err != nil || len(versions) != 1 {
		t.Fatalf("CHAOS_PG_RESTART=1 needs exactly one cluster version under /etc/postgresql (found %d): %v", len(versions), err)
	}
	return versions[0].Name() + "/main"
}

func pgCtlCluster(cluster, action string) error {
	ctx, cancel := context.WithTimeout(context.Background(), pgBackWithin)
	defer cancel()
	version, name, _ := strings.Cut(cluster, "/")
	out, err := exec.CommandContext(ctx, "pg_ctlcluster", "--skip-systemctl-redirect", version, name, action).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctlcluster %s %s: %w: %s", cluster, action, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// waitPostgres waits until the server answers a ping.
func waitPostgres(admin string, within time.Duration) error {
	var last error
	ok := poll(within, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			last = err
			return false
		}
		defer conn.Close(context.Background())
		last = conn.Ping(ctx)
		return last == nil
	})
	if !ok {
		return fmt.Errorf("postgres did not accept connections within %s: %v", within, last)
	}
	return nil
}

// ensurePostgres leaves the cluster running, whatever happened to the
// restart.
func ensurePostgres(t *testing.T, admin, cluster string) {
	if waitPostgres(admin, 10*time.Second) == nil {
		return
	}
	t.Errorf("postgres was down at the end of the test; starting cluster %s", cluster)
	if err := pgCtlCluster(cluster, "start"); err != nil {
		t.Errorf("starting postgres: %v", err)
	}
	if err := waitPostgres(admin, pgBackWithin); err != nil {
		t.Error(err)
	}
}

// failSummary repeats a failing test's errors, one line each, at the very
// end of its output: a failing chaos test dumps the whole service log, and
// a CI that keeps only the output's tail would otherwise show the log and
// not why the test failed.
type failSummary struct {
	t     *testing.T
	mu    sync.Mutex
	lines []string
}

// newFailSummary registers the summary's print; call it first in a test,
// before the harness, so its cleanup runs after the harness's dump.
func newFailSummary(t *testing.T) *failSummary {
	s := &failSummary{t: t}
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if t.Failed() && len(s.lines) > 0 {
			t.Logf("%s failed; in short:\n%s", t.Name(), strings.Join(s.lines, "\n"))
		}
	})
	return s
}

func (s *failSummary) add(msg string) {
	first, _, _ := strings.Cut(msg, "\n")
	if len(first) > 400 {
		first = first[:400] + "…"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.lines) < 30 {
		s.lines = append(s.lines, "- "+first)
	}
}

// Notef keeps a line for the summary without failing the test.
func (s *failSummary) Notef(format string, args ...any) { s.add(fmt.Sprintf(format, args...)) }

// Errorf is t.Errorf, remembered for the summary.
func (s *failSummary) Errorf(format string, args ...any) {
	s.t.Helper()
	msg := fmt.Sprintf(format, args...)
	s.add(msg)
	s.t.Error(msg)
}

// Fatalf is t.Fatalf, remembered for the summary.
func (s *failSummary) Fatalf(format string, args ...any) {
	s.t.Helper()
	msg := fmt.Sprintf(format, args...)
	s.add(msg)
	s.t.Fatal(msg)
}
