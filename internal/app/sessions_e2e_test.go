package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots/web"
)

// TestSessionEndedOnOneInstanceRefusedOnTheOther: two instances of the
// service on one database. A console session opened on A and a personal
// token issued on A work on B, which lists them with their last use; each
// ended on A is refused by B at its very next request (no instance keeps
// a session in memory: every request reads the store).
func TestSessionEndedOnOneInstanceRefusedOnTheOther(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		url := db(t)
		a := startSlack(t, url, envOptions{apiToken: "op", instanceID: "instance-a"})
		b := startSlack(t, url, envOptions{apiToken: "op", instanceID: "instance-b"})
		ctx := context.Background()

		// A console session, opened on A with the operator token.
		resp, err := a.http.Post(a.base+"/auth/token", "application/json", strings.NewReader(`{"token":"op"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var cookie string
		for _, c := range resp.Cookies() {
			if c.Name == web.SessionCookie {
				cookie = c.Value
			}
		}
		if resp.StatusCode != http.StatusOK || cookie == "" {
			t.Fatalf("signing in on A = %d; want 200 and a session", resp.StatusCode)
		}
		withCookie := func(base string) int {
			req, _ := http.NewRequest(http.MethodGet, base+"/api/session", nil)
			req.Header.Set("Cookie", web.SessionCookie+"="+cookie)
			req.Header.Set("User-Agent", "console-test/1")
			resp, err := b.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		if code := withCookie(b.base); code != http.StatusOK {
			t.Fatalf("the session on B = %d; want 200", code)
		}

		// A personal token, issued on A.
		person, err := a.app.People.Ensure(ctx, "slack", e2eTeam, "U0DANA", "Dana")
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPost, a.base+"/api/tokens", strings.NewReader(`{"person":"`+person.ID.String()+`","label":"laptop"}`))
		req.Header.Set("Authorization", "Bearer op")
		req.Header.Set("Content-Type", "application/json")
		resp, err = a.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var issued web.IssuedKeyJSON
		_ = json.NewDecoder(resp.Body).Decode(&issued)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("issuing a token on A = %d; want 201", resp.StatusCode)
		}
		if code := getJSON(t, b.http, b.base, "/api/auth/whoami", issued.Token, nil); code != http.StatusOK {
			t.Fatalf("the token on B = %d; want 200", code)
		}

		// B lists both, with their last use; the person sees their token.
		var all web.SessionList
		if code := getJSON(t, b.http, b.base, "/api/sessions", "op", &all); code != http.StatusOK {
			t.Fatalf("listing on B = %d", code)
		}
		var console, token *web.SessionItemJSON
		for i, s := range all.Sessions {
			switch {
			case s.Kind == "console" && s.PersonID == nil:
				console = &all.Sessions[i]
			case s.Kind == "token" && s.ID == issued.ID:
				token = &all.Sessions[i]
			}
		}
		if console == nil || token == nil {
			t.Fatalf("sessions on B %+v; want the operator's console session and dana's token", all.Sessions)
		}
		if console.Method != "token" || console.LastUserAgent != "console-test/1" || console.LastIP != "127.0.0.1" {
			t.Errorf("the console session %+v; want opened with the token, last used by console-test/1 from 127.0.0.1", *console)
		}
		if token.LastUsedAt == nil || token.LastIP != "127.0.0.1" || token.Label != "laptop" || token.PersonID == nil || *token.PersonID != person.ID {
			t.Errorf("the token %+v; want dana's laptop token, last used from 127.0.0.1", *token)
		}
		var mine web.SessionList
		getJSON(t, b.http, b.base, "/api/sessions", issued.Token, &mine)
		if len(mine.Sessions) != 1 || mine.Sessions[0].ID != issued.ID || !mine.Sessions[0].Current {
			t.Errorf("dana's own list %+v; want her one token, marked current", mine.Sessions)
		}
		other := uuid.New()
		if code := getJSON(t, b.http, b.base, "/api/sessions?person="+other.String(), issued.Token, nil); code != http.StatusForbidden {
			t.Errorf("dana listing another person's sessions = %d; want 403", code)
		}

		// Ended on A, refused on B at the next request.
		for _, id := range []string{console.ID, token.ID} {
			if code := postJSON(t, a.http, a.base, "/api/sessions/"+id+"/end", "", "op", nil); code != http.StatusOK {
				t.Fatalf("ending %s on A = %d; want 200", id, code)
			}
		}
		if code := withCookie(b.base); code != http.StatusUnauthorized {
			t.Errorf("the ended console session on B = %d; want 401", code)
		}
		if code := getJSON(t, b.http, b.base, "/api/auth/whoami", issued.Token, nil); code != http.StatusUnauthorized {
			t.Errorf("the ended token on B = %d; want 401", code)
		}
		if code := postJSON(t, a.http, a.base, "/api/sessions/"+uuid.NewString()+"/end", "", "op", nil); code != http.StatusNotFound {
			t.Errorf("ending an unknown session = %d; want 404", code)
		}
	})
}

// TestSSORequiredRefusesTheLinkAndTheToken: with sso.require the one-time
// link and the operator token no longer open the console, and a session
// they opened before is refused, each with a message naming single
// sign-on; the token still works as a bearer for the API.
func TestSSORequiredRefusesTheLinkAndTheToken(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		url := db(t)
		before := startSlack(t, url, envOptions{apiToken: "op", instanceID: "before"})
		resp, err := before.http.Post(before.base+"/auth/token", "application/json", strings.NewReader(`{"token":"op"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var old string
		for _, c := range resp.Cookies() {
			if c.Name == web.SessionCookie {
				old = c.Value
			}
		}
		// The first instance stops before the next starts: its workers
		// would otherwise take the next one's work and answer on its own
		// fake Slack.
		stopCtx, cancel := context.WithTimeout(context.Background(), waitLong)
		defer cancel()
		if err := before.app.Stop(stopCtx); err != nil {
			t.Fatal(err)
		}
		e, _, _ := startSSO(t, url, ssoConfig+"  require: true\n")
		resp, err = e.http.Post(e.base+"/auth/token", "application/json", strings.NewReader(`{"token":"op"}`))
		if err != nil {
			t.Fatal(err)
		}
		var msg struct {
			Error string `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&msg)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(msg.Error, "single sign-on") {
			t.Errorf("the operator token at /auth/token with sso.require = %d %q; want 403 naming single sign-on", resp.StatusCode, msg.Error)
		}
		e.mustPost(newEvent("EvLoginReq", directMessage("D0ALICE", "1700000800.000001", alice, "!login")))
		reply := shown(e.waitReply("D0ALICE", "/login?t="))
		if code, cookie := spendLoginLink(t, e.http, e.base, reply); code != http.StatusForbidden || cookie != "" {
			t.Errorf("a one-time link with sso.require = %d (cookie %q); want 403 and no session", code, cookie)
		}
		req, _ := http.NewRequest(http.MethodGet, e.base+"/api/session", nil)
		req.Header.Set("Cookie", web.SessionCookie+"="+old)
		resp, err = e.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a session the operator token opened before sso.require = %d; want 401", resp.StatusCode)
		}
		if code := getJSON(t, e.http, e.base, "/api/session", "op", nil); code != http.StatusOK {
			t.Errorf("the operator token as a bearer = %d; want 200 (sso.require closes the console, not the API)", code)
		}
	})
}
