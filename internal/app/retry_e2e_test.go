package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/store"
)

// anthropicEnv points the service at a fake Anthropic through the real SDK.
func anthropicEnv(f *modeltest.Fake) map[string]string {
	return map[string]string{
		"SWITCHBOARD_MODEL":  "anthropic:claude-sonnet-4-5",
		"ANTHROPIC_API_KEY":  "sk-ant-test-key",
		"ANTHROPIC_BASE_URL": f.URL,
	}
}

// A model stream cut mid-reply is retried; the live message starts over in
// place, and the user ends with exactly the model's final text, once, with
// no stream left open. When every attempt is cut, the user sees one clear
// error in place of the partial text.
func TestSlackCutStreamRetriesCleanly(t *testing.T) {
	final := "reply c00 c01 c02 c03 c04 c05 c06 c07 c08 c09 c10 c11 done"
	tests := []struct {
		name    string
		replies []modeltest.Reply
		want    func(t *testing.T, shown string)
	}{
		{
			name:    "cut once, then whole",
			replies: []modeltest.Reply{{Text: final, CutAfter: 6}, {Text: final}},
			want: func(t *testing.T, shown string) {
				if shown != final {
					t.Fatalf("the reply shows %q; want exactly the model's final text %q", shown, final)
				}
			},
		},
		{
			name:    "every attempt cut",
			replies: []modeltest.Reply{{Text: final, CutAfter: 6}, {Text: final, CutAfter: 6}, {Text: final, CutAfter: 6}},
			want: func(t *testing.T, shown string) {
				if !strings.HasPrefix(shown, "⚠️") || strings.Contains(shown, "c00") {
					t.Fatalf("the reply shows %q; want one clear error in place of the partial text", shown)
				}
			},
		},
		{
			name:    "malformed stream given up",
			replies: []modeltest.Reply{{Text: final, Malformed: true}, {Text: final, Malformed: true}, {Text: final, Malformed: true}},
			want: func(t *testing.T, shown string) {
				if !strings.HasPrefix(shown, "⚠️") || strings.Contains(shown, "reply c00") {
					t.Fatalf("the reply shows %q; want one clear error and no partial text", shown)
				}
			},
		},
	}
	eachStoreInTurn(t, func(t *testing.T, db databaseFunc) {
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				fake := modeltest.NewAnthropic(t)
				fake.Push(tt.replies...)
				env := anthropicEnv(fake)
				// The backend reads the SDK's variables from the process.
				t.Setenv("ANTHROPIC_API_KEY", env["ANTHROPIC_API_KEY"])
				t.Setenv("ANTHROPIC_BASE_URL", env["ANTHROPIC_BASE_URL"])
				e := startSlack(t, db(t), envOptions{env: env})
				ch := fmt.Sprintf("C0CUT%d", i)
				ts := fmt.Sprintf("1700000300.%06d", i)
				e.mustPost(newEvent(fmt.Sprintf("EvCut%d", i), mention(ch, ts, "", alice, "tell me")))
				e.waitIdle()
				msgs := e.botMessages(ch)
				if len(msgs) != 1 {
					var shownAll []string
					for _, m := range msgs {
						shownAll = append(shownAll, shown(m))
					}
					t.Fatalf("%d bot messages, want exactly 1: %q", len(msgs), shownAll)
				}
				for _, m := range e.slack.Messages(ch) {
					if m.Streaming {
						t.Fatalf("a stream was left open: %+v", m)
					}
				}
				tt.want(t, shown(msgs[0]))
			})
		}
	})
}

// A provider error that quotes the API key, whatever the key's length, shows
// the key in no Slack message, no log entry and no service log line.
func TestSlackProviderErrorNeverShowsTheKey(t *testing.T) {
	for _, key := range []string{"sk-ab", "sk-abcdefgh", "sk-ant-" + strings.Repeat("k", 60), "xyzzy1"} {
		t.Run(fmt.Sprint(len(key)), func(t *testing.T) {
			fake := modeltest.NewAnthropic(t)
			quote := modeltest.Reply{Status: 401, ErrorType: "authentication_error", ErrorMessage: "Incorrect API key provided: " + key}
			fake.Push(quote, quote, quote)
			env := anthropicEnv(fake)
			env["ANTHROPIC_API_KEY"] = key
			t.Setenv("ANTHROPIC_API_KEY", key)
			t.Setenv("ANTHROPIC_BASE_URL", env["ANTHROPIC_BASE_URL"])
			var logs strings.Builder
			var mu sync.Mutex
			logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
				mu.Lock()
				defer mu.Unlock()
				return logs.Write(p)
			}), &slog.HandlerOptions{Level: slog.LevelDebug}))
			e := startSlack(t, sqliteDatabase(t), envOptions{env: env, logger: logger})
			e.mustPost(newEvent("EvKey", mention("C0KEY", "1700000400.000001", "", alice, "hi")))
			e.waitIdle()
			msgs := e.botMessages("C0KEY")
			if len(msgs) != 1 || !strings.HasPrefix(shown(msgs[0]), "⚠️") {
				t.Fatalf("bot messages %+v; want one error message", msgs)
			}
			for _, c := range e.slack.Calls() {
				for k, v := range c.Params {
					if strings.Contains(strings.Join(v, " "), key) {
						t.Fatalf("slack %s param %s carries the key: %q", c.Method, k, v)
					}
				}
			}
			conv := e.conversation("C0KEY", "1700000400.000001")
			es, err := e.store.EntryList(t.Context(), &store.EntryListParams{ConversationID: conv.ID, WithErrors: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, en := range es {
				if strings.Contains(string(en.Content), key) {
					t.Fatalf("entry %s carries the key: %s", en.Kind, en.Content)
				}
			}
			_ = e.app.Stop(context.Background())
			mu.Lock()
			defer mu.Unlock()
			if strings.Contains(logs.String(), key) {
				t.Fatalf("the service log carries the key")
			}
		})
	}
}

// Model text on the post-and-update path never becomes a broadcast or a
// mention: links to !channel, !here or a user id are sent as plain text.
func TestSlackModelTextCannotBroadcast(t *testing.T) {
	fake := modeltest.NewAnthropic(t)
	fake.Push(modeltest.Reply{Text: "Heads up [everyone](!channel) and [](!here), ask [boss](@U0BOSS) or <!everyone>."})
	env := anthropicEnv(fake)
	t.Setenv("ANTHROPIC_API_KEY", env["ANTHROPIC_API_KEY"])
	t.Setenv("ANTHROPIC_BASE_URL", env["ANTHROPIC_BASE_URL"])
	e := startSlack(t, sqliteDatabase(t), envOptions{env: env})
	e.mustPost(newEvent("EvBroadcast", directMessage("D0ALICE", "1700000500.000001", alice, "announce it")))
	e.waitIdle()
	msgs := e.botMessages("D0ALICE")
	if len(msgs) != 1 {
		t.Fatalf("%d bot messages, want 1", len(msgs))
	}
	for _, c := range e.slack.Calls("chat.postMessage", "chat.update") {
		for _, field := range []string{"text", "blocks"} {
			v := c.Params.Get(field)
			for _, bad := range []string{"<!channel", "<!here", "<!everyone", "<@U0BOSS"} {
				if strings.Contains(v, bad) {
					t.Fatalf("%s %s carries broadcast markup %q: %s", c.Method, field, bad, v)
				}
			}
		}
	}
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A signed event that carries no event_id is deduped by the message it
// delivers: sent twice, it is answered once.
func TestSlackEventWithoutIDIsAnsweredOnce(t *testing.T) {
	t.Parallel()
	e := startSlack(t, sqliteDatabase(t), envOptions{})
	ev := mention("C0NOID", "1700000600.000001", "", alice, "hello without an id")
	// The redelivery comes after the reply, as Slack's retries do.
	for range 2 {
		e.mustPost(newEvent("", ev))
		e.waitIdle()
	}
	if msgs := e.botMessages("C0NOID"); len(msgs) != 1 {
		t.Fatalf("%d bot messages, want exactly 1", len(msgs))
	}
}
