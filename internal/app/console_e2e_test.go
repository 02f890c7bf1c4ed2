package app_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/bots/web"
)

var consoleLinkRE = regexp.MustCompile(`https?://[^\s>|]+/login\?t=([A-Za-z0-9_-]+)`)

// spendLoginLink posts a link's secret to POST /auth/link and returns the
// status and, on success, the session cookie.
func spendLoginLink(t *testing.T, client *http.Client, base, reply string) (int, string) {
	t.Helper()
	m := consoleLinkRE.FindStringSubmatch(reply)
	if m == nil {
		t.Fatalf("no sign-in link in %q", reply)
	}
	body, _ := json.Marshal(map[string]string{"token": m[1]})
	resp, err := client.Post(base+"/auth/link", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == web.SessionCookie {
			return resp.StatusCode, c.Value
		}
	}
	return resp.StatusCode, ""
}

// sessionKind reads GET /api/session with a session cookie.
func sessionKind(t *testing.T, client *http.Client, base, cookie string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/session", nil)
	req.Header.Set("Cookie", web.SessionCookie+"="+cookie)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s struct {
		Kind string `json:"kind"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&s)
	return s.Kind
}

// TestLoginLinkFromEveryPlatform: `!login` in a Slack DM and Discord's
// /login (answered only to the person) send a one-time link to the console
// of the running service; spent once, it signs that person in, and a
// second use is refused. Over the real wiring of serve.
func TestLoginLinkFromEveryPlatform(t *testing.T) {
	t.Parallel()
	t.Run("slack", func(t *testing.T) {
		eachStore(t, func(t *testing.T, db databaseFunc) {
			e := startSlack(t, db(t), envOptions{apiToken: "op"})
			e.mustPost(newEvent("EvLogin", directMessage("D0ALICE", "1700000700.000001", alice, "!login")))
			reply := shown(e.waitReply("D0ALICE", "/login?t="))
			if !strings.HasPrefix(consoleLinkRE.FindString(reply), "http://localhost:") {
				t.Errorf("link in %q; want it under http://localhost:PORT without SWITCHBOARD_PUBLIC_URL", reply)
			}
			code, cookie := spendLoginLink(t, e.http, e.base, reply)
			if code != http.StatusOK || cookie == "" {
				t.Fatalf("spending the link = %d (cookie %q); want 200 and a session", code, cookie)
			}
			if k := sessionKind(t, e.http, e.base, cookie); k != "person" {
				t.Errorf("the session is a %q; want the person", k)
			}
			if code, _ := spendLoginLink(t, e.http, e.base, reply); code != http.StatusUnauthorized {
				t.Errorf("a second use of the link = %d; want 401", code)
			}
		})
	})
	discordEachStore(t, func(t *testing.T, db string) {
		e := discordStart(t, db, 0)
		const channel = "3000000000000000009"
		in := e.fake.SlashCommand(channel, "login", map[string]string{}, discordAlice)
		var reply string
		e.fake.Wait(t, "the /login answer", func() bool {
			m := e.fake.Message(e.fake.Interaction(in.ID).OriginalID)
			if m == nil || !m.Ephemeral() || !strings.Contains(m.Content, "/login?t=") {
				return false
			}
			reply = m.Content
			return true
		})
		code, cookie := spendLoginLink(t, e.http, e.base, reply)
		if code != http.StatusOK || sessionKind(t, e.http, e.base, cookie) != "person" {
			t.Fatalf("spending the /login link = %d; want 200 and a person's session", code)
		}
	})
}
