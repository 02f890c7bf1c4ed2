package app_test

// End-to-end tests of Telegram through the real service: app.Open wires
// the store (SQLite, and Postgres when TEST_DATABASE_URL is set), core,
// the worker, delivery and the Telegram adapter, long polling; the only
// fakes are the Bot API (internal/telegramtest, spoken to by
// github.com/go-telegram/bot and the adapter's poll) and the model (the
// scripted backend, with discordScript's script).

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/google/uuid"
	"gopkg.in/yaml.v3"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/telegramtest"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

var (
	tgAlice   = telegramtest.User{ID: 5001, FirstName: "alice", Username: "alice_tg"}
	tgMallory = telegramtest.User{ID: 5002, FirstName: "mallory"}
)

// discordUser names a Telegram user as discordFallback reads a name: the
// service shows the model a Telegram user by their first name.
func discordUser(u telegramtest.User) discordgo.User { return discordgo.User{Username: u.FirstName} }

const tgChartKeyword = "chart please"

// telegramScript is discordScript's turns plus a chart.
func telegramScript(tb testing.TB, chunkDelay time.Duration) string {
	tb.Helper()
	var script map[string]any
	data, err := os.ReadFile(discordScript(tb, chunkDelay))
	if err != nil {
		tb.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &script); err != nil {
		tb.Fatal(err)
	}
	turns := script["turns"].([]any)
	chart := map[string]any{
		"when_last_user_contains": tgChartKeyword, "text": "Here is the chart.",
		"tool_calls": []map[string]any{{"name": "render_chart", "input": map[string]any{"title": "Sign-ups", "kind": "line",
			"series": []map[string]any{{"name": "s", "points": []map[string]any{{"x": 1, "y": 2}, {"x": 2, "y": 3}}}}}}},
	}
	script["turns"] = append([]any{chart}, turns...)
	out, err := yaml.Marshal(script)
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "telegram_e2e.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

type telegramEnv struct {
	tb    testing.TB
	app   *app.App
	fake  *telegramtest.Server
	store store.Store
}

func telegramStart(tb testing.TB, db string, chunkDelay time.Duration, config string) *telegramEnv {
	tb.Helper()
	fake := telegramtest.NewServer(tb)
	env := map[string]string{"SWITCHBOARD_MODEL": "scripted:" + telegramScript(tb, chunkDelay)}
	cfg := app.Config{
		Addr:        "127.0.0.1:0",
		DatabaseURL: db,
		Telegram:    app.TelegramSettings{BotToken: fake.Token, APIURL: fake.URL},
		ConfigPath:  writeConfig(tb, config),
		Env:         func(k string) string { return env[k] },
		Logger:      testenv.Logger(tb),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := app.Open(ctx, cfg)
	if err != nil {
		tb.Fatalf("opening the service: %v", err)
	}
	if err := a.Start(context.Background()); err != nil {
		_ = a.Stop(context.Background())
		tb.Fatalf("starting the service: %v", err)
	}
	tb.Cleanup(func() { _ = a.Stop(context.Background()) })
	return &telegramEnv{tb: tb, app: a, fake: fake, store: a.Store}
}

// waitBot waits for a bot message in chat whose text contains want.
func (e *telegramEnv) waitBot(chat int64, want string) telegramtest.Message {
	e.tb.Helper()
	var found telegramtest.Message
	e.fake.Wait(e.tb, fmt.Sprintf("a bot message containing %q in chat %d", want, chat), func() bool {
		for _, m := range e.fake.BotMessages(chat) {
			if strings.Contains(m.Text, want) || strings.Contains(m.Caption, want) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// settle waits until the conversation bound at place has nothing queued
// or running and everything delivered; it returns the conversation.
func (e *telegramEnv) settle(chat int64, thread string) uuid.UUID {
	e.tb.Helper()
	ctx := context.Background()
	var conv uuid.UUID
	discordPoll(e.tb, fmt.Sprintf("chat %d thread %q to settle", chat, thread), func() (bool, string) {
		b, err := e.store.BindingFind(ctx, &store.BindingFindParams{Place: store.PlaceFromColumns("telegram", "", strconv.FormatInt(chat, 10), thread)})
		if err != nil {
			return false, err.Error()
		}
		conv = b.ConversationID
		items, err := e.store.WorkList(ctx, &store.WorkListParams{States: []store.WorkState{store.WorkAvailable, store.WorkRunning}, ConversationID: &conv, Limit: 10})
		if err != nil {
			return false, err.Error()
		}
		c, err := e.store.ConversationGet(ctx, conv)
		if err != nil {
			return false, err.Error()
		}
		return len(items) == 0 && b.DeliveredSeq == c.LastSeq, fmt.Sprintf("%d items, delivered %d of %d", len(items), b.DeliveredSeq, c.LastSeq)
	})
	return conv
}

// TestTelegramEndToEnd: through the real service, on SQLite and Postgres:
// a mention in a group is answered in a reply thread, and a reply to the
// bot continues it without a mention; a forum topic is a conversation of
// its own; a DM streams one message by throttled edits; an ask_user question is an inline keyboard
// whose click resumes the turn; a file sent reaches the model, and a chart
// comes back as a photo.
func TestTelegramEndToEnd(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := telegramStart(t, db, 100*time.Millisecond, openAccess)
		group := telegramtest.Supergroup(-1001000000001, "team")
		dm := telegramtest.Private(tgAlice)

		t.Run("mention and reply thread", func(t *testing.T) {
			q := e.fake.Mention(group, tgAlice, "hello there")
			want := discordFallback(discordUser(tgAlice), "hello there")
			m := e.waitBot(group.ID, want)
			if m.ReplyTo != q.ID || m.ThreadID != q.ID {
				t.Errorf("the answer replies to %d in thread %d; want a reply to the mention %d, in its thread", m.ReplyTo, m.ThreadID, q.ID)
			}
			if m.ParseMode != "HTML" {
				t.Errorf("the answer was sent with parse_mode %q, want HTML", m.ParseMode)
			}
			conv := e.settle(group.ID, strconv.Itoa(q.ID))
			e.checkOne(conv, "hello there", want)

			// A reply to the bot, without a mention, is addressed to it and
			// continues the thread's conversation.
			r := e.fake.UserMessage(telegramtest.Send{Chat: group, From: tgAlice, Text: "and one more", ReplyTo: m.ID})
			want2 := discordFallback(discordUser(tgAlice), "and one more")
			m2 := e.waitBot(group.ID, want2)
			if m2.ThreadID != q.ID || m2.ReplyTo != r.ID {
				t.Errorf("the second answer is in thread %d replying to %d; want thread %d, replying to %d", m2.ThreadID, m2.ReplyTo, q.ID, r.ID)
			}
			if conv2 := e.settle(group.ID, strconv.Itoa(q.ID)); conv2 != conv {
				t.Errorf("the reply went to conversation %s, want the thread's %s", conv2, conv)
			}
			// A message in the group not addressed to the bot is left alone.
			e.fake.UserMessage(telegramtest.Send{Chat: group, From: tgMallory, Text: "lunch anyone?"})
			// (Checked after the topic's answer, which comes later.)
		})

		t.Run("forum topic", func(t *testing.T) {
			forum := telegramtest.Forum(-1001000000002, "forum")
			e.fake.UserMessage(telegramtest.Send{Chat: forum, From: tgAlice, Text: "@" + telegramtest.BotUsername + " topic question", Topic: 77})
			m := e.waitBot(forum.ID, discordFallback(discordUser(tgAlice), "topic question"))
			if m.ThreadID != 77 || !m.IsTopic {
				t.Errorf("the answer is in thread %d (topic %v); want topic 77", m.ThreadID, m.IsTopic)
			}
			e.settle(forum.ID, "topic:77")
			for _, bm := range e.fake.BotMessages(group.ID) {
				if strings.Contains(bm.Text, "lunch anyone") {
					t.Errorf("the bot answered a message not addressed to it: %q", bm.Text)
				}
			}
		})

		t.Run("DM stream", func(t *testing.T) {
			e.fake.UserMessage(telegramtest.Send{Chat: dm, From: tgAlice, Text: discordStreamKeyword})
			e.waitBot(dm.ID, discordStreamText())
			conv := e.settle(dm.ID, "")
			e.checkOne(conv, discordStreamKeyword, discordStreamText())
			msgs := e.fake.BotMessages(dm.ID)
			if len(msgs) != 1 {
				t.Fatalf("the DM has %d bot messages, want the one streamed reply", len(msgs))
			}
			m := msgs[0]
			if m.Edits < 1 {
				t.Errorf("the reply was edited %d times; want it streamed by edits", m.Edits)
			}
			times := append([]time.Time{m.SentAt}, m.EditTimes...)
			for i := 1; i < len(times); i++ {
				if gap := times[i].Sub(times[i-1]); gap < 900*time.Millisecond {
					t.Errorf("edits %d and %d of the streamed reply are %s apart; Telegram wants about one a second per chat", i-1, i, gap)
				}
			}
		})

		t.Run("button", func(t *testing.T) {
			e.fake.UserMessage(telegramtest.Send{Chat: dm, From: tgAlice, Text: discordAskKeyword})
			q := e.waitBot(dm.ID, discordQuestion)
			if q.Keyboard == nil || len(q.Keyboard.InlineKeyboard) == 0 {
				t.Fatalf("the question has no inline keyboard")
			}
			var red string
			for _, row := range q.Keyboard.InlineKeyboard {
				for _, b := range row {
					if b.Text == "Red" {
						red = b.CallbackData
					}
				}
			}
			if red == "" || len(red) > telegramtest.MaxCallbackData {
				t.Fatalf("no Red button within 64 bytes of callback_data: %+v", q.Keyboard)
			}
			qid := e.fake.Click(dm, q.ID, tgAlice, red)
			e.waitBot(dm.ID, "Noted: ")
			e.fake.Wait(t, "the click answered and the choice shown", func() bool {
				_, _, ok := e.fake.Answer(qid)
				for _, m := range e.fake.BotMessages(dm.ID) {
					if m.ID == q.ID {
						return ok && strings.Contains(m.Text, "Red — chosen by alice") && m.Keyboard == nil
					}
				}
				return false
			})
			e.settle(dm.ID, "")
		})

		t.Run("files", func(t *testing.T) {
			e.fake.UserMessage(telegramtest.Send{Chat: dm, From: tgAlice, Text: "read this", File: &telegramtest.File{Name: "notes.txt", MimeType: "text/plain", Data: []byte("the launch is on Tuesday")}})
			e.waitBot(dm.ID, "read this")
			conv := e.settle(dm.ID, "")
			users := logEntries(t, e.store, conv, store.EntryUser)
			last := decode[core.UserContent](t, users[len(users)-1])
			if len(last.Files) != 1 || string(last.Files[0].Data) != "the launch is on Tuesday" {
				t.Errorf("the message's files reached the model as %+v; want notes.txt with its content", last.Files)
			}

			e.fake.UserMessage(telegramtest.Send{Chat: dm, From: tgAlice, Text: tgChartKeyword})
			e.waitBot(dm.ID, "Here is the chart.")
			e.settle(dm.ID, "")
			photos := 0
			for _, m := range e.fake.BotMessages(dm.ID) {
				if m.Photo != nil && len(m.Photo.Data) > 0 {
					photos++
				}
			}
			if photos != 1 {
				t.Errorf("the chart came as %d photos, want 1", photos)
			}
		})
	})
}

// TestTelegramLongReplySplit: a reply longer than 4,096 characters is
// split into messages that each fit, its code block closed at the cut and
// opened again.
func TestTelegramLongReplySplit(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := telegramStart(t, db, 0, openAccess)
		dm := telegramtest.Private(tgAlice)
		before := len(e.fake.BotMessages(dm.ID))
		e.fake.UserMessage(telegramtest.Send{Chat: dm, From: tgAlice, Text: discordLongKeyword})
		e.waitBot(dm.ID, "That is all: run it and check the output.")
		e.settle(dm.ID, "")
		msgs := e.fake.BotMessages(dm.ID)[before:]
		if len(msgs) != 2 {
			t.Fatalf("the long reply is %d messages, want 2", len(msgs))
		}
		for _, m := range msgs {
			if n := len([]rune(m.Text)); n > telegramtest.MaxMessageChars {
				t.Errorf("a part is %d characters, over 4096", n)
			}
			if strings.Count(m.Raw, "<pre>") != strings.Count(m.Raw, "</pre>") {
				t.Errorf("a part's code block is not closed: %q", m.Raw)
			}
		}
	})
}

// checkOne checks a conversation holds one exchange.
func (e *telegramEnv) checkOne(conv uuid.UUID, user, reply string) {
	e.tb.Helper()
	checkOneExchange(e.tb, e.store, conv, user, reply)
}

// TestTelegramPairingFlow: a stranger's DM gets a pairing code (the
// default policy); an admin approves it with !approve; the stranger is
// then answered.
func TestTelegramPairingFlow(t *testing.T) {
	t.Parallel()
	discordEachStore(t, func(t *testing.T, db string) {
		e := telegramStart(t, db, 0, "access:\n  admins: [\"9001\"]\n")
		stranger := telegramtest.User{ID: 7001, FirstName: "stranger"}
		boss := telegramtest.User{ID: 9001, FirstName: "boss"}
		dm := telegramtest.Private(stranger)
		e.fake.UserMessage(telegramtest.Send{Chat: dm, From: stranger, Text: "hello bot"})
		code := pairingCode(t, e.waitBot(dm.ID, "pairing code is").Text)
		e.fake.UserMessage(telegramtest.Send{Chat: telegramtest.Private(boss), From: boss, Text: "!approve " + code})
		e.waitBot(boss.ID, "Approved")
		e.fake.UserMessage(telegramtest.Send{Chat: dm, From: stranger, Text: "hello again"})
		e.waitBot(dm.ID, discordFallback(discordUser(stranger), "hello again"))
		if n := len(e.fake.BotMessages(dm.ID)); n != 2 {
			t.Errorf("the stranger got %d messages, want the pairing notice and the answer", n)
		}
	})
}

// TestTelegramSettingsNameTheSetting: a bad Telegram setting stops the
// start with an error naming it.
func TestTelegramSettingsNameTheSetting(t *testing.T) {
	t.Parallel()
	fake := telegramtest.NewServer(t)
	for _, tc := range []struct {
		tg     app.TelegramSettings
		public string
		want   string
	}{
		{app.TelegramSettings{BotToken: "not-a-token"}, "", "TELEGRAM_BOT_TOKEN"},
		{app.TelegramSettings{BotToken: fake.Token, APIURL: "ftp://example.test"}, "", "TELEGRAM_API_URL"},
		{app.TelegramSettings{BotToken: fake.Token, WebhookSecret: "short"}, "https://sb.example.test", "TELEGRAM_WEBHOOK_SECRET"},
		{app.TelegramSettings{BotToken: fake.Token, WebhookSecret: "a-long-enough-secret_123"}, "", "SWITCHBOARD_PUBLIC_URL"},
		{app.TelegramSettings{BotToken: fake.Token, WebhookSecret: "a-long-enough-secret_123"}, "http://sb.example.test", "SWITCHBOARD_PUBLIC_URL"},
		{app.TelegramSettings{WebhookSecret: "a-long-enough-secret_123"}, "", "TELEGRAM_BOT_TOKEN is not"},
	} {
		env := map[string]string{"SWITCHBOARD_PUBLIC_URL": tc.public}
		cfg := app.Config{
			Addr: "127.0.0.1:0", DatabaseURL: "sqlite:" + filepath.Join(t.TempDir(), "sb.db"), Telegram: tc.tg,
			ConfigPath: writeConfig(t, openAccess), Env: func(k string) string { return env[k] }, Logger: testenv.Logger(t),
		}
		a, err := app.Open(t.Context(), cfg)
		if err == nil {
			_ = a.Stop(context.Background())
			t.Errorf("Open with %+v (public URL %q) started; want an error naming %s", tc.tg, tc.public, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open with %+v: %v; want it to name %s", tc.tg, err, tc.want)
		}
	}
}

// TestTelegramWebhook: with TELEGRAM_WEBHOOK_SECRET the service registers
// its webhook and answers what Telegram pushes there; a push without the
// secret is refused.
func TestTelegramWebhook(t *testing.T) {
	t.Parallel()
	fake := telegramtest.NewServer(t)
	addr := freeAddr(t)
	const secret = "webhook-secret_for-the-e2e-test"
	env := map[string]string{
		"SWITCHBOARD_MODEL":      "scripted:" + telegramScript(t, 0),
		"SWITCHBOARD_PUBLIC_URL": "http://" + addr,
	}
	cfg := app.Config{
		Addr: addr, DatabaseURL: "sqlite:" + filepath.Join(t.TempDir(), "sb.db"),
		Telegram:   app.TelegramSettings{BotToken: fake.Token, APIURL: fake.URL, WebhookSecret: secret},
		ConfigPath: writeConfig(t, openAccess), Env: func(k string) string { return env[k] }, Logger: testenv.Logger(t),
	}
	a, err := app.Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		_ = a.Stop(context.Background())
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Stop(context.Background()) })
	if u, s := fake.Webhook(); u != "http://"+addr+"/telegram/webhook" || s != secret {
		t.Fatalf("the webhook registered is %q with secret %q", u, s)
	}
	resp, err := http.Post("http://"+addr+"/telegram/webhook", "application/json", strings.NewReader(`{"update_id":1,"message":{"message_id":1,"date":1,"chat":{"id":5001,"type":"private"},"from":{"id":5001,"is_bot":false,"first_name":"mallory"},"text":"forged"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a push without the secret answered %d, want 401", resp.StatusCode)
	}
	dm := telegramtest.Private(tgAlice)
	e := &telegramEnv{tb: t, app: a, fake: fake, store: a.Store}
	e.fake.UserMessage(telegramtest.Send{Chat: dm, From: tgAlice, Text: "via webhook"})
	e.waitBot(dm.ID, discordFallback(discordUser(tgAlice), "via webhook"))
	conv := e.settle(dm.ID, "")
	e.checkOne(conv, "via webhook", discordFallback(discordUser(tgAlice), "via webhook"))
	if n := len(fake.Calls("getupdates")); n != 0 {
		t.Errorf("the service long-polled %d times in webhook mode", n)
	}
}

// TestTelegramOnePollerAcrossInstances: two instances on one Postgres
// store; only the holder of the poll lease long-polls (no 409 Conflict),
// every message is answered once, and when it stops the other takes over.
func TestTelegramOnePollerAcrossInstances(t *testing.T) {
	t.Parallel()
	db := postgresDatabase(t)
	fake := telegramtest.NewServer(t)
	script := telegramScript(t, 0)
	open := func(id string) *app.App {
		env := map[string]string{"SWITCHBOARD_MODEL": "scripted:" + script}
		cfg := app.Config{
			Addr: "127.0.0.1:0", DatabaseURL: db, InstanceID: id,
			Telegram:   app.TelegramSettings{BotToken: fake.Token, APIURL: fake.URL},
			ConfigPath: writeConfig(t, openAccess), Env: func(k string) string { return env[k] }, Logger: testenv.Logger(t),
		}
		a, err := app.Open(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Start(context.Background()); err != nil {
			_ = a.Stop(context.Background())
			t.Fatal(err)
		}
		return a
	}
	one := open("telegram-one")
	fake.Wait(t, "the first instance to poll", func() bool { return fake.PollsStarted() > 0 })
	two := open("telegram-two")
	t.Cleanup(func() { _ = two.Stop(context.Background()) })
	e := &telegramEnv{tb: t, app: one, fake: fake, store: one.Store}
	for i := range 3 {
		u := telegramtest.User{ID: int64(6100 + i), FirstName: "p" + strconv.Itoa(i)}
		e.fake.UserMessage(telegramtest.Send{Chat: telegramtest.Private(u), From: u, Text: "before"})
		e.waitBot(u.ID, discordFallback(discordUser(u), "before"))
	}
	if err := one.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		u := telegramtest.User{ID: int64(6200 + i), FirstName: "q" + strconv.Itoa(i)}
		e.fake.UserMessage(telegramtest.Send{Chat: telegramtest.Private(u), From: u, Text: "after"})
		e.waitBot(u.ID, discordFallback(discordUser(u), "after"))
	}
	e.store = two.Store
	for _, base := range []int64{6100, 6200} {
		for i := range 3 {
			id := base + int64(i)
			e.settle(id, "")
			if n := len(fake.BotMessages(id)); n != 1 {
				t.Errorf("user %d got %d answers, want 1", id, n)
			}
		}
	}
	for _, c := range fake.Calls("getupdates") {
		if c.Status == http.StatusConflict {
			t.Errorf("a getUpdates was answered 409 Conflict: two instances polled at once")
		}
	}
}
