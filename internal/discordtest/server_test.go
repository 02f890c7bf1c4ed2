package discordtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("internal/poll.runtime_pollWait"),
	)
}

// do sends one REST request to the fake with the bot token.
func do(t *testing.T, s *Server, method, path string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, s.URL+"/api/v9"+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bot "+s.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestRESTLimitsAndRecording(t *testing.T) {
	t.Parallel()
	s := NewServer(t)
	s.AddChannel(discordgo.Channel{ID: "10", GuildID: DefaultGuildID})
	row := func(n int, idLen int) map[string]any {
		var btns []map[string]any
		for i := range n {
			btns = append(btns, map[string]any{"type": 2, "style": 1, "label": "b", "custom_id": strings.Repeat("x", idLen-1) + string(rune('a'+i))})
		}
		return map[string]any{"type": 1, "components": btns}
	}
	tests := []struct {
		name     string
		path     string
		body     map[string]any
		wantCode int
		wantErr  float64
	}{
		{"ok", "/channels/10/messages", map[string]any{"content": "hi"}, 200, 0},
		{"content too long", "/channels/10/messages", map[string]any{"content": strings.Repeat("é", 2001)}, 400, 50035},
		{"empty", "/channels/10/messages", map[string]any{"content": ""}, 400, 50006},
		{"unknown channel", "/channels/99/messages", map[string]any{"content": "hi"}, 404, 10003},
		{"six buttons in a row", "/channels/10/messages", map[string]any{"content": "x", "components": []any{row(6, 5)}}, 400, 50035},
		{"custom id too long", "/channels/10/messages", map[string]any{"content": "x", "components": []any{row(1, 101)}}, 400, 50035},
		{"five rows of five", "/channels/10/messages", map[string]any{"content": "x", "components": []any{row(5, 5), row(5, 6), row(5, 7), row(5, 8), row(5, 9)}}, 200, 0},
	}
	for _, tc := range tests {
		code, body := do(t, s, "POST", tc.path, tc.body)
		if code != tc.wantCode || (tc.wantErr != 0 && body["code"] != tc.wantErr) {
			t.Errorf("%s: HTTP %d %v; want %d with code %v", tc.name, code, body, tc.wantCode, tc.wantErr)
		}
	}
	if n := len(s.CallsTo("POST /channels/{channel}/messages")); n != len(tests) {
		t.Errorf("recorded %d calls; want %d", n, len(tests))
	}

	s.RateLimit("POST /channels/{channel}/messages", 0, false)
	code, body := do(t, s, "POST", "/channels/10/messages", map[string]any{"content": "hi"})
	if code != http.StatusTooManyRequests || body["retry_after"] == nil {
		t.Errorf("injected limit: HTTP %d %v; want 429 with retry_after", code, body)
	}

	req, _ := http.NewRequest("GET", s.URL+"/api/v9/users/@me", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: HTTP %d; want 401", resp.StatusCode)
	}
}

func TestInteractionAnsweredOnce(t *testing.T) {
	t.Parallel()
	s := NewServer(t)
	in, _ := s.SlashCommandInteraction("10", "ask", map[string]string{"prompt": "hi"}, discordgo.User{ID: "5", Username: "u"})
	path := "/interactions/" + in.ID + "/" + in.Token + "/callback"
	if code, body := do(t, s, "POST", path, map[string]any{"type": 5}); code != http.StatusNoContent {
		t.Fatalf("first answer: HTTP %d %v; want 204", code, body)
	}
	if code, body := do(t, s, "POST", path, map[string]any{"type": 5}); code != http.StatusBadRequest || body["code"] != float64(40060) {
		t.Errorf("second answer: HTTP %d %v; want 400 code 40060", code, body)
	}
	if code, _ := do(t, s, "PATCH", "/webhooks/"+AppID+"/"+in.Token+"/messages/@original", map[string]any{"content": "done"}); code != http.StatusOK {
		t.Errorf("editing @original: HTTP %d; want 200", code)
	}
	if m := s.Message(s.Interaction(in.ID).OriginalID); m == nil || m.Content != "done" {
		t.Errorf("original = %+v; want content done", m)
	}
}

// TestGatewayWithDiscordgo drives the gateway with the real client:
// identify, a dispatch, a drop, a dispatch while away, and a resume that
// replays it.
func TestGatewayWithDiscordgo(t *testing.T) {
	t.Parallel()
	s := NewServer(t)
	dg, err := discordgo.New("Bot " + s.Token)
	if err != nil {
		t.Fatal(err)
	}
	dg.Client = &http.Client{Transport: rewrite{s.URL}}
	dg.SyncEvents = true
	got := make(chan string, 10)
	dg.AddHandler(func(_ *discordgo.Session, m *discordgo.MessageCreate) { got <- m.Content })
	if err := dg.Open(); err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer dg.Close()
	if st := s.GatewayStats(); st.Identifies != 1 || !st.Connected {
		t.Fatalf("stats after open = %+v; want one identify, connected", st)
	}
	s.UserMessage("10", discordgo.User{ID: "5"}, "one")
	if c := <-got; c != "one" {
		t.Fatalf("got %q; want one", c)
	}
	s.Drop()
	s.WaitGateway(t, "disconnect", func(st GatewayStats) bool { return !st.Connected })
	s.UserMessage("10", discordgo.User{ID: "5"}, "two")
	s.WaitGateway(t, "resume", func(st GatewayStats) bool { return st.Resumes >= 1 && st.Connected })
	if c := <-got; c != "two" {
		t.Fatalf("after resume got %q; want the missed message two", c)
	}
	// discordgo sends a heartbeat as soon as it connects; closing before it
	// went out makes that write fail and discordgo start an endless
	// reconnect loop, so wait for it.
	s.WaitGateway(t, "the heartbeat after resume", func(st GatewayStats) bool { return st.LiveHeartbeats >= 1 })
}

type rewrite struct{ base string }

func (r rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	r2 := req.Clone(req.Context())
	r2.URL, _ = r2.URL.Parse(r.base + req.URL.Path)
	r2.Host = r2.URL.Host
	return http.DefaultTransport.RoundTrip(r2)
}
