package slack

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/slacktest"
)

func TestVerifyDocumentedExample(t *testing.T) {
	// Slack's published example ("Verifying requests from Slack"). Its body
	// runs the /webhook-collect command; the issue text's /webbot variant does
	// not produce the published signature.
	body := "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
	h := http.Header{}
	h.Set("X-Slack-Request-Timestamp", "1531420618")
	h.Set("X-Slack-Signature", "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503")
	secret := "8f742231b10e8888abcd99yyyzzz85a5"
	at := time.Unix(1531420618, 0)

	tests := []struct {
		name   string
		secret string
		body   string
		now    time.Time
		want   error
	}{
		{"documented example", secret, body, at, nil},
		{"4m59s later", secret, body, at.Add(4*time.Minute + 59*time.Second), nil},
		{"5m01s later", secret, body, at.Add(5*time.Minute + time.Second), errStaleSignature},
		{"5m01s earlier", secret, body, at.Add(-5*time.Minute - time.Second), errStaleSignature},
		{"other secret", "not-the-secret", body, at, errBadSignature},
		{"changed body", secret, body + "&x=1", at, errBadSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := verify(tt.secret, h, []byte(tt.body), tt.now)
			if !errors.Is(err, tt.want) {
				t.Fatalf("verify = %v, want %v", err, tt.want)
			}
		})
	}
}

func mention(text, ts, thread string) map[string]any {
	ev := map[string]any{"type": "app_mention", "user": "U1", "text": text, "ts": ts, "channel": "C1", "event_ts": ts}
	if thread != "" {
		ev["thread_ts"] = thread
	}
	return ev
}

func message(channelType, channel, text, ts, thread string, extra map[string]any) map[string]any {
	ev := map[string]any{"type": "message", "channel_type": channelType, "user": "U1", "text": text, "ts": ts, "channel": channel, "event_ts": ts}
	if thread != "" {
		ev["thread_ts"] = thread
	}
	for k, v := range extra {
		ev[k] = v
	}
	return ev
}

func TestEventsHTTP(t *testing.T) {
	tests := []struct {
		name      string
		allowBots bool
		event     map[string]any
		header    http.Header
		want      *core.Inbound // nil: nothing submitted
	}{
		{
			name:  "mention in a channel starts a thread under it",
			event: mention("<@U0BOT> what is up?", "1700000001.000100", ""),
			want: &core.Inbound{Platform: "slack", EventID: "Ev1", Workspace: "T0FAKE", Channel: "C1", Thread: "1700000001.000100",
				MessageID: "1700000001.000100", UserID: "U1", Text: "what is up?", Mentioned: true},
		},
		{
			name:  "mention inside a thread stays in it",
			event: mention("hey <@U0BOT|switchboard>, and &lt;b&gt;", "1700000002.000100", "1700000000.000001"),
			want: &core.Inbound{Platform: "slack", EventID: "Ev1", Workspace: "T0FAKE", Channel: "C1", Thread: "1700000000.000001",
				MessageID: "1700000002.000100", UserID: "U1", Text: "hey, and <b>", Mentioned: true},
		},
		{
			name:  "direct message",
			event: message("im", "D1", "hello there", "1700000003.000100", "", nil),
			want: &core.Inbound{Platform: "slack", EventID: "Ev1", Workspace: "T0FAKE", Channel: "D1",
				MessageID: "1700000003.000100", UserID: "U1", Text: "hello there", IsDM: true},
		},
		{
			name:  "later message in a channel thread goes to core unmentioned",
			event: message("channel", "C1", "and another thing", "1700000004.000100", "1700000001.000100", nil),
			want: &core.Inbound{Platform: "slack", EventID: "Ev1", Workspace: "T0FAKE", Channel: "C1", Thread: "1700000001.000100",
				MessageID: "1700000004.000100", UserID: "U1", Text: "and another thing"},
		},
		{
			name:   "retry is still submitted",
			event:  message("group", "G1", "again", "1700000005.000100", "1700000001.000100", nil),
			header: http.Header{"X-Slack-Retry-Num": {"1"}, "X-Slack-Retry-Reason": {"http_timeout"}},
			want: &core.Inbound{Platform: "slack", EventID: "Ev1", Workspace: "T0FAKE", Channel: "G1", Thread: "1700000001.000100",
				MessageID: "1700000005.000100", UserID: "U1", Text: "again"},
		},
		{name: "own message by user id", event: message("channel", "C1", "my reply", "1.1", "1.0", map[string]any{"user": "U0BOT"})},
		{name: "own message by bot id", event: message("channel", "C1", "my reply", "1.1", "1.0", map[string]any{"user": "", "bot_id": "B0BOT", "subtype": "bot_message"})},
		{name: "other bot not allowed", event: message("channel", "C1", "beep", "1.1", "1.0", map[string]any{"user": "U9", "bot_id": "B9"})},
		{
			name: "other bot allowed", allowBots: true,
			event: message("channel", "C1", "beep", "1700000006.000100", "1.0", map[string]any{"user": "", "bot_id": "B9", "subtype": "bot_message", "username": "otherbot"}),
			want: &core.Inbound{Platform: "slack", EventID: "Ev1", Workspace: "T0FAKE", Channel: "C1", Thread: "1.0",
				MessageID: "1700000006.000100", UserID: "B9", UserName: "otherbot", Text: "beep"},
		},
		{name: "edit ignored", event: message("channel", "C1", "", "1.1", "", map[string]any{"subtype": "message_changed"})},
		{name: "delete ignored", event: message("channel", "C1", "", "1.1", "", map[string]any{"subtype": "message_deleted"})},
		{name: "channel message naming the bot is left to app_mention", event: message("channel", "C1", "<@U0BOT> hi", "1.1", "", nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, func(o *Options) { o.AllowBots = tt.allowBots })
			body := slacktest.MustJSON(slacktest.EventCallback("T0FAKE", "Ev1", tt.event))
			status, _ := env.postSigned(t, "/slack/events", "application/json", body, env.clock.Now(), tt.header)
			if status != http.StatusOK {
				t.Fatalf("status %d, want 200", status)
			}
			got := env.core.Inbound()
			if tt.want == nil {
				if len(got) != 0 {
					t.Fatalf("submitted %+v, want nothing", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("submitted %d messages, want 1", len(got))
			}
			g := got[0]
			g.At = time.Time{}
			if !reflect.DeepEqual(g, *tt.want) {
				t.Fatalf("submitted\n %+v\nwant\n %+v", g, *tt.want)
			}
		})
	}
}

func TestEventsHTTPRejects(t *testing.T) {
	env := newEnv(t, nil)
	body := slacktest.MustJSON(slacktest.EventCallback("T0FAKE", "Ev1", mention("<@U0BOT> hi", "1.1", "")))
	now := env.clock.Now()
	tests := []struct {
		name string
		req  func() *http.Request
	}{
		{"wrong secret", func() *http.Request {
			return slacktest.NewSignedRequest(env.http.URL+"/slack/events", "application/json", "wrong", now, body)
		}},
		{"six minutes old", func() *http.Request {
			return slacktest.NewSignedRequest(env.http.URL+"/slack/events", "application/json", testSecret, now.Add(-6*time.Minute), body)
		}},
		{"body changed after signing", func() *http.Request {
			r := slacktest.NewSignedRequest(env.http.URL+"/slack/events", "application/json", testSecret, now, body)
			r2 := slacktest.NewSignedRequest(env.http.URL+"/slack/events", "application/json", testSecret, now, []byte(strings.Replace(string(body), "hi", "ho", 1)))
			r2.Header = r.Header
			return r2
		}},
		{"no signature", func() *http.Request {
			r := slacktest.NewSignedRequest(env.http.URL+"/slack/events", "application/json", testSecret, now, body)
			r.Header.Del("X-Slack-Signature")
			return r
		}},
		{"interactivity with a wrong secret", func() *http.Request {
			return slacktest.NewSignedRequest(env.http.URL+"/slack/interactivity", "application/x-www-form-urlencoded", "wrong", now,
				slacktest.InteractionForm(slacktest.BlockActions(slacktest.Click{UserID: "U1", Channel: "C1", MessageTS: "1.1", ActionID: "a", Value: "v"})))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.DefaultClient.Do(tt.req())
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401", resp.StatusCode)
			}
			if got := env.core.Inbound(); len(got) != 0 {
				t.Fatalf("a rejected request reached Submit: %+v", got)
			}
			if got := env.core.Actions(); len(got) != 0 {
				t.Fatalf("a rejected request reached Act: %+v", got)
			}
		})
	}
}

func TestURLVerification(t *testing.T) {
	env := newEnv(t, nil)
	body := slacktest.MustJSON(map[string]any{"token": "x", "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P", "type": "url_verification"})
	status, resp := env.postSigned(t, "/slack/events", "application/json", body, env.clock.Now(), nil)
	if status != http.StatusOK || !strings.Contains(resp, `"challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"`) {
		t.Fatalf("url_verification answered %d %q, want 200 echoing the challenge", status, resp)
	}
}

func TestSubmitFailureIs500(t *testing.T) {
	env := newEnv(t, nil)
	env.core.setSubmitErr(errors.New("database down"))
	body := slacktest.MustJSON(slacktest.EventCallback("T0FAKE", "Ev1", mention("<@U0BOT> hi", "1.1", "")))
	if status, _ := env.postSigned(t, "/slack/events", "application/json", body, env.clock.Now(), nil); status != http.StatusInternalServerError {
		t.Fatalf("status %d when core fails, want 500 so that Slack retries", status)
	}
}

func TestAssistantThread(t *testing.T) {
	env := newEnv(t, nil)
	started := map[string]any{
		"type": "assistant_thread_started",
		"assistant_thread": map[string]any{
			"user_id": "U1", "channel_id": "D1", "thread_ts": "1700000010.000001",
			"context": map[string]any{"channel_id": "C7", "team_id": "T0FAKE"},
		},
		"event_ts": "1700000010.000002",
	}
	body := slacktest.MustJSON(slacktest.EventCallback("T0FAKE", "Ev1", started))
	if status, _ := env.postSigned(t, "/slack/events", "application/json", body, env.clock.Now(), nil); status != http.StatusOK {
		t.Fatalf("status %d, want 200", status)
	}
	calls, err := env.srv.WaitCalls("assistant.threads.setSuggestedPrompts", 1, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p := calls[0].Params
	if !calls[0].OK() || p.Get("channel_id") != "D1" || p.Get("thread_ts") != "1700000010.000001" || !strings.Contains(p.Get("prompts"), `\u003c#C7\u003e`) {
		t.Fatalf("setSuggestedPrompts = %+v, want D1/1700000010.000001 with a prompt about <#C7>", calls[0])
	}
	if got := env.core.Inbound(); len(got) != 0 {
		t.Fatalf("assistant_thread_started reached Submit: %+v", got)
	}

	// The first message titles the thread.
	msg := message("im", "D1", "How do I rotate the API keys?", "1700000011.000001", "1700000010.000001", nil)
	body = slacktest.MustJSON(slacktest.EventCallback("T0FAKE", "Ev2", msg))
	if status, _ := env.postSigned(t, "/slack/events", "application/json", body, env.clock.Now(), nil); status != http.StatusOK {
		t.Fatalf("status %d, want 200", status)
	}
	titles, err := env.srv.WaitCalls("assistant.threads.setTitle", 1, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := titles[0].Params.Get("title"); got != "How do I rotate the API keys?" {
		t.Fatalf("thread title %q, want the first message", got)
	}
	if in := env.core.waitInbound(t, 1); !in[0].IsDM || in[0].Thread != "1700000010.000001" {
		t.Fatalf("message in the assistant thread submitted as %+v, want a DM in thread 1700000010.000001", in[0])
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{"empty", Options{}, []string{"BotToken", "AppToken", "SigningSecret", "Submitter"}},
		{"bot token only", Options{BotToken: "xoxb-1", Submitter: newFakeCore()}, []string{"AppToken"}},
		{"bot token as app token", Options{BotToken: "xoxb-1", AppToken: "xoxb-2", Submitter: newFakeCore()}, []string{"AppToken must be"}},
		{"too many prompts", Options{BotToken: "xoxb-1", SigningSecret: "s", Submitter: newFakeCore(), SuggestedPrompts: make([]SuggestedPrompt, 5)}, []string{"SuggestedPrompts"}},
		{"socket mode", Options{BotToken: "xoxb-1", AppToken: "xapp-1", Submitter: newFakeCore()}, nil},
		{"events api", Options{BotToken: "xoxb-1", SigningSecret: "s", Submitter: newFakeCore()}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("New = %v, want no error", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("New succeeded, want an error naming %v", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
		})
	}
}
