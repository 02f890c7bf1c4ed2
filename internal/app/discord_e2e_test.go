package app_test

// End-to-end tests of Discord through the real service: app.Open wires the
// store (SQLite, and Postgres when TEST_DATABASE_URL is set), core, the
// worker, the delivery router and the Discord adapter; the only fakes are
// Discord itself (internal/discordtest: REST and gateway, spoken to by
// discordgo) and the model (the scripted backend, with a script written by
// discordScript).
//
// Every helper here carries a discord prefix: slack_e2e_test.go shares the
// package (and its TestMain, which runs goleak).

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
	"github.com/google/uuid"
	"gopkg.in/yaml.v3"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/discordtest"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

const (
	// discordWaitLong bounds every wait for the service; it is far above
	// what a turn takes, so it only decides how long a broken build takes
	// to fail.
	discordWaitLong = 60 * time.Second

	discordGuild = discordtest.DefaultGuildID
	// discordMaxChars is Discord's limit on a message's content.
	discordMaxChars = discordtest.MaxContentChars

	// Routes of the fake, as its Call.Route names them.
	discordRoutePost     = "POST /channels/{channel}/messages"
	discordRouteEdit     = "PATCH /channels/{channel}/messages/{message}"
	discordRouteTyping   = "POST /channels/{channel}/typing"
	discordRouteCallback = "POST /interactions/{interaction}/{token}/callback"
	discordRouteFollowup = "POST /webhooks/{app}/{token}"

	// Keywords of the script's conditional turns (see discordScript).
	discordAskKeyword    = "pick a colour"
	discordSlowKeyword   = "slow please"
	discordLongKeyword   = "long answer please"
	discordStreamKeyword = "stream please"
	discordGuardKeyword  = "list my routines" // a routine_list call (see guard_discord_e2e_test.go)

	discordSlowReply = "A slow answer, after thinking it over."
	discordAskIntro  = "Let me ask you first."
	discordQuestion  = "Which colour should the logo be?"
	// discordStreamInterval is the adapter's default (and minimum) time
	// between two edits of a streamed message.
	discordStreamInterval = time.Second
)

var (
	discordAlice   = discordgo.User{ID: "2000000000000000001", Username: "alice"}
	discordMallory = discordgo.User{ID: "2000000000000000002", Username: "mallory"}
)

// discordFallback is what the script answers to a message without a
// keyword: core shows the model each message under its speaker's name,
// "[alice] text", and the script echoes it.
func discordFallback(user discordgo.User, text string) string {
	return "Hello from the scripted model. You said: [" + user.Username + "] " + text
}

// discordStreamText is a reply of 30 words; streamed with a chunk delay it
// takes long enough for several throttled edits.
func discordStreamText() string {
	words := make([]string, 30)
	for i := range words {
		words[i] = "word" + strconv.Itoa(i+1)
	}
	return "Streaming: " + strings.Join(words, " ") + "."
}

// discordCodeLine marks the lines of discordLongText's code block, so a
// test can tell code from prose in a part.
const discordCodeLine = "\tfmt.Println(\"line "

// discordLongText is a reply of about 4,400 characters: prose paragraphs,
// then a Go code block far longer than what is left of the first message,
// then a closing sentence, so the split has to cut inside the code block.
func discordLongText() string {
	var b strings.Builder
	b.WriteString("Here is the migration plan, step by step.\n\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, "Step %d: copy the rows of table number %d into the new schema, check the counts match, then switch the readers over before the writers.\n\n", i, i)
	}
	b.WriteString("```go\n")
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&b, "%s%02d of the generated code block\")\n", discordCodeLine, i)
	}
	b.WriteString("```\n\nThat is all: run it and check the output.")
	return b.String()
}

// discordScript writes the model's script and returns its path. Every
// conditional turn plays each time it matches; other messages get the
// fallback. chunkDelay is the pause between streamed words (0: the
// latency seen is the service's own).
func discordScript(tb testing.TB, chunkDelay time.Duration) string {
	tb.Helper()
	script := map[string]any{
		"name":        "discord-e2e",
		"chunk_delay": chunkDelay.String(),
		"turns": []map[string]any{
			{"after_tool": "ask_user", "text": "Noted: {{last_user}}"},
			{"after_tool": "render_chart", "text": discordStepTwo},
			{"after_tool": "routine_list", "text": "Listed: {{last_user}}"},
			{"when_last_user_contains": discordGuardKeyword, "tool_calls": []map[string]any{{"name": "routine_list", "input": map[string]any{}}}},
			{
				"when_last_user_contains": discordStepsKeyword,
				"text":                    discordStepOne,
				"tool_calls": []map[string]any{{
					"name": "render_chart",
					"input": map[string]any{"title": "Sign-ups", "kind": "line",
						"series": []map[string]any{{"name": "s", "points": []map[string]any{{"x": 1, "y": 2}, {"x": 2, "y": 3}}}}},
				}},
			},
			{
				"when_last_user_contains": discordAskKeyword,
				"text":                    discordAskIntro,
				"tool_calls": []map[string]any{{
					"name":  "ask_user",
					"input": map[string]any{"question": discordQuestion, "choices": []string{"Red", "Blue"}},
				}},
			},
			{"when_last_user_contains": discordSlowKeyword, "delay": "2s", "text": discordSlowReply},
			{"when_last_user_contains": discordLongKeyword, "text": discordLongText()},
			{"when_last_user_contains": discordStreamKeyword, "text": discordStreamText()},
		},
		"fallback": map[string]any{"text": "Hello from the scripted model. You said: {{last_user}}"},
	}
	data, err := yaml.Marshal(script)
	if err != nil {
		tb.Fatalf("encoding the script: %v", err)
	}
	path := filepath.Join(tb.TempDir(), "discord_e2e.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatalf("writing the script: %v", err)
	}
	return path
}

// discordEachStore runs f on SQLite, and on Postgres when TEST_DATABASE_URL
// is set (testenv.PostgresURL decides whether a missing one skips or
// fails). f receives a DATABASE_URL for a fresh, empty store.
func discordEachStore(t *testing.T, f func(t *testing.T, db string)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		f(t, "sqlite:"+filepath.Join(t.TempDir(), "switchboard.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		f(t, postgresDatabase(t))
	})
}

// discordEnv is one running service and the fake Discord it talks to.
type discordEnv struct {
	tb    testing.TB
	app   *app.App
	fake  *discordtest.Server
	store store.Store
	base  string // http://host:port of the service
	// key signs interactions for POST /discord/interactions; the service
	// has its public half.
	key  ed25519.PrivateKey
	http *http.Client
	// db, script and config started the service; restart starts it again
	// with them.
	db, script, config string
}

// discordStart opens and starts the service on the database db, connected
// to a new fake Discord, with the HTTP interactions endpoint on. Start
// returns once the gateway is READY. Everything stops when the test ends.
func discordStart(tb testing.TB, db string, chunkDelay time.Duration) *discordEnv {
	tb.Helper()
	return discordStartWith(tb, db, chunkDelay, openAccess)
}

// discordStartWith is discordStart with config as switchboard.yaml.
func discordStartWith(tb testing.TB, db string, chunkDelay time.Duration, config string) *discordEnv {
	tb.Helper()
	return discordStartScript(tb, db, discordScript(tb, chunkDelay), config, nil)
}

// discordStartScript is discordStartWith with the model's script at
// script, and prepare called on the fake before the service starts.
func discordStartScript(tb testing.TB, db, script, config string, prepare func(*discordtest.Server)) *discordEnv {
	tb.Helper()
	fake := discordtest.NewServer(tb)
	if prepare != nil {
		prepare(fake)
	}
	return discordStartOn(tb, fake, db, script, config)
}

// discordStartOn starts the service connected to fake.
func discordStartOn(tb testing.TB, fake *discordtest.Server, db, script, config string) *discordEnv {
	tb.Helper()
	identifies := fake.GatewayStats().Identifies
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		tb.Fatal(err)
	}
	env := map[string]string{"SWITCHBOARD_MODEL": "scripted:" + script}
	cfg := app.Config{
		Addr:             "127.0.0.1:0",
		DatabaseURL:      db,
		DiscordBotToken:  fake.Token,
		DiscordAPIURL:    fake.URL,
		DiscordPublicKey: hex.EncodeToString(pub),
		ConfigPath:       writeConfig(tb, config),
		Env:              func(k string) string { return env[k] },
		Logger:           testenv.Logger(tb),
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
		// discordgo heartbeats as soon as it is connected; closing before
		// that write went out races inside discordgo (see discordtest's
		// TestGatewayWithDiscordgo).
		fake.WaitGateway(tb, "a heartbeat on the live socket before stopping", func(st discordtest.GatewayStats) bool {
			return !st.Connected || st.LiveHeartbeats >= 1
		})
		_ = a.Stop(context.Background())
	})
	if st := fake.GatewayStats(); !st.Connected || st.Identifies != identifies+1 {
		tb.Fatalf("after Start the gateway stats are %+v; want one IDENTIFY and a live connection", st)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	tb.Cleanup(client.CloseIdleConnections)
	return &discordEnv{tb: tb, app: a, fake: fake, store: a.Store, base: "http://" + a.Addr(), key: priv, http: client, db: db, script: script, config: config}
}

// restart stops the service (running handlers finish first, as in a
// deploy) and starts a new one on the same database and fake Discord.
func (e *discordEnv) restart() *discordEnv {
	e.tb.Helper()
	e.fake.WaitGateway(e.tb, "a heartbeat on the live socket before stopping", func(st discordtest.GatewayStats) bool {
		return !st.Connected || st.LiveHeartbeats >= 1
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	if err := e.app.Stop(ctx); err != nil {
		e.tb.Fatalf("stopping the service: %v", err)
	}
	return discordStartOn(e.tb, e.fake, e.db, e.script, e.config)
}

// with is the same environment reporting to tb (a subtest).
func (e *discordEnv) with(tb testing.TB) *discordEnv {
	c := *e
	c.tb = tb
	return &c
}

// mention sends a message of user's in channel that mentions the bot.
func (e *discordEnv) mention(channel string, user discordgo.User, text string) *discordtest.Message {
	return e.fake.UserMessage(channel, user, "<@"+e.fake.Bot.ID+"> "+text)
}

// discordPoll calls cond until it reports done or discordWaitLong passes;
// cond's message says what was last seen, for the failure. It is for
// conditions on the store, which does not wake the fake's Wait.
func discordPoll(tb testing.TB, what string, cond func() (bool, string)) {
	tb.Helper()
	deadline := time.Now().Add(discordWaitLong)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, seen := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("waited %s for %s; last seen: %s", discordWaitLong, what, seen)
		}
		<-tick.C
	}
}

// waitBotMessage waits until a bot message in channel contains want and
// returns it.
func (e *discordEnv) waitBotMessage(channel, want string) *discordtest.Message {
	e.tb.Helper()
	var found *discordtest.Message
	e.fake.Wait(e.tb, fmt.Sprintf("a bot message containing %q in channel %s", want, channel), func() bool {
		for _, m := range e.fake.BotMessages(channel) {
			if strings.Contains(m.Content, want) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// binding is the binding of a top-level Discord channel, or nil.
func (e *discordEnv) binding(channel string) *store.Binding {
	e.tb.Helper()
	b, err := e.store.BindingFind(context.Background(), &store.BindingFindParams{Place: store.PlaceFromColumns("discord", discordGuild, channel, "")})
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		e.tb.Fatalf("finding the binding of channel %s: %v", channel, err)
	}
	return b
}

// settle waits until the conversation of channel has no turn queued or
// running and every entry of its log has been delivered, so nothing more
// will be posted for what was sent so far. It returns the conversation.
func (e *discordEnv) settle(channel string) uuid.UUID {
	e.tb.Helper()
	ctx := context.Background()
	var conv uuid.UUID
	discordPoll(e.tb, "channel "+channel+"'s conversation to settle", func() (bool, string) {
		b := e.binding(channel)
		if b == nil {
			return false, "no binding yet"
		}
		conv = b.ConversationID
		items, err := e.store.WorkList(ctx, &store.WorkListParams{
			States: []store.WorkState{store.WorkAvailable, store.WorkRunning}, ConversationID: &conv, Limit: 10,
		})
		if err != nil {
			return false, err.Error()
		}
		c, err := e.store.ConversationGet(ctx, conv)
		if err != nil {
			return false, err.Error()
		}
		return len(items) == 0 && b.DeliveredSeq == c.LastSeq,
			fmt.Sprintf("%d work items queued or running, delivered seq %d of %d", len(items), b.DeliveredSeq, c.LastSeq)
	})
	return conv
}

// entries lists a conversation's log entries of one kind ("" for all).
func (e *discordEnv) entries(conv uuid.UUID, kind store.EntryKind) []*store.Entry {
	e.tb.Helper()
	return logEntries(e.tb, e.store, conv, kind)
}

// checkOneExchange checks the store side of one answered message.
func (e *discordEnv) checkOneExchange(conv uuid.UUID, userText, reply string) {
	e.tb.Helper()
	checkOneExchange(e.tb, e.store, conv, userText, reply)
}

// callsIn returns the calls to route whose path starts with prefix.
func (e *discordEnv) callsIn(route, prefix string) []discordtest.Call {
	var out []discordtest.Call
	for _, c := range e.fake.CallsTo(route) {
		if strings.HasPrefix(c.Path, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// posts are the message creations in channel.
func (e *discordEnv) posts(channel string) []discordtest.Call {
	return e.callsIn(discordRoutePost, "/channels/"+channel+"/messages")
}

// TestDiscordMentionStreamsOneReply: a mention gets exactly one message in
// its channel, streamed by throttled edits of that one message, ending with
// the scripted text.
func TestDiscordMentionStreamsOneReply(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		// 30 words 100 ms apart: about three seconds of streaming.
		e := discordStart(t, db, 100*time.Millisecond)
		const channel = "3000000000000000001"
		want := discordStreamText()
		started := time.Now()
		e.mention(channel, discordAlice, discordStreamKeyword)

		reply := e.waitBotMessage(channel, want)
		conv := e.settle(channel)
		elapsed := time.Since(started)
		e.checkOneExchange(conv, discordStreamKeyword, want)

		msgs := e.fake.BotMessages(channel)
		if len(msgs) != 1 || msgs[0].Content != want {
			t.Fatalf("bot messages in the channel = %d (%+v); want exactly one, reading %q", len(msgs), msgs, want)
		}
		posts := e.posts(channel)
		if len(posts) != 1 || posts[0].Status != http.StatusOK {
			t.Fatalf("%d message creations in the channel; want exactly 1 (the streamed reply), all edits after it", len(posts))
		}
		if len(reply.AllowedMentions) == 0 || !strings.Contains(string(reply.AllowedMentions), `"parse":[]`) {
			t.Errorf("reply allowed_mentions = %s; want an empty parse list so a reply never pings", reply.AllowedMentions)
		}
		edits := e.callsIn(discordRouteEdit, "/channels/"+channel+"/messages/"+reply.ID)
		if all := e.fake.CallsTo(discordRouteEdit); len(all) != len(edits) {
			t.Errorf("%d edits in all, %d of the reply; want every edit on the reply", len(all), len(edits))
		}
		// The stream lasts about 3 s and edits at most once a second, so a
		// visible stream means at least two edits (one or more interim, the
		// final replacement), and no more than one per second plus the
		// final one.
		if len(edits) < 2 {
			t.Fatalf("the reply was edited %d times; want ≥ 2 (streamed edits, then the final text)", len(edits))
		}
		if limit := int(elapsed/discordStreamInterval) + 2; len(edits) > limit {
			t.Errorf("the reply was edited %d times in %s; want at most %d (one a second, plus the final one)", len(edits), elapsed.Round(time.Millisecond), limit)
		}
		// Every edit but the last is a streamed one: it shows a growing
		// prefix of the reply and comes well after the write before it.
		// The adapter spaces the sends a second apart, but the fake sees
		// arrivals, and a request slowed by a busy machine (-race, tests in
		// parallel) arrives late, so the gap to the next one shrinks by as
		// much; half the interval still tells a throttled stream from one
		// that edits per word (100 ms apart here).
		writes := append([]discordtest.Call{posts[0]}, edits...)
		const minStreamGap = discordStreamInterval / 2
		minGap := time.Duration(1<<63 - 1)
		prev := ""
		for i, c := range writes {
			var body struct {
				Content *string `json:"content"`
			}
			if err := c.Decode(&body); err != nil || body.Content == nil {
				t.Fatalf("write %d of the reply (%s) has no content: %v %s", i, c.Route, err, c.Body)
			}
			if !strings.HasPrefix(want, *body.Content) || len(*body.Content) < len(prev) {
				t.Errorf("write %d shows %q; want a prefix of the reply at least as long as the write before (%q)", i, *body.Content, prev)
			}
			prev = *body.Content
			if i == 0 || i == len(writes)-1 {
				continue
			}
			gap := c.At.Sub(writes[i-1].At)
			minGap = min(minGap, gap)
			if gap < minStreamGap {
				t.Errorf("streamed write %d came %s after the one before; want edits about %s apart (at least %s as seen by the fake)", i, gap, discordStreamInterval, minStreamGap)
			}
		}
		if prev != want {
			t.Errorf("the last write shows %q; want the whole reply %q", prev, want)
		}
		t.Logf("streamed reply: 1 post and %d edits in %s; shortest gap between streamed writes %s",
			len(edits), elapsed.Round(time.Millisecond), minGap.Round(time.Millisecond))
	})
}

// discordProseLines is the text's non-blank lines without code fences, for
// comparing a split text with the original.
func discordProseLines(s string) []string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "```") {
			continue
		}
		out = append(out, line)
	}
	return out
}

// TestDiscordLongReplyIsSplit: a reply over 2,000 characters with a code
// block arrives as several messages, each within Discord's limit and each
// rendering on its own (fences balanced, code inside them), that read the
// whole reply in order.
func TestDiscordLongReplyIsSplit(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStart(t, db, 0)
		const channel = "3000000000000000002"
		want := discordLongText()
		if n := utf8.RuneCountInString(want); n <= 2*discordMaxChars {
			t.Fatalf("the long reply has %d characters; the test needs more than %d", n, 2*discordMaxChars)
		}
		e.mention(channel, discordAlice, discordLongKeyword)
		e.waitBotMessage(channel, "That is all: run it and check the output.")
		conv := e.settle(channel)
		e.checkOneExchange(conv, discordLongKeyword, want)

		msgs := e.fake.BotMessages(channel)
		if len(msgs) < 3 {
			t.Fatalf("the reply of %d characters arrived as %d messages; want ≥ 3", utf8.RuneCountInString(want), len(msgs))
		}
		var joined []string
		for i, m := range msgs {
			if n := utf8.RuneCountInString(m.Content); n > discordMaxChars || n == 0 {
				t.Errorf("message %d has %d characters; want 1 to %d", i, n, discordMaxChars)
			}
			open := false
			for line := range strings.SplitSeq(m.Content, "\n") {
				switch {
				case strings.HasPrefix(line, "```"):
					open = !open
				case strings.HasPrefix(line, discordCodeLine) && !open:
					t.Errorf("message %d has a code line outside a code block: %q", i, line)
				}
			}
			if open {
				t.Errorf("message %d leaves a code block open:\n%s", i, m.Content)
			}
			joined = append(joined, m.Content)
		}
		if got, wantLines := discordProseLines(strings.Join(joined, "\n")), discordProseLines(want); strings.Join(got, "\n") != strings.Join(wantLines, "\n") {
			t.Errorf("the messages read %d lines; want the reply's %d lines in order", len(got), len(wantLines))
		}
		if posts := e.posts(channel); len(posts) != len(msgs) {
			t.Errorf("%d message creations for %d messages; want one each", len(posts), len(msgs))
		}
		t.Logf("reply of %d characters split into %d messages", utf8.RuneCountInString(want), len(msgs))
	})
}

// discordMessageCreate is the MESSAGE_CREATE payload of a stored user
// message, as Discord would send it again.
func discordMessageCreate(m *discordtest.Message) map[string]any {
	return map[string]any{
		"id": m.ID, "channel_id": m.ChannelID, "guild_id": m.GuildID, "author": m.Author,
		"content": m.Content, "timestamp": m.Timestamp.Format(time.RFC3339Nano),
		"type": 0, "mentions": m.Mentions, "member": map[string]any{"roles": []string{}},
		"embeds": []any{}, "attachments": []any{}, "components": []any{},
	}
}

// TestDiscordDuplicateMessageAnsweredOnce: the same MESSAGE_CREATE twice
// (same message id) yields one reply and one user entry, whether the copy
// arrives after the reply or while the turn is still running.
func TestDiscordDuplicateMessageAnsweredOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		text         string
		reply        string
		whileRunning bool
	}{
		{name: "after the reply", text: "hello twice", reply: discordFallback(discordAlice, "hello twice")},
		{name: "while the turn runs", text: discordSlowKeyword, reply: discordSlowReply, whileRunning: true},
	}
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStart(t, db, 0)
		for i, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				e := e.with(t)
				channel := "30000000000000001" + strconv.Itoa(10+i)
				sentinel := "30000000000000002" + strconv.Itoa(10+i)
				m := e.mention(channel, discordAlice, tc.text)
				if tc.whileRunning {
					// The typing indicator goes up when the turn starts; the
					// turn then waits 2 s before answering.
					e.fake.Wait(t, "the typing indicator of the running turn", func() bool {
						return len(e.callsIn(discordRouteTyping, "/channels/"+channel+"/")) > 0
					})
				} else {
					e.waitBotMessage(channel, tc.reply)
					e.settle(channel)
				}
				e.fake.Dispatch("MESSAGE_CREATE", discordMessageCreate(m))
				// Gateway events are handled one after another, so once a
				// later message is answered, the copy has been submitted.
				e.mention(sentinel, discordAlice, "sentinel")
				e.waitBotMessage(sentinel, discordFallback(discordAlice, "sentinel"))
				if tc.whileRunning && len(e.fake.BotMessages(channel)) != 0 {
					t.Fatalf("the slow turn had answered before its copy was handled; the test did not test a copy during the turn")
				}

				e.waitBotMessage(channel, tc.reply)
				conv := e.settle(channel)
				e.checkOneExchange(conv, tc.text, tc.reply)
				if msgs := e.fake.BotMessages(channel); len(msgs) != 1 {
					t.Errorf("%d bot messages in the channel; want exactly 1", len(msgs))
				}
				if posts := e.posts(channel); len(posts) != 1 {
					t.Errorf("%d message creations in the channel; want exactly 1", len(posts))
				}
				if turns, err := e.store.WorkList(context.Background(), &store.WorkListParams{Kind: core.WorkTurn, ConversationID: &conv, Limit: 10}); err != nil || len(turns) != 1 {
					t.Errorf("conversation has %d turns (err %v); want exactly 1", len(turns), err)
				}
			})
		}
	})
}

// discordAsk is the posted ask_user prompt of a conversation and its
// approval.
type discordAsk struct {
	msg      *discordtest.Message
	buttons  map[string]string // label -> custom_id
	approval *store.Approval
	conv     uuid.UUID
}

// ask mentions the bot with the ask keyword and waits until the question
// is posted with its buttons and the conversation has settled.
func (e *discordEnv) ask(channel string, user discordgo.User) discordAsk {
	e.tb.Helper()
	e.mention(channel, user, discordAskKeyword)
	e.waitBotMessage(channel, discordAskIntro)
	q := discordAsk{msg: e.waitBotMessage(channel, discordQuestion), buttons: map[string]string{}}
	for _, b := range q.msg.Buttons() {
		q.buttons[b.Label] = b.CustomID
	}
	if len(q.buttons) != 2 || q.buttons["Red"] == "" || q.buttons["Blue"] == "" {
		e.tb.Fatalf("the question has buttons %+v; want Red and Blue", q.msg.Buttons())
	}
	q.conv = e.settle(channel)
	calls := e.entries(q.conv, store.EntryToolCall)
	if len(calls) != 1 {
		e.tb.Fatalf("conversation has %d tool calls; want the one ask_user", len(calls))
	}
	call := decode[core.ToolCallContent](e.tb, calls[0])
	ap, err := e.store.ApprovalFindByCall(context.Background(), &store.ApprovalFindByCallParams{ConversationID: q.conv, CallID: call.CallID})
	if err != nil {
		e.tb.Fatalf("finding the question's approval: %v", err)
	}
	if ap.Status != store.ApprovalPending {
		e.tb.Fatalf("the question's approval is %s; want pending", ap.Status)
	}
	q.approval = ap
	return q
}

// checkUnanswered checks that nothing answered the question: its approval
// is pending, no tool result is in the log and no turn is queued.
func (e *discordEnv) checkUnanswered(q discordAsk, entriesBefore int) {
	e.tb.Helper()
	ctx := context.Background()
	ap, err := e.store.ApprovalGet(ctx, q.approval.ID)
	if err != nil {
		e.tb.Fatalf("loading the approval: %v", err)
	}
	if ap.Status != store.ApprovalPending {
		e.tb.Errorf("the approval is %s (decided by %q); want still pending", ap.Status, ap.DecidedBy)
	}
	if got := len(e.entries(q.conv, "")); got != entriesBefore {
		e.tb.Errorf("the conversation has %d entries; want the %d it had before", got, entriesBefore)
	}
	if res := e.entries(q.conv, store.EntryToolResult); len(res) != 0 {
		e.tb.Errorf("the conversation has %d tool results; want none", len(res))
	}
	items, err := e.store.WorkList(ctx, &store.WorkListParams{
		States: []store.WorkState{store.WorkAvailable, store.WorkRunning}, ConversationID: &q.conv, Limit: 10,
	})
	if err != nil || len(items) != 0 {
		e.tb.Errorf("%d turns queued or running (err %v); want none", len(items), err)
	}
}

// checkAnswered waits for the resumed turn's reply to choice and checks
// the log: one tool result with the choice, decided by user.
func (e *discordEnv) checkAnswered(channel string, q discordAsk, choice string, user discordgo.User) {
	e.tb.Helper()
	// The reply streams in from its first word: settle before reading it.
	reply := e.waitBotMessage(channel, "Noted:")
	e.settle(channel)
	if m := e.fake.Message(reply.ID); !strings.Contains(m.Content, choice) {
		e.tb.Errorf("the resumed reply reads %q; want it to name the choice %q", m.Content, choice)
	}
	results := e.entries(q.conv, store.EntryToolResult)
	if len(results) != 1 {
		e.tb.Fatalf("the conversation has %d tool results; want exactly 1", len(results))
	}
	res := decode[core.ToolResultContent](e.tb, results[0])
	var out struct {
		Answer string `json:"answer"`
	}
	if err := json.Unmarshal(res.Output, &out); err != nil || out.Answer != choice {
		e.tb.Errorf("tool result output = %s; want the answer %q", res.Output, choice)
	}
	ap, err := e.store.ApprovalGet(context.Background(), q.approval.ID)
	if err != nil {
		e.tb.Fatalf("loading the approval: %v", err)
	}
	if ap.Status != store.ApprovalApproved {
		e.tb.Errorf("the approval is %s; want approved (answered)", ap.Status)
	}
	var noted int
	for _, m := range e.fake.BotMessages(channel) {
		if strings.Contains(m.Content, "Noted:") {
			noted++
		}
	}
	if noted != 1 {
		e.tb.Errorf("%d resumed replies in the channel; want exactly 1", noted)
	}
}

// TestDiscordButtonResumesTurn: an ask_user call is posted as a question
// with buttons; a click by someone else gets a private refusal and changes
// nothing; the asker's click resumes the turn, which answers once.
func TestDiscordButtonResumesTurn(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStart(t, db, 0)
		const channel = "3000000000000000003"
		q := e.ask(channel, discordAlice)
		before := len(e.entries(q.conv, ""))

		// Mallory clicks: a private refusal, and the question stays open.
		in := e.fake.ClickButton(q.msg.ID, q.buttons["Blue"], discordMallory)
		var refusal *discordtest.Message
		e.fake.Wait(t, "a follow-up to mallory's click", func() bool {
			got := e.fake.Interaction(in.ID)
			if got == nil || len(got.Followups) == 0 {
				return false
			}
			refusal = e.fake.Message(got.Followups[0])
			return refusal != nil
		})
		if got := e.fake.Interaction(in.ID); got.ResponseType != discordgo.InteractionResponseDeferredMessageUpdate || len(got.Followups) != 1 {
			t.Errorf("mallory's click: response type %d with %d follow-ups; want a deferred update (%d) and one follow-up",
				got.ResponseType, len(got.Followups), discordgo.InteractionResponseDeferredMessageUpdate)
		}
		if !refusal.Ephemeral() || !strings.Contains(refusal.Content, "only the person who asked") {
			t.Errorf("refusal = %q (ephemeral %v); want an ephemeral note that only the asker decides", refusal.Content, refusal.Ephemeral())
		}
		e.checkUnanswered(q, before)
		if m := e.fake.Message(q.msg.ID); m.Edits != 0 || len(m.Buttons()) != 2 {
			t.Errorf("after the refused click the question has %d edits and %d buttons; want it untouched", m.Edits, len(m.Buttons()))
		}

		// Alice clicks: the turn resumes and answers once.
		in = e.fake.ClickButton(q.msg.ID, q.buttons["Red"], discordAlice)
		e.checkAnswered(channel, q, "Red", discordAlice)
		e.fake.Wait(t, "the question to show alice's choice", func() bool {
			m := e.fake.Message(q.msg.ID)
			return strings.Contains(m.Content, "chosen by <@"+discordAlice.ID+">")
		})
		m := e.fake.Message(q.msg.ID)
		if !strings.Contains(m.Content, discordQuestion) || !strings.Contains(m.Content, "**Red**") || len(m.Buttons()) != 0 {
			t.Errorf("the answered question reads %q with %d buttons; want the question, **Red** and no buttons", m.Content, len(m.Buttons()))
		}
		if got := e.fake.Interaction(in.ID); len(got.Followups) != 0 {
			t.Errorf("alice's click got %d follow-ups; want none (the choice is shown on the question)", len(got.Followups))
		}
	})
}

// interactionRequest is a POST /discord/interactions of body, signed at ts
// with key over ts+signed (signed defaults to body); unsigned when key is
// nil.
func (e *discordEnv) interactionRequest(body, signed []byte, key ed25519.PrivateKey, ts time.Time) *http.Request {
	e.tb.Helper()
	req, err := http.NewRequest(http.MethodPost, e.base+"/discord/interactions", bytes.NewReader(body))
	if err != nil {
		e.tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != nil {
		if signed == nil {
			signed = body
		}
		stamp := strconv.FormatInt(ts.Unix(), 10)
		req.Header.Set("X-Signature-Timestamp", stamp)
		req.Header.Set("X-Signature-Ed25519", hex.EncodeToString(ed25519.Sign(key, append([]byte(stamp), signed...))))
	}
	return req
}

// TestDiscordForgedInteractionRejected: requests to POST
// /discord/interactions that Discord did not sign are answered 401 and
// reach nothing: a forged click leaves the question open, a forged /ask
// starts no conversation. A correctly signed click then works, so the
// refusals are the signature's doing.
func TestDiscordForgedInteractionRejected(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStart(t, db, 0)
		const channel = "3000000000000000004"
		const askChannel = "3000000000000000005"
		q := e.ask(channel, discordAlice)
		before := len(e.entries(q.conv, ""))
		_, otherKey, err := ed25519.GenerateKey(nil)
		if err != nil {
			t.Fatal(err)
		}

		// Each forgery is a click by alice (the asker), or /ask, as an
		// attacker would craft it.
		click := func() (*discordtest.Interaction, []byte) {
			return e.fake.ButtonInteraction(q.msg.ID, q.buttons["Blue"], discordAlice)
		}
		_, mallorysClick := e.fake.ButtonInteraction(q.msg.ID, q.buttons["Blue"], discordMallory)
		now := time.Now()
		tests := []struct {
			name    string
			payload func() (*discordtest.Interaction, []byte)
			signed  []byte // what the signature covers, when not the body
			key     ed25519.PrivateKey
			at      time.Time
		}{
			{name: "signed with another key", payload: click, key: otherKey, at: now},
			{name: "unsigned", payload: click},
			{name: "body changed after signing", payload: click, signed: mallorysClick, key: e.key, at: now},
			{name: "replayed with an old timestamp", payload: click, key: e.key, at: now.Add(-10 * time.Minute)},
			{name: "timestamp from the future", payload: click, key: e.key, at: now.Add(10 * time.Minute)},
			{
				name: "slash command signed with another key",
				payload: func() (*discordtest.Interaction, []byte) {
					return e.fake.SlashCommandInteraction(askChannel, "ask", map[string]string{"prompt": "forged question"}, discordAlice)
				},
				key: otherKey, at: now,
			},
		}
		var forged []*discordtest.Interaction
		for _, tc := range tests {
			in, body := tc.payload()
			forged = append(forged, in)
			resp, err := e.http.Do(e.interactionRequest(body, tc.signed, tc.key, tc.at))
			if err != nil {
				t.Fatalf("%s: posting the interaction: %v", tc.name, err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s: POST /discord/interactions answered %d; want 401", tc.name, resp.StatusCode)
			}
		}
		// A garbage signature header, not even hex.
		req := e.interactionRequest([]byte(`{"type":1}`), nil, nil, now)
		req.Header.Set("X-Signature-Timestamp", strconv.FormatInt(now.Unix(), 10))
		req.Header.Set("X-Signature-Ed25519", "not-hex")
		if resp, err := e.http.Do(req); err != nil {
			t.Fatal(err)
		} else {
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("garbage signature: answered %d; want 401", resp.StatusCode)
			}
		}

		// Nothing was stored and nothing reached Discord.
		e.checkUnanswered(q, before)
		if b := e.binding(askChannel); b != nil {
			t.Errorf("the forged /ask created conversation %s; want none", b.ConversationID)
		}
		untouched := func(when string) {
			t.Helper()
			for _, in := range forged {
				for _, c := range e.fake.Calls() {
					if strings.Contains(c.Path, in.Token) {
						t.Errorf("%s: the service called %s for forged interaction %s; want nothing", when, c.Route, in.ID)
					}
				}
			}
		}
		untouched("after the forgeries")
		if n := len(e.fake.Messages(askChannel, "")); n != 0 {
			t.Errorf("%d messages in the forged /ask's channel; want none", n)
		}

		// Alice's click on the other choice, signed with the application's
		// key, is taken. Had a forged click been taken late, the question
		// would have been answered Blue and this Red click refused.
		in, body := e.fake.ButtonInteraction(q.msg.ID, q.buttons["Red"], discordAlice)
		status, answer, err := e.fake.PostInteraction(e.base+"/discord/interactions", e.key, body)
		if err != nil || status != http.StatusOK {
			t.Fatalf("a signed click: HTTP %d %s (%v); want 200", status, answer, err)
		}
		e.checkAnswered(channel, q, "Red", discordAlice)
		e.fake.Wait(t, "the question to show alice's choice", func() bool {
			return strings.Contains(e.fake.Message(q.msg.ID).Content, "chosen by <@"+discordAlice.ID+">")
		})
		if got := e.fake.Interaction(in.ID); got.ResponseType != discordgo.InteractionResponseDeferredMessageUpdate {
			t.Errorf("the signed click's response type is %d; want a deferred update (%d)", got.ResponseType, discordgo.InteractionResponseDeferredMessageUpdate)
		}
		untouched("after the signed click")
		if b := e.binding(askChannel); b != nil {
			t.Errorf("the forged /ask created conversation %s; want none", b.ConversationID)
		}
	})
}

// TestDiscordGatewayDropResumes: the gateway drops, a message is sent while
// the bot is away, and the bot RESUMEs its session, gets the message
// replayed and answers it; nothing is missed and nothing is answered twice.
func TestDiscordGatewayDropResumes(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStart(t, db, 0)
		const channel = "3000000000000000006"
		e.mention(channel, discordAlice, "before the drop")
		e.waitBotMessage(channel, discordFallback(discordAlice, "before the drop"))
		e.settle(channel)

		before := e.fake.GatewayStats()
		e.fake.Drop()
		// discordgo notices a dead socket, waits a second in Close, then
		// RESUMEs; this message lands in the gap.
		e.mention(channel, discordAlice, "during the drop")
		during := e.fake.GatewayStats()
		if during.Connected || during.Resumes != before.Resumes || during.Identifies != before.Identifies {
			t.Fatalf("gateway stats right after the message sent during the drop: %+v (before %+v); want it sent while disconnected", during, before)
		}
		missedSeq := during.Seq

		e.fake.WaitGateway(t, "the bot to resume", func(st discordtest.GatewayStats) bool {
			return st.Connected && st.Resumes == before.Resumes+1
		})
		after := e.fake.GatewayStats()
		if after.Identifies != before.Identifies {
			t.Errorf("the bot identified %d times; want it to resume its session, not start a new one", after.Identifies)
		}
		if after.ResumedFrom >= missedSeq {
			t.Errorf("the bot resumed after seq %d; want before %d, the message sent during the drop", after.ResumedFrom, missedSeq)
		}

		e.waitBotMessage(channel, discordFallback(discordAlice, "during the drop"))
		conv := e.settle(channel)
		if users := e.entries(conv, store.EntryUser); len(users) != 2 {
			t.Errorf("the conversation has %d user entries; want 2 (before and during the drop)", len(users))
		}
		if answers := e.entries(conv, store.EntryAssistant); len(answers) != 2 {
			t.Errorf("the conversation has %d assistant entries; want 2", len(answers))
		}
		if msgs := e.fake.BotMessages(channel); len(msgs) != 2 {
			t.Errorf("%d bot messages in the channel; want 2, one per message", len(msgs))
		}
		if errs := e.entries(conv, store.EntryError); len(errs) != 0 {
			t.Errorf("the conversation has error entries: %s", errs[0].Content)
		}
	})
}

// TestDiscordRateLimitedReplyPostedOnce: the reply's first POST is answered
// 429 with retry_after; discordgo waits it out and sends it again, and the
// channel ends up with exactly one reply.
func TestDiscordRateLimitedReplyPostedOnce(t *testing.T) {
	t.Parallel()
	const retryAfter = time.Second
	tests := []struct {
		name   string
		global bool
	}{
		{name: "route limit"},
		{name: "global limit", global: true},
	}
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStart(t, db, 0)
		for i, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				e := e.with(t)
				channel := "30000000000000003" + strconv.Itoa(10+i)
				text := "rate limited " + strconv.Itoa(i)
				want := discordFallback(discordAlice, text)
				e.fake.RateLimit(discordRoutePost, retryAfter, tc.global)
				e.mention(channel, discordAlice, text)
				e.waitBotMessage(channel, want)
				conv := e.settle(channel)
				e.checkOneExchange(conv, text, want)

				posts := e.posts(channel)
				if len(posts) != 2 || posts[0].Status != http.StatusTooManyRequests || posts[1].Status != http.StatusOK {
					statuses := make([]int, len(posts))
					for i, p := range posts {
						statuses[i] = p.Status
					}
					t.Fatalf("message creations answered %v; want [429 200]", statuses)
				}
				if gap := posts[1].At.Sub(posts[0].At); gap < retryAfter {
					t.Errorf("the retry came %s after the 429; want at least retry_after (%s)", gap, retryAfter)
				} else {
					t.Logf("retry %s after the 429 (retry_after %s)", gap.Round(time.Millisecond), retryAfter)
				}
				msgs := e.fake.BotMessages(channel)
				if len(msgs) != 1 || msgs[0].Content != want {
					t.Errorf("bot messages in the channel: %+v; want exactly one reading %q", msgs, want)
				}
			})
		}
	})
}

const (
	discordStepsKeyword = "two steps please"
	discordStepOne      = "First I will draw the chart for you, one moment."
	discordStepTwo      = "There it is: sign-ups went up."
)

// A turn that streams text, runs a tool and streams more text shows two
// replies: the second step's live message is a message of its own and
// never overwrites the first (each step's stream has its own nonce key).
func TestDiscordTwoStepsTwoMessages(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStart(t, db, 20*time.Millisecond)
		const channel = "3000000000000000001"
		e.mention(channel, discordAlice, discordStepsKeyword)
		e.waitBotMessage(channel, discordStepTwo)
		e.settle(channel)
		var texts []string
		for _, m := range e.fake.BotMessages(channel) {
			if m.Content != "" {
				texts = append(texts, m.Content)
			}
		}
		if len(texts) != 2 || texts[0] != discordStepOne || texts[1] != discordStepTwo {
			t.Fatalf("bot text messages = %q; want the first step's reply, then the second's", texts)
		}
	})
}
