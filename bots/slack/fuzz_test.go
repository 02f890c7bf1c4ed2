package slack

import (
	"log/slog"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// Whatever arrives at the Events API and interactivity endpoints, signed or
// not, the adapter answers without panicking and never with a server error
// (the fake core does not fail).
func FuzzEvents(f *testing.F) {
	f.Add([]byte(`{"type":"url_verification","challenge":"c"}`), "v0=00", "1700000000")
	f.Add([]byte(`{"type":"event_callback","team_id":"T1","event_id":"Ev1","event":{"type":"app_mention","user":"U1","text":"<@UBOT> hi <!channel>","ts":"1700000000.000100","channel":"C1"}}`), "", "")
	f.Add([]byte(`{"type":"event_callback","event_id":"Ev2","event":{"type":"message","channel_type":"im","user":"U1","text":"\u0000\ud800","ts":"x","thread_ts":"1.2","channel":"D1"}}`), "v0=zz", "-1")
	f.Add([]byte(`{"type":"event_callback","event":{"type":"assistant_thread_started","assistant_thread":{"user_id":"U1","channel_id":"D1","thread_ts":"1.2"}}}`), "v0=", "99999999999999999999")
	f.Add([]byte(`payload=%7B%22type%22%3A%22block_actions%22%2C%22actions%22%3A%5B%7B%22action_id%22%3A%22x%22%7D%5D%7D`), "", "")
	f.Add([]byte(`{"type":"event_callback","event":"not an object"}`), "", "")
	env := newEnv(f, func(o *Options) { o.Logger = slog.New(slog.DiscardHandler) })
	f.Fuzz(func(t *testing.T, body []byte, sig, ts string) {
		h := http.Header{}
		h.Set("X-Slack-Signature", sig)
		h.Set("X-Slack-Request-Timestamp", ts)
		if verify(testSecret, h, body, env.clock.Now()) == nil {
			t.Fatalf("verify accepted a made-up signature %q at %q", sig, ts)
		}
		for _, path := range []string{"/slack/events", "/slack/interactivity"} {
			ct := "application/json"
			if path == "/slack/interactivity" {
				ct = "application/x-www-form-urlencoded"
				if _, err := url.ParseQuery(string(body)); err != nil {
					body = []byte("payload=" + url.QueryEscape(string(body)))
				}
			}
			if code, _ := env.postSigned(t, path, ct, body, env.clock.Now().Add(-time.Second), nil); code >= 500 {
				t.Fatalf("POST %s answered %d for %q", path, code, body)
			}
		}
	})
}
