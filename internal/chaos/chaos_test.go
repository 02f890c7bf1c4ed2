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

	"github.com/bwmarrin/discordgo"

	"github.com/switchboardhq/switchboard/internal/discordtest"
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
	// discordChunkDelay is slower: Discord shows a stream by an edit a
	// second, and a signal should land after each of the first few.
	discordChunkDelay = 100 * time.Millisecond
	leaseTTL          = "3s"
	// termGrace is how long a SIGTERM'd service may take to exit, as a
	// deploy would wait before killing it.
	termGrace = 15 * time.Second
)

var discordAlice = discordgo.User{ID: "2000000000000000001", Username: "alice"}

// reply is what the fake model answers to every call: about forty words,
// streamed a word at a time.
const reply = "Here is a careful answer in several parts. First, the delivery " +
	"stage records an intent before it posts. Second, a live stream is " +
	"written down so a recovery can take it over. Third, nothing should be " +
	"lost, doubled, cut short or left open after a crash."

var binary string // the switchboard binary TestMain builds

func TestMain(m *testing.M) { testenv.MainWithBinary(m, "chaos", &binary) }

// TestKill: kill -9 mid-stream, restart, and the thread ends up with the
// whole reply exactly once.
func TestKill(t *testing.T) {
	runChaos(t, newHarness(t, database(t), newSlack(t), chunkDelay), syscall.SIGKILL)
}

// TestSigterm: SIGTERM mid-stream (a deploy), restart, and the thread ends
// up with the whole reply exactly once.
func TestSigterm(t *testing.T) {
	runChaos(t, newHarness(t, database(t), newSlack(t), chunkDelay), syscall.SIGTERM)
}

// TestKillTakeover: kill -9 mid-stream and start another instance (a new
// SWITCHBOARD_INSTANCE_ID): it takes the turn over once the dead one's lease
// expires (the harness's lease TTL) and the thread ends up with the whole
// reply exactly once.
func TestKillTakeover(t *testing.T) {
	h := newHarness(t, database(t), newSlack(t), chunkDelay)
	h.nextInstance = func(run int) string { return fmt.Sprintf("chaos-instance-%d", run+1) }
	runChaos(t, h, syscall.SIGKILL)
}

// TestKillDiscord: kill -9 while a reply streams into Discord by throttled
// edits of one message, restart, and the channel ends up with the whole
// reply in one message: the restart takes the streamed message over.
func TestKillDiscord(t *testing.T) {
	runChaos(t, newHarness(t, database(t), newDiscord(t), discordChunkDelay), syscall.SIGKILL)
}

// lastTokenDelays are when TestKillAfterLastToken kills the service after
// the model's last event: while the stream is being finished, the entry
// written, the delivery recorded.
var lastTokenDelays = []time.Duration{5 * time.Millisecond, 15 * time.Millisecond, 30 * time.Millisecond}

// TestKillAfterLastToken: kill -9 at 5, 15 and 30 ms after the model's last
// token, restart, and the reply reaches the platform once, whole, with no
// stream left open.
func TestKillAfterLastToken(t *testing.T) {
	runs := chaosRuns(t)
	h := newHarness(t, database(t), newSlack(t), chunkDelay)
	ended := make(chan time.Time, 16)
	h.model.OnStreamEnd(func() {
		select {
		case ended <- time.Now():
		default:
		}
	})
	h.start()

	var tl tally
	for _, delay := range lastTokenDelays {
		for i := range runs {
			run := fmt.Sprintf("%s run %d", delay, i)
			for len(ended) > 0 {
				<-ended // a model call of an earlier run
			}
			where := h.plat.mention(h, len(tl.runs))
			h.mark(fmt.Sprintf("%s: mention in %s", run, where))
			var last time.Time
			select {
			case last = <-ended:
			case <-time.After(waitLong):
				t.Errorf("%s: the model did not finish a reply within %s; messages:\n%s", run, waitLong, h.plat.describe(where))
			}
			<-time.After(time.Until(last.Add(delay)))
			h.mark(fmt.Sprintf("%s: killing %s after the model's last event", run, time.Since(last).Round(100*time.Microsecond)))
			h.stop(syscall.SIGKILL)
			tl.add(h.restartAndCount(run, where))
		}
	}
	h.stop(syscall.SIGTERM)
	tl.report(t, h.plat)
}

// runChaos mentions the bot CHAOS_RUNS times, each time sends sig while the
// reply is half shown, restarts the service and counts what the user sees.
func runChaos(t *testing.T, h *harness, sig syscall.Signal) {
	runs := chaosRuns(t)
	h.start()

	var tl tally
	for i := range runs {
		run := fmt.Sprintf("run %d", i)
		where := h.plat.mention(h, i)
		h.mark(fmt.Sprintf("%s: mention in %s", run, where))
		h.t.Logf("%s: %s", run, where)
		// Vary where the signal lands: run 0 at the first streamed words,
		// later runs up to about two thirds into the reply (later than that
		// Slack's batched appends can finish the stream before a poll sees
		// it open).
		shownAtLeast := len(reply) * (i * 37 % 70) / 100
		if !poll(waitLong, func() bool { return h.plat.midStream(where, shownAtLeast) }) {
			t.Errorf("%s: no streaming message in %s within %s; messages:\n%s", run, where, waitLong, h.plat.describe(where))
		}
		h.stop(sig)
		if h.nextInstance != nil {
			h.env = setEnv(h.env, "SWITCHBOARD_INSTANCE_ID", h.nextInstance(i))
		}
		tl.add(h.restartAndCount(run, where))
	}
	h.stop(syscall.SIGTERM)
	tl.report(t, h.plat)
}

// chaosRuns is CHAOS_RUNS, the signals per test (and per delay), default 5.
func chaosRuns(t *testing.T) int {
	v := os.Getenv("CHAOS_RUNS")
	if v == "" {
		return 5
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("CHAOS_RUNS=%q: want a positive number", v)
	}
	return n
}

// restartAndCount starts the stopped service again, waits until it has
// answered and gone idle, and counts what went wrong in where. The latency
// is from the restart to the whole reply showing; ok is false when it never
// did.
func (h *harness) restartAndCount(run, where string) (c counts, latency time.Duration, ok bool) {
	h.t.Helper()
	restarted := time.Now()
	h.start()
	if poll(waitLong, func() bool { return h.plat.replied(where) }) {
		latency, ok = time.Since(restarted), true
	}
	h.waitIdle()
	c = h.plat.count(where)
	if c.lost+c.doubled+c.open+c.cut > 0 {
		h.t.Errorf("%s (%s): lost %d, doubled %d, open %d, cut %d; messages:\n%s", run, where, c.lost, c.doubled, c.open, c.cut, h.plat.describe(where))
	}
	return c, latency, ok
}

// tally adds up the runs of one test.
type tally struct {
	runs      []counts
	total     counts
	latencies []time.Duration
}

func (tl *tally) add(c counts, latency time.Duration, ok bool) {
	tl.runs = append(tl.runs, c)
	tl.total.lost += c.lost
	tl.total.doubled += c.doubled
	tl.total.open += c.open
	tl.total.cut += c.cut
	if ok {
		tl.latencies = append(tl.latencies, latency)
	}
}

// report prints the test's count line and fails the test on any count above
// zero. Open streams are counted only where the platform has them.
func (tl *tally) report(t *testing.T, p platform) {
	c := tl.total
	open := ""
	if p.streams() {
		open = fmt.Sprintf(", open streams %d", c.open)
	}
	line := fmt.Sprintf("tried %d, lost %d, doubled %d%s, cut %d; restart to reply %s",
		len(tl.runs), c.lost, c.doubled, open, c.cut, percentiles(tl.latencies))
	fmt.Println(t.Name(), os.Getenv("CHAOS_DB"), line)
	if c.lost+c.doubled+c.open+c.cut > 0 {
		t.Fatalf("a user saw a broken reply: %s", line)
	}
}

// counts is what a user sees wrong in one conversation.
type counts struct{ lost, doubled, open, cut int }

// platform is the fake chat platform the service talks to, and how a user
// there asks the bot and reads its reply.
type platform interface {
	// env points the service at the fake.
	env() []string
	// connected is polled after the service answers /readyz, until the
	// service can be sent a message; it is made before each start.
	connected() func() bool
	// mention asks the bot question number run in a new conversation and
	// returns where the reply goes, for the other methods and for logs.
	mention(h *harness, run int) string
	// midStream reports whether where shows more than atLeast bytes, not
	// all, of the reply in a message still being written.
	midStream(where string, atLeast int) bool
	// replied reports whether where shows the whole reply, finished.
	replied(where string) bool
	count(where string) counts
	// describe lists the bot's messages in where, for a failure.
	describe(where string) string
	// streams reports whether the platform has open and closed streams,
	// so that open ones count.
	streams() bool
}

// slack is the fake Slack: events go to the service's /slack/events, and
// each mention starts a thread of its own.
type slack struct{ fake *slacktest.Server }

func newSlack(t *testing.T) *slack {
	fake := slacktest.NewServer(slacktest.Options{BotToken: botToken, BotUserID: botUser, TeamID: team})
	t.Cleanup(fake.Close)
	return &slack{fake: fake}
}

func (p *slack) env() []string {
	return []string{
		"SLACK_BOT_TOKEN=" + botToken,
		"SLACK_SIGNING_SECRET=" + secret,
		"SLACK_API_URL=" + p.fake.APIURL(),
	}
}

func (p *slack) connected() func() bool { return func() bool { return true } }

func (p *slack) streams() bool { return true }

// mention sends alice's signed app_mention starting a thread and returns
// the thread's ts.
func (p *slack) mention(h *harness, run int) string {
	h.t.Helper()
	thread := fmt.Sprintf("%d.%06d", time.Now().Unix(), 100+run)
	h.mentionIn(channel, fmt.Sprintf("EvChaos%d%d", run, time.Now().UnixNano()), thread, fmt.Sprintf("question number %d", run))
	return thread
}

// mentionIn sends alice's signed app_mention in channel ch, starting the
// thread thread, and wants it acknowledged.
func (h *harness) mentionIn(ch, eventID, thread, text string) {
	h.t.Helper()
	ev := map[string]any{
		"type": "app_mention", "user": alice, "text": "<@" + botUser + "> " + text,
		"ts": thread, "channel": ch, "team": team, "event_ts": thread,
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
func (p *slack) botMessages(thread string) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range p.fake.Messages(channel) {
		if m.User == botUser && m.ThreadTS == thread && !m.Deleted {
			out = append(out, m)
		}
	}
	return out
}

func (p *slack) midStream(thread string, atLeast int) bool {
	for _, m := range p.botMessages(thread) {
		if m.Streaming && len(m.Markdown) > atLeast && len(m.Markdown) < len(reply) {
			return true
		}
	}
	return false
}

func (p *slack) replied(thread string) bool {
	for _, m := range p.botMessages(thread) {
		if !m.Streaming && slackShown(m) == reply {
			return true
		}
	}
	return false
}

func (p *slack) count(thread string) counts {
	msgs := p.botMessages(thread)
	var c counts
	whole := false
	for _, m := range msgs {
		if m.Streaming {
			c.open++
		}
		s := slackShown(m)
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

func (p *slack) describe(thread string) string {
	var b strings.Builder
	for _, m := range p.botMessages(thread) {
		fmt.Fprintf(&b, "  ts %s streamed %v streaming %v edits %d: %q\n", m.TS, m.Streamed, m.Streaming, m.Edits, slackShown(m))
	}
	return b.String()
}

// slackShown is what a person sees of a message: the streamed Markdown of a
// chat.startStream message, else its text.
func slackShown(m slacktest.Message) string {
	if m.Streamed {
		return m.Markdown
	}
	return m.Text
}

// discord is the fake Discord: REST and gateway on one local server, which
// outlives every service process; each mention is in a channel of its own.
type discord struct{ fake *discordtest.Server }

func newDiscord(t *testing.T) *discord {
	return &discord{fake: discordtest.NewServer(t)}
}

func (p *discord) env() []string {
	return []string{
		"DISCORD_BOT_TOKEN=" + p.fake.Token,
		"DISCORD_API_URL=" + p.fake.URL,
	}
}

// connected holds until the process being started has identified on the
// gateway: a message sent before that would go to no one (a new session
// does not replay the old one's events).
func (p *discord) connected() func() bool {
	before := p.fake.GatewayStats().Identifies
	return func() bool {
		st := p.fake.GatewayStats()
		return st.Connected && st.Identifies > before
	}
}

func (p *discord) streams() bool { return false }

// mention sends alice's message mentioning the bot in a new channel and
// returns the channel's id.
func (p *discord) mention(_ *harness, run int) string {
	ch := fmt.Sprintf("30000000000%08d", run)
	p.fake.UserMessage(ch, discordAlice, "<@"+p.fake.Bot.ID+"> "+fmt.Sprintf("question number %d", run))
	return ch
}

func (p *discord) texts(ch string) []string {
	var out []string
	for _, m := range p.fake.BotMessages(ch) {
		out = append(out, m.Content)
	}
	return out
}

func (p *discord) midStream(ch string, atLeast int) bool { return midStreamIn(p.texts(ch), atLeast) }
func (p *discord) replied(ch string) bool                { return repliedIn(p.texts(ch)) }
func (p *discord) count(ch string) counts                { return countIn(p.texts(ch)) }

func (p *discord) describe(ch string) string {
	var b strings.Builder
	for _, m := range p.fake.BotMessages(ch) {
		fmt.Fprintf(&b, "  id %s nonce %q edits %d at %s: %q\n", m.ID, m.Nonce, m.Edits, m.Timestamp.Format("15:04:05.000"), m.Content)
	}
	// The calls show which process wrote what, against the service log.
	prefix := "/channels/" + ch + "/"
	for _, c := range p.fake.Calls() {
		if strings.HasPrefix(c.Path, prefix) && c.Method != http.MethodGet {
			fmt.Fprintf(&b, "  call %s %s %s -> %d: %.120s\n", c.At.Format("15:04:05.000"), c.Method, c.Path, c.Status, c.Body)
		}
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
		schema := testenv.PostgresEmptySchema(t)
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
	plat  platform
	model *modeltest.Fake
	http  *http.Client
	st    store.Store
	// nextInstance, when set, names the instance each restart runs as
	// (another instance taking over), instead of the same one again.
	nextInstance func(run int) string
	// slack is the fake Slack of a test that reads it directly
	// (TestPostgresFaults); nil otherwise.
	slack *slacktest.Server

	cmd  *exec.Cmd
	done chan error // the running process's Wait
}

// newHarness is a service on db talking to plat and to a fake model that
// answers reply to every call, pausing delay between streamed words.
func newHarness(t *testing.T, db string, plat platform, delay time.Duration) *harness {
	model := modeltest.NewAnthropic(t)
	model.Default(modeltest.Reply{Text: reply, Delay: delay})

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
	// The chaos runs are not about access: anyone may DM the agent.
	config := filepath.Join(dir, "switchboard.yaml")
	if err := os.WriteFile(config, []byte("access:\n  dm_policy: open\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := &harness{
		t: t, db: db, addr: addr, log: log, plat: plat, model: model,
		http: &http.Client{Timeout: 10 * time.Second},
		env: append([]string{
			"PATH=" + os.Getenv("PATH"),
			"HOME=" + dir,
			"SWITCHBOARD_ADDR=" + addr,
			"SWITCHBOARD_LEASE_TTL=" + leaseTTL,
			"SWITCHBOARD_MODEL=anthropic:claude-sonnet-4-5",
			"SWITCHBOARD_LOG_LEVEL=debug",
			"DATABASE_URL=" + db,
			"SWITCHBOARD_CONFIG=" + config,
			"ANTHROPIC_API_KEY=sk-ant-test",
			"ANTHROPIC_BASE_URL=" + model.URL,
		}, plat.env()...),
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
	connected := h.plat.connected()
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
		return resp.StatusCode == http.StatusOK && connected()
	})
	select {
	case err := <-done:
		h.cmd = nil
		h.t.Fatalf("switchboard exited while starting: %v", err)
	default:
	}
	if !ok {
		h.t.Fatalf("switchboard was not ready (and connected to the platform) within %s", waitLong)
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

// The counts of a platform whose bot messages are plain texts (Discord,
// Telegram, Matrix), from the texts the bot's messages show now, one per
// message made for the mention.

// midStreamIn: one of texts shows more than atLeast bytes of the reply,
// and not all of it.
func midStreamIn(texts []string, atLeast int) bool {
	for _, t := range texts {
		if len(t) > atLeast && len(t) < len(reply) && strings.HasPrefix(reply, t) {
			return true
		}
	}
	return false
}

// repliedIn: one of texts is the whole reply.
func repliedIn(texts []string) bool { return slices.Contains(texts, reply) }

// countIn: lost when no text is the whole reply, doubled when the bot made
// more than one message for the mention, cut for each text showing only the
// start of the reply.
func countIn(texts []string) counts {
	var c counts
	for _, t := range texts {
		if len(t) < len(reply) && strings.HasPrefix(reply, t) {
			c.cut++
		}
	}
	if !repliedIn(texts) {
		c.lost = 1
	}
	if len(texts) > 1 {
		c.doubled = 1
	}
	return c
}
