package app_test

// End-to-end tests of Slack through the real service: app.Open wires the
// store (SQLite, and Postgres when TEST_DATABASE_URL is set), core, the
// worker, the delivery router and the Slack adapter; the only fakes are
// Slack itself (internal/slacktest, spoken to by slack-go) and the model (the
// scripted backend replaying testdata/slack_e2e.yaml).

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/discordtest"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	e2eSecret   = "e2e-signing-secret"
	e2eBotToken = "xoxb-e2e"
	e2eAppToken = "xapp-e2e"
	e2eTeam     = "T0FAKE"
	e2eBotUser  = "U0BOT"
	alice       = "U0ALICE"
	mallory     = "U0MALLORY"

	// waitLong bounds every wait for the service; it is far above what a turn
	// takes, so it only decides how long a broken build takes to fail.
	waitLong = 60 * time.Second
)

// fallbackReply is what the script answers to a message of alice's without
// a keyword (see testdata/slack_e2e.yaml): core shows the model each message
// under its speaker's display name, read from users.info ("User U0ALICE" is
// the fake's real_name for alice; the id alone would be "[U0ALICE]"), and
// the script echoes that.
func fallbackReply(userText string) string {
	return "Hello from the scripted model. You said: [User " + alice + "] " + userText
}

// databaseFunc returns a DATABASE_URL for a fresh, empty store.
type databaseFunc func(tb testing.TB) string

// eachStore runs f on SQLite, and on Postgres when TEST_DATABASE_URL is set
// (testenv.PostgresURL decides whether a missing one skips or fails).
func eachStore(t *testing.T, f func(t *testing.T, db databaseFunc)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		f(t, sqliteDatabase)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		testenv.PostgresURL(t)
		f(t, postgresDatabase)
	})
}

// eachStoreInTurn is eachStore one store after the other, for a test that
// sets the process's environment (t.Setenv), which parallel tests cannot,
// or that times what it checks.
func eachStoreInTurn(t *testing.T, f func(t *testing.T, db databaseFunc)) {
	t.Run("sqlite", func(t *testing.T) { f(t, sqliteDatabase) })
	t.Run("postgres", func(t *testing.T) {
		testenv.PostgresURL(t)
		f(t, postgresDatabase)
	})
}

func sqliteDatabase(tb testing.TB) string {
	return "sqlite:" + testenv.SQLiteFile(tb)
}

// slackEnv is one running service and the fake Slack it talks to.
type slackEnv struct {
	tb    testing.TB
	app   *app.App
	slack *slacktest.Server
	base  string // http://host:port of the service
	store store.Store
	http  *http.Client
	// db and opts started the service; restart starts it again with them.
	db   string
	opts envOptions
}

type envOptions struct {
	logger *slog.Logger // default: the test's log
	// env overrides the service's environment (the scripted model by
	// default), e.g. to point it at a fake provider.
	env map[string]string
	// config is the switchboard.yaml to read (default: openAccess).
	config string
	now    func() time.Time // the service's clock (default: time.Now)
	// discord, when set, is a fake Discord the service connects to as well.
	discord    *discordtest.Server
	profileTTL time.Duration // SWITCHBOARD_PROFILE_TTL (default 24h)
	mcpConfig  string        // SWITCHBOARD_MCP_CONFIG (default: none)
	apiToken   string        // SWITCHBOARD_API_TOKEN (default: none, loopback only)
	// tracer, when set, records the service's spans.
	tracer trace.TracerProvider
	// instanceID names the instance in leases (default: from the database);
	// two instances on one database need their own.
	instanceID string
	// cli configures the agents that run on a coding CLI (default: none).
	cli app.CLISettings
	// addr is the service's listen address (default 127.0.0.1:0).
	addr string
	// slack is the fake Slack to talk to (default: a new one); a restarted
	// service keeps its predecessor's.
	slack *slacktest.Server
	// configure, when set, changes the configuration before the service
	// opens (settings FromEnv would read, such as SWITCHBOARD_MODEL_TIMEOUT).
	configure func(*app.Config)
}

// startSlack opens and starts the service on the database db with both the
// HTTP Events API and Socket Mode on, and waits for the Socket Mode
// connection. Everything is stopped when the test ends.
func startSlack(tb testing.TB, db string, opts envOptions) *slackEnv {
	tb.Helper()
	srv := opts.slack
	if srv == nil {
		srv = slacktest.NewServer(slacktest.Options{BotToken: e2eBotToken, AppToken: e2eAppToken, BotUserID: e2eBotUser, TeamID: e2eTeam})
		tb.Cleanup(srv.Close)
	}
	connections := srv.Connections()

	script, err := filepath.Abs(filepath.Join("testdata", "slack_e2e.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		tb.Fatalf("the e2e script is missing: %v", err)
	}
	env := map[string]string{"SWITCHBOARD_MODEL": "scripted:" + script}
	for k, v := range opts.env {
		env[k] = v
	}
	logger := opts.logger
	if logger == nil {
		logger = testenv.Logger(tb)
	}
	cfg := app.Config{
		Addr:               cmp.Or(opts.addr, "127.0.0.1:0"),
		DatabaseURL:        db,
		SlackBotToken:      e2eBotToken,
		SlackAppToken:      e2eAppToken,
		SlackSigningSecret: e2eSecret,
		SlackAPIURL:        srv.APIURL(),
		ConfigPath:         writeConfig(tb, cmp.Or(opts.config, openAccess)),
		Env:                func(k string) string { return env[k] },
		Logger:             logger,
		Now:                opts.now,
		ProfileTTL:         opts.profileTTL,
		MCPConfigPath:      opts.mcpConfig,
		APIToken:           opts.apiToken,
		TracerProvider:     opts.tracer,
		InstanceID:         opts.instanceID,
		CLI:                opts.cli,
	}
	if opts.discord != nil {
		cfg.DiscordBotToken, cfg.DiscordAPIURL = opts.discord.Token, opts.discord.URL
	}
	if opts.configure != nil {
		opts.configure(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := app.Open(ctx, cfg)
	if err != nil {
		tb.Fatalf("opening the service: %v", err)
	}
	// Start's context is the service's lifetime, not a deadline.
	if err := a.Start(context.Background()); err != nil {
		_ = a.Stop(context.Background())
		tb.Fatalf("starting the service: %v", err)
	}
	tb.Cleanup(func() {
		if opts.discord != nil {
			// As in discordStartWith: not before discordgo's first heartbeat.
			opts.discord.WaitGateway(tb, "a heartbeat on the live socket before stopping", func(st discordtest.GatewayStats) bool {
				return !st.Connected || st.LiveHeartbeats >= 1
			})
		}
		_ = a.Stop(context.Background())
	})
	if err := srv.WaitConnections(connections+1, waitLong); err != nil {
		tb.Fatalf("the service did not open Socket Mode: %v", err)
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	tb.Cleanup(client.CloseIdleConnections)
	return &slackEnv{tb: tb, app: a, slack: srv, base: "http://" + a.Addr(), store: a.Store, http: client, db: db, opts: opts}
}

// restart stops the service (running handlers finish first, as in a
// deploy), calls between while no service runs (nil: nothing), and starts
// a new one on the same database and fake Slack.
func (e *slackEnv) restart(between func()) *slackEnv {
	e.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	if err := e.app.Stop(ctx); err != nil {
		e.tb.Fatalf("stopping the service: %v", err)
	}
	if between != nil {
		between()
	}
	opts := e.opts
	opts.slack = e.slack
	return startSlack(e.tb, e.db, opts)
}

// mention is an app_mention event of user in channel at ts (a new thread when
// thread is "").
func mention(channel, ts, thread, user, text string) map[string]any {
	ev := map[string]any{
		"type": "app_mention", "user": user, "text": "<@" + e2eBotUser + "> " + text,
		"ts": ts, "channel": channel, "team": e2eTeam, "event_ts": ts,
	}
	if thread != "" {
		ev["thread_ts"] = thread
	}
	return ev
}

// directMessage is a top-level message in a DM, which needs no mention.
func directMessage(channel, ts, user, text string) map[string]any {
	return map[string]any{
		"type": "message", "channel_type": "im", "user": user, "text": text,
		"ts": ts, "channel": channel, "team": e2eTeam, "event_ts": ts,
	}
}

// signedEvent is an Events API request for ev, signed at signedAt with secret.
type signedEvent struct {
	body     []byte
	secret   string
	signedAt time.Time
	header   http.Header // extra headers (retries)
}

func newEvent(eventID string, ev map[string]any) signedEvent {
	return signedEvent{
		body:     slacktest.MustJSON(slacktest.EventCallback(e2eTeam, eventID, ev)),
		secret:   e2eSecret,
		signedAt: time.Now(),
	}
}

// post sends the event to POST /slack/events and returns the status.
func (e *slackEnv) post(ev signedEvent) int {
	e.tb.Helper()
	req := slacktest.NewSignedRequest(e.base+"/slack/events", "application/json", ev.secret, ev.signedAt, ev.body)
	for k, vs := range ev.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := e.http.Do(req)
	if err != nil {
		e.tb.Fatalf("posting a slack event: %v", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func (e *slackEnv) mustPost(ev signedEvent) {
	e.tb.Helper()
	if got := e.post(ev); got != http.StatusOK {
		e.tb.Fatalf("POST /slack/events answered %d, want 200", got)
	}
}

// poll calls cond until it reports done or waitLong passes; cond's message
// says what was last seen, for the failure.
func poll(tb testing.TB, what string, cond func() (bool, string)) {
	tb.Helper()
	pollFor(tb, waitLong, 10*time.Millisecond, what, cond)
}

func pollFor(tb testing.TB, timeout, every time.Duration, what string, cond func() (bool, string)) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		ok, seen := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("waited %s for %s; last seen: %s", timeout, what, seen)
		}
		<-tick.C
	}
}

// waitCalls waits for n calls of a Web API method.
func (e *slackEnv) waitCalls(method string, n int) []slacktest.Call {
	e.tb.Helper()
	calls, err := e.slack.WaitCalls(method, n, waitLong)
	if err != nil {
		e.tb.Fatal(err)
	}
	return calls
}

// botMessages are the bot's live (not deleted) messages in channel.
func (e *slackEnv) botMessages(channel string) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range e.slack.Messages(channel) {
		if m.User == e2eBotUser && !m.Deleted {
			out = append(out, m)
		}
	}
	return out
}

// shown is what a person sees of a message: the streamed Markdown of a
// chat.startStream message, else its text.
func shown(m slacktest.Message) string {
	if m.Streamed {
		return m.Markdown
	}
	return m.Text
}

// waitReply waits until a finished bot message in channel shows text
// containing want, and returns it.
func (e *slackEnv) waitReply(channel, want string) slacktest.Message {
	e.tb.Helper()
	var found slacktest.Message
	poll(e.tb, fmt.Sprintf("a reply containing %q in %s", want, channel), func() (bool, string) {
		msgs := e.botMessages(channel)
		for _, m := range msgs {
			if !m.Streaming && strings.Contains(shown(m), want) {
				found = m
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", msgs)
	})
	return found
}

// waitIdle waits until no work is queued or running, so that nothing more
// will be posted for what was sent so far.
func (e *slackEnv) waitIdle() {
	e.tb.Helper()
	e.waitIdleFor(waitLong, 10*time.Millisecond)
}

// waitIdleFor is waitIdle with its own deadline and polling interval, for
// benchmarks, whose measurements a busy poll would disturb.
func (e *slackEnv) waitIdleFor(timeout, every time.Duration) {
	e.tb.Helper()
	pollFor(e.tb, timeout, every, "the work queue to drain", func() (bool, string) {
		items, err := e.queued(1)
		if err != nil {
			return false, err.Error()
		}
		if len(items) == 0 {
			return true, ""
		}
		return false, describeItem(items[0])
	})
}

// queued lists the work items still to run (available or running), at
// most limit of them (0: all).
func (e *slackEnv) queued(limit int) ([]*store.WorkItem, error) {
	return e.store.WorkList(context.Background(), &store.WorkListParams{
		States: []store.WorkState{store.WorkAvailable, store.WorkRunning}, Limit: limit,
	})
}

// describeItem is how a wait's failure names the item it waited on.
func describeItem(it *store.WorkItem) string {
	return fmt.Sprintf("%s item %s %s, attempts %d, last error %q", it.Kind, it.ID, it.State, it.Attempts, it.LastError)
}

// waitDrainedWhileMoving waits for the work queue to drain for as long as
// it keeps draining: it fails when the number of available and running
// items has not fallen for stall, so a loaded machine that answers slower
// still passes and a stuck item still fails within stall.
func (e *slackEnv) waitDrainedWhileMoving(stall, every time.Duration) {
	e.tb.Helper()
	fewest, since := -1, time.Now()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		items, err := e.queued(0)
		if err != nil {
			e.tb.Fatalf("listing the work queue: %v", err)
		}
		if len(items) == 0 {
			return
		}
		if fewest < 0 || len(items) < fewest {
			fewest, since = len(items), time.Now()
		}
		if time.Since(since) > stall {
			e.tb.Fatalf("the work queue stopped draining: %d items left for %s; first: %s", len(items), stall, describeItem(items[0]))
		}
		<-tick.C
	}
}

// conversation is the conversation bound to a Slack thread, waiting for the
// binding: with the default deferred ack, an event's message is bound right
// after the ack, not before it.
func (e *slackEnv) conversation(channel, thread string) *store.Conversation {
	e.tb.Helper()
	ctx := context.Background()
	var b *store.Binding
	poll(e.tb, fmt.Sprintf("the conversation of %s/%s to be bound", channel, thread), func() (bool, string) {
		var err error
		b, err = e.store.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns("slack", e2eTeam, channel, thread)})
		if err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	c, err := e.store.ConversationGet(ctx, b.ConversationID)
	if err != nil {
		e.tb.Fatalf("loading conversation %s: %v", b.ConversationID, err)
	}
	return c
}

// entries lists a conversation's log by kind.
func (e *slackEnv) entries(conv uuid.UUID, kind store.EntryKind) []*store.Entry {
	e.tb.Helper()
	return logEntries(e.tb, e.store, conv, kind)
}

// checkOneReply checks the store side of one answered message.
func (e *slackEnv) checkOneReply(conv uuid.UUID, userText, reply string) {
	e.tb.Helper()
	checkOneExchange(e.tb, e.store, conv, userText, reply)
}

// TestSlackMessageIsAnsweredOnce: a signed event over HTTP gets exactly one
// reply in the right place, streamed, with the scripted text.
func TestSlackMessageIsAnsweredOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		event    map[string]any
		channel  string
		thread   string // the reply's thread_ts; also the binding's thread
		userText string
		native   bool // Slack's chat streaming API, else post + update
	}{
		{
			name:     "channel mention streams natively in the mention's thread",
			event:    mention("C0MENTION", "1700000100.000100", "", alice, "hello there"),
			channel:  "C0MENTION",
			thread:   "1700000100.000100",
			userText: "hello there",
			native:   true,
		},
		{
			name:     "mention inside a thread answers in that thread",
			event:    mention("C0THREAD", "1700000100.000300", "1700000100.000200", alice, "hello from a thread"),
			channel:  "C0THREAD",
			thread:   "1700000100.000200",
			userText: "hello from a thread",
			native:   true,
		},
		{
			name:     "top-level direct message falls back to post and update",
			event:    directMessage("D0ALICE", "1700000100.000400", alice, "hello in private"),
			channel:  "D0ALICE",
			thread:   "",
			userText: "hello in private",
			native:   false,
		},
	}
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{})
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				e.tb = t
				want := fallbackReply(tt.userText)
				e.mustPost(newEvent(fmt.Sprintf("EvAnswer%d", i), tt.event))
				got := e.waitReply(tt.channel, want)
				e.waitIdle()

				msgs := e.botMessages(tt.channel)
				if len(msgs) != 1 {
					t.Fatalf("%d bot messages in %s, want exactly 1: %+v", len(msgs), tt.channel, msgs)
				}
				if got.ThreadTS != tt.thread {
					t.Errorf("reply thread_ts = %q, want %q", got.ThreadTS, tt.thread)
				}
				if shown(got) != want {
					t.Errorf("reply shows %q, want exactly %q", shown(got), want)
				}
				if tt.native {
					if !got.Streamed {
						t.Errorf("reply was not made with chat.startStream: %+v", got)
					}
					starts := e.slack.Calls("chat.startStream")
					var mine []slacktest.Call
					for _, c := range starts {
						if c.Params.Get("channel") == tt.channel {
							mine = append(mine, c)
						}
					}
					if len(mine) != 1 {
						t.Fatalf("%d chat.startStream calls in %s, want 1", len(mine), tt.channel)
					}
					if p := mine[0].Params; p.Get("thread_ts") != tt.thread || p.Get("recipient_user_id") != alice || p.Get("recipient_team_id") != e2eTeam {
						t.Errorf("chat.startStream params = %v, want thread_ts %s, recipient %s in %s", p, tt.thread, alice, e2eTeam)
					}
					if mine[0].Params.Get("markdown_text") == want {
						t.Errorf("chat.startStream already carried the whole reply: nothing was streamed")
					}
				} else {
					if got.Streamed {
						t.Errorf("a reply outside a thread used chat.startStream, which needs a thread: %+v", got)
					}
					if got.Edits < 1 {
						t.Errorf("reply was posted whole (0 edits), want a streamed first part edited to the final text")
					}
				}
				conv := e.conversation(tt.channel, tt.thread)
				e.checkOneReply(conv.ID, tt.userText, want)
			})
		}
	})
}

// TestSlackRetriedEventIsAnsweredOnce: Slack redelivers an event it thinks
// timed out; the retry is acknowledged and changes nothing, also while the
// first delivery's turn is still running.
func TestSlackRetriedEventIsAnsweredOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		userText string
		reply    string
		// whileRunning sends the retry once the turn has started and before it
		// has written anything (the script waits 2s before this reply).
		whileRunning bool
	}{
		{name: "after the reply", userText: "hello again", reply: fallbackReply("hello again")},
		{name: "while the turn runs", userText: "slow please", reply: "A slow answer, after thinking it over.", whileRunning: true},
	}
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{})
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				e.tb = t
				channel, ts := fmt.Sprintf("C0RETRY%d", i), fmt.Sprintf("1700000200.%06d", i)
				first := newEvent(fmt.Sprintf("EvRetry%d", i), mention(channel, ts, "", alice, tt.userText))
				e.mustPost(first)

				if tt.whileRunning {
					poll(t, "the turn to start", func() (bool, string) {
						b, err := e.store.BindingFind(context.Background(), &store.BindingFindParams{Place: store.PlaceFromColumns("slack", e2eTeam, channel, ts)})
						if err != nil {
							return false, err.Error()
						}
						c, err := e.store.ConversationGet(context.Background(), b.ConversationID)
						if err != nil {
							return false, err.Error()
						}
						return c.Status == store.ConversationRunning, string(c.Status)
					})
				} else {
					e.waitReply(channel, tt.reply)
				}

				retry := first
				retry.signedAt = time.Now()
				retry.header = http.Header{"X-Slack-Retry-Num": {"1"}, "X-Slack-Retry-Reason": {"http_timeout"}}
				e.mustPost(retry)
				if tt.whileRunning {
					if n := len(e.botMessages(channel)); n != 0 {
						t.Fatalf("the reply was already posted (%d messages) when the retry was acknowledged: the retry did not arrive while the turn ran", n)
					}
				}

				got := e.waitReply(channel, tt.reply)
				e.waitIdle()
				if msgs := e.botMessages(channel); len(msgs) != 1 {
					t.Fatalf("%d bot messages in %s after a retried event, want exactly 1: %+v", len(msgs), channel, msgs)
				}
				if shown(got) != tt.reply || got.ThreadTS != ts {
					t.Errorf("reply = %q in thread %q, want %q in %q", shown(got), got.ThreadTS, tt.reply, ts)
				}
				conv := e.conversation(channel, ts)
				e.checkOneReply(conv.ID, tt.userText, tt.reply)
				turns, err := e.store.WorkList(context.Background(), &store.WorkListParams{Kind: core.WorkTurn, ConversationID: &conv.ID, Limit: 10})
				if err != nil {
					t.Fatal(err)
				}
				if len(turns) != 1 {
					t.Errorf("%d turns were queued for the conversation, want 1", len(turns))
				}
			})
		}
	})
}

// TestSlackRejectsUnsignedEvents: a request with a bad or stale signature is
// refused with 401 and leaves no trace in the store; the same event signed
// properly is then taken, which shows the store checks can see one.
func TestSlackRejectsUnsignedEvents(t *testing.T) {
	t.Parallel()
	const jsonType = "application/json"
	tests := []struct {
		name    string
		request func(target string, body, other []byte) *http.Request
	}{
		{name: "wrong secret", request: func(target string, body, _ []byte) *http.Request {
			return slacktest.NewSignedRequest(target, jsonType, "not-the-secret", time.Now(), body)
		}},
		{name: "signed six minutes ago", request: func(target string, body, _ []byte) *http.Request {
			return slacktest.NewSignedRequest(target, jsonType, e2eSecret, time.Now().Add(-6*time.Minute), body)
		}},
		{name: "signed six minutes ahead", request: func(target string, body, _ []byte) *http.Request {
			return slacktest.NewSignedRequest(target, jsonType, e2eSecret, time.Now().Add(6*time.Minute), body)
		}},
		{name: "body changed after signing", request: func(target string, body, other []byte) *http.Request {
			now := time.Now()
			req := slacktest.NewSignedRequest(target, jsonType, e2eSecret, now, other)
			req.Header.Set("X-Slack-Signature", slacktest.Sign(e2eSecret, now, body))
			return req
		}},
		{name: "no signature headers", request: func(target string, body, _ []byte) *http.Request {
			req := slacktest.NewSignedRequest(target, jsonType, e2eSecret, time.Now(), body)
			req.Header.Del("X-Slack-Signature")
			req.Header.Del("X-Slack-Request-Timestamp")
			return req
		}},
	}
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{})
		ctx := context.Background()
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				e.tb = t
				channel, ts, eventID := fmt.Sprintf("C0UNSIGNED%d", i), fmt.Sprintf("1700000300.%06d", i), fmt.Sprintf("EvUnsigned%d", i)
				body := newEvent(eventID, mention(channel, ts, "", alice, "let me in")).body
				other := newEvent(eventID, mention(channel, ts, "", mallory, "let me in")).body
				resp, err := e.http.Do(tt.request(e.base+"/slack/events", body, other))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					t.Fatalf("POST /slack/events answered %d, want 401", resp.StatusCode)
				}

				if _, err := e.store.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns("slack", e2eTeam, channel, ts)}); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("a conversation was bound for a refused event (err = %v), want store.ErrNotFound", err)
				}
				items, err := e.store.WorkList(ctx, &store.WorkListParams{Limit: 10})
				if err != nil {
					t.Fatal(err)
				}
				if len(items) != 0 {
					t.Errorf("%d work items exist after a refused event, want none", len(items))
				}
				// InboundRecord answers fresh only for an event id never
				// recorded, so the refused event left no dedupe row. (This
				// records it now; the event is not sent again.)
				fresh, err := e.store.InboundRecord(ctx, &store.InboundRecordParams{Platform: "slack", EventID: eventID, Now: time.Now()})
				if err != nil {
					t.Fatal(err)
				}
				if !fresh {
					t.Errorf("event %s was recorded as received although it was refused", eventID)
				}
			})
		}

		t.Run("the same event properly signed is stored", func(t *testing.T) {
			e.tb = t
			ev := newEvent("EvSignedControl", mention("C0SIGNED", "1700000399.000001", "", alice, "let me in"))
			e.mustPost(ev)
			// Durable at the ack (slack.ack: deferred, the default): the
			// event's work item is stored; it binds the conversation right
			// after.
			items, err := e.store.WorkList(ctx, &store.WorkListParams{Kind: core.WorkInbound, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(items, func(w *store.WorkItem) bool { return strings.Contains(string(w.Payload), `"EvSignedControl"`) }) {
				t.Fatalf("the acknowledged event is not in the store: %d inbound items", len(items))
			}
			e.conversation("C0SIGNED", "1700000399.000001")
			fresh, err := e.store.InboundRecord(ctx, &store.InboundRecordParams{Platform: "slack", EventID: "EvSignedControl", Now: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			if fresh {
				t.Errorf("a stored event was not recorded for dedupe")
			}
			e.waitReply("C0SIGNED", fallbackReply("let me in"))
			e.waitIdle()
		})
	})
}

// button is one button of a posted message.
type button struct {
	ActionID string `json:"action_id"`
	Value    string `json:"value"`
	Text     struct {
		Text string `json:"text"`
	} `json:"text"`
}

func buttonsOf(tb testing.TB, blocks json.RawMessage) []button {
	tb.Helper()
	var bs []struct {
		Type     string            `json:"type"`
		Elements []json.RawMessage `json:"elements"`
	}
	if err := json.Unmarshal(blocks, &bs); err != nil {
		tb.Fatalf("decoding blocks %s: %v", blocks, err)
	}
	var out []button
	for _, b := range bs {
		if b.Type != "actions" {
			continue
		}
		for _, raw := range b.Elements {
			var btn button
			if err := json.Unmarshal(raw, &btn); err != nil {
				tb.Fatalf("decoding button %s: %v", raw, err)
			}
			out = append(out, btn)
		}
	}
	return out
}

// blockText is every text in blocks, one per line, as a person reads them.
func blockText(tb testing.TB, blocks json.RawMessage) string {
	tb.Helper()
	var v any
	if len(blocks) == 0 {
		return ""
	}
	if err := json.Unmarshal(blocks, &v); err != nil {
		tb.Fatalf("decoding blocks %s: %v", blocks, err)
	}
	var lines []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if t, ok := x["text"].(string); ok {
				lines = append(lines, t)
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(v)
	return strings.Join(lines, "\n")
}

// TestSlackButtonClickResumesTurn: the agent asks a question; the buttons
// are posted in the thread; a click by someone else is refused privately and
// resumes nothing; the asker's click, over Socket Mode, resumes the turn.
func TestSlackButtonClickResumesTurn(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{})
		ctx := context.Background()
		const channel, ts = "C0BUTTONS", "1700000400.000100"
		e.mustPost(newEvent("EvButtons", mention(channel, ts, "", alice, "pick a colour for the logo")))

		var question slacktest.Message
		poll(t, "the question with buttons", func() (bool, string) {
			msgs := e.botMessages(channel)
			for _, m := range msgs {
				// The reply before it has blocks too (feedback buttons).
				if len(m.Blocks) > 0 && len(buttonsOf(t, m.Blocks)) > 0 {
					question = m
					return true, ""
				}
			}
			return false, fmt.Sprintf("%+v", msgs)
		})
		e.waitIdle()
		if question.ThreadTS != ts {
			t.Errorf("question posted in thread %q, want %q", question.ThreadTS, ts)
		}
		if !strings.Contains(question.Text, "Which colour should the logo be?") {
			t.Errorf("question text = %q, want the scripted question", question.Text)
		}
		buttons := buttonsOf(t, question.Blocks)
		var labels []string
		for _, b := range buttons {
			labels = append(labels, b.Text.Text)
		}
		if !slices.Equal(labels, []string{"Red", "Blue"}) {
			t.Fatalf("question buttons = %q, want [Red Blue]", labels)
		}
		blue := buttons[1]
		apID, err := uuid.Parse(strings.TrimPrefix(blue.ActionID, "sb-approval:"))
		if err != nil {
			t.Fatalf("button action id %q does not name an approval: %v", blue.ActionID, err)
		}
		conv := e.conversation(channel, ts)
		before := len(e.entries(conv.ID, ""))
		postsBefore := len(e.slack.Calls("chat.postMessage", "chat.startStream"))

		click := func(user, name, trigger string) {
			t.Helper()
			env := e.slack.SendInteractive(slacktest.BlockActions(slacktest.Click{
				TeamID: e2eTeam, UserID: user, UserName: name, Channel: channel, MessageTS: question.TS, ThreadTS: ts,
				ActionID: blue.ActionID, Value: blue.Value, Label: blue.Text.Text, TriggerID: trigger,
				Blocks: question.Blocks, Text: question.Text,
			}))
			if _, err := e.slack.WaitAck(env, waitLong); err != nil {
				t.Fatalf("the click by %s was not acknowledged: %v", user, err)
			}
		}

		// Someone else clicks: refused, privately, and nothing resumes.
		click(mallory, "mallory", "trig-mallory")
		eph := e.waitCalls("chat.postEphemeral", 1)
		if p := eph[0].Params; p.Get("user") != mallory || p.Get("channel") != channel || !strings.Contains(p.Get("text"), "yours") {
			t.Errorf("refusal = %v, want an ephemeral message to %s in %s saying it is not theirs", p, mallory, channel)
		}
		ap, err := e.store.ApprovalGet(ctx, apID)
		if err != nil {
			t.Fatal(err)
		}
		if ap.Status != store.ApprovalPending {
			t.Errorf("approval is %s after a refused click, want pending", ap.Status)
		}
		// Act runs before the ack, so a resumed turn would have its entry now.
		if after := len(e.entries(conv.ID, "")); after != before {
			t.Errorf("the log grew from %d to %d entries after a refused click, want unchanged", before, after)
		}
		items, err := e.store.WorkList(ctx, &store.WorkListParams{States: []store.WorkState{store.WorkAvailable, store.WorkRunning}, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != 0 {
			t.Errorf("%d work items queued after a refused click, want none", len(items))
		}

		// The asker clicks: the turn resumes and answers.
		click(alice, "alice", "trig-alice")
		final := e.waitReply(channel, "Noted:")
		e.waitIdle()
		if !strings.Contains(shown(final), `"answer":"Blue"`) || final.ThreadTS != ts {
			t.Errorf("final reply = %q in thread %q, want the Blue answer in %q", shown(final), final.ThreadTS, ts)
		}
		ap, err = e.store.ApprovalGet(ctx, apID)
		if err != nil {
			t.Fatal(err)
		}
		if ap.Status != store.ApprovalApproved || ap.DecidedBy != "alice" {
			t.Errorf("approval = %s by %q, want approved by alice", ap.Status, ap.DecidedBy)
		}
		results := e.entries(conv.ID, store.EntryToolResult)
		if len(results) != 1 {
			t.Fatalf("%d tool results, want exactly 1 (the click)", len(results))
		}
		if r := decode[core.ToolResultContent](t, results[0]); r.DecidedBy != "alice" {
			t.Errorf("tool result decided by %q, want alice", r.DecidedBy)
		}
		if n := len(e.slack.Calls("chat.postMessage", "chat.startStream")) - postsBefore; n != 1 {
			t.Errorf("%d messages posted after the clicks, want exactly 1 (the final reply)", n)
		}
		if got := len(e.slack.Calls("chat.postEphemeral")); got != 1 {
			t.Errorf("%d ephemeral messages, want 1 (only the refused click)", got)
		}
		// The question's buttons give way to who chose what.
		poll(t, "the question to show the choice", func() (bool, string) {
			m, _ := e.slack.Message(channel, question.TS)
			return strings.Contains(blockText(t, m.Blocks), "chosen by <@"+alice+">") && len(buttonsOf(t, m.Blocks)) == 0, string(m.Blocks)
		})
	})
}

// TestSlackSocketModeReconnect: after Slack asks the client to reconnect, or
// the connection drops, an event sent meanwhile is still answered.
func TestSlackSocketModeReconnect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		break_ func(s *slacktest.Server)
	}{
		{name: "disconnect requested", break_: func(s *slacktest.Server) { s.Disconnect("refresh_requested") }},
		{name: "connection dropped", break_: func(s *slacktest.Server) { s.DropConnections() }},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := startSlack(t, sqliteDatabase(t), envOptions{})
			send := func(channel, ts, text string) {
				t.Helper()
				env := e.slack.SendEvent(slacktest.EventCallback(e2eTeam, "Ev"+channel, mention(channel, ts, "", alice, text)))
				if _, err := e.slack.WaitAck(env, waitLong); err != nil {
					t.Fatal(err)
				}
			}
			before := fmt.Sprintf("C0SOCKBEFORE%d", i)
			send(before, "1700000500.000001", "before the break")
			e.waitReply(before, fallbackReply("before the break"))

			tt.break_(e.slack)
			after := fmt.Sprintf("C0SOCKAFTER%d", i)
			send(after, "1700000500.000002", "after the break")
			got := e.waitReply(after, fallbackReply("after the break"))
			e.waitIdle()
			if e.slack.Connections() < 2 {
				t.Errorf("%d socket mode connections, want a second one after the break", e.slack.Connections())
			}
			if got.ThreadTS != "1700000500.000002" {
				t.Errorf("reply in thread %q, want 1700000500.000002", got.ThreadTS)
			}
			for _, ch := range []string{before, after} {
				if msgs := e.botMessages(ch); len(msgs) != 1 {
					t.Errorf("%d replies in %s, want exactly 1", len(msgs), ch)
				}
			}
		})
	}
}

// TestSlackRateLimitedPost: a 429 from chat.postMessage is waited out and
// the message is posted exactly once.
func TestSlackRateLimitedPost(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startSlack(t, db(t), envOptions{})
		e.slack.Fail("chat.postMessage", slacktest.RateLimited(1))
		start := time.Now()
		// A top-level DM is answered with chat.postMessage (no thread, so no
		// chat streaming).
		e.mustPost(newEvent("EvRateLimited", directMessage("D0RATE", "1700000600.000001", alice, "are you there")))
		want := fallbackReply("are you there")
		got := e.waitReply("D0RATE", want)
		e.waitIdle()

		calls := e.slack.Calls("chat.postMessage")
		if len(calls) != 2 || calls[0].Status != http.StatusTooManyRequests || !calls[1].OK() {
			t.Fatalf("chat.postMessage calls = %+v, want a 429 then one success", calls)
		}
		if elapsed := time.Since(start); elapsed < time.Second {
			t.Errorf("the retry came %s after the event, before the 1s Retry-After", elapsed)
		}
		if msgs := e.botMessages("D0RATE"); len(msgs) != 1 {
			t.Fatalf("%d messages in the DM, want exactly 1: %+v", len(msgs), msgs)
		}
		if got.Text != want {
			t.Errorf("message text = %q, want %q", got.Text, want)
		}
		e.checkOneReply(e.conversation("D0RATE", "").ID, "are you there", want)
	})
}
