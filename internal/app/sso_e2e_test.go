package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core/auth/sso"
	"github.com/switchboardhq/switchboard/store"
)

const ssoConfig = openAccess + `sso:
  groups_claim: groups
  scopes: [openid, email, profile, groups]
  groups:
    eng-admins: {workspace: T0SSO, role: admin}
    eng: {workspace: T0SSO, role: member}
`

// startSSO starts the service with single sign-on against a provider on
// loopback; the operator token is "op".
func startSSO(t *testing.T, db string, config string) (*slackEnv, *testOP, string) {
	t.Helper()
	addr := freeAddr(t)
	public := "http://" + addr
	o, issuer := startOP(t, public)
	e := startSlack(t, db, envOptions{apiToken: "op", addr: addr, config: config, env: map[string]string{
		"SWITCHBOARD_OIDC_ISSUER": issuer, "SWITCHBOARD_OIDC_CLIENT_ID": opClientID, "SWITCHBOARD_OIDC_CLIENT_SECRET": opClientSecret,
		"SWITCHBOARD_PUBLIC_URL": public,
	}})
	return e, o, issuer
}

// getJSON GETs path with b's cookies (and bearer, when not empty) and
// decodes the answer into out; it returns the status.
func getJSON(t *testing.T, c *http.Client, base, path, bearer string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+path, nil)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("decoding %s: %v", path, err)
		}
	}
	return resp.StatusCode
}

// postJSON POSTs an empty JSON body to path, with the CSRF token of the
// cookie session (csrf) or a bearer.
func postJSON(t *testing.T, c *http.Client, base, path, csrf, bearer string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	if csrf != "" {
		req.Header.Set(web.CSRFHeader, csrf)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("decoding %s: %v", path, err)
		}
	}
	return resp.StatusCode
}

// roleIn is the role a session's person has in the team workspace named
// name ("" when none).
func roleIn(s *web.SessionJSON, name string) string {
	if s.SessionPerson == nil {
		return ""
	}
	for _, w := range s.Workspaces {
		if w.Name == name {
			return string(w.Role)
		}
	}
	return ""
}

// TestSSOSignInLandsInTheConsoleWithItsGroupsRoles: through the real
// flow (the service's /auth/oidc/login, a real OpenID provider's login
// page, the callback) a person lands in the console, made just in time,
// with the role their group maps to in a workspace made and bound for the
// Slack team; a changed group changes the role at the next sign-in, a
// removed one takes it back; an admin sees and ends a member's session,
// which is refused at its next request; sign-out goes on to the
// provider's end-session page (RP-initiated logout).
func TestSSOSignInLandsInTheConsoleWithItsGroupsRoles(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e, o, issuer := startSSO(t, db(t), ssoConfig)
		o.addUser("u-alice", "alice", "alice@example.test", "eng-admins")
		o.addUser("u-bob", "bob", "bob@example.test", "eng")

		alice := newBrowser(t)
		resp := ssoSignIn(t, alice, e.base, "alice")
		if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/" || !strings.HasPrefix(resp.Request.URL.String(), e.base) {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("alice's sign-in ended at %s (%d: %.200s); want the console at %s/", resp.Request.URL, resp.StatusCode, b, e.base)
		}
		var s web.SessionJSON
		if code := getJSON(t, alice.Client, e.base, "/api/session", "", &s); code != http.StatusOK || s.Kind != web.PrincipalPerson {
			t.Fatalf("alice's session = %d %q; want 200 and a person", code, s.Kind)
		}
		if got := roleIn(&s, "T0SSO"); got != "admin" {
			t.Fatalf("alice's role in T0SSO = %q (workspaces %+v); want admin from group eng-admins", got, s.Workspaces)
		}
		alicePerson := s.PersonID
		p, err := e.store.PersonFind(context.Background(), &store.PersonFindParams{Identity: store.Identity{Platform: sso.PlatformOIDC, Workspace: issuer, UserID: "u-alice"}})
		if err != nil || p.ID != alicePerson {
			t.Fatalf("the person of (issuer, u-alice) = %v, %v; want alice's session's person %s", p, err, alicePerson)
		}
		ws, err := e.app.Service.Workspaces().Named(context.Background(), "T0SSO")
		if err != nil {
			t.Fatalf("the workspace of Slack team T0SSO: %v; want one made and bound at the sign-in", err)
		}

		bob := newBrowser(t)
		if resp := ssoSignIn(t, bob, e.base, "bob"); resp.Request.URL.Path != "/" {
			t.Fatalf("bob's sign-in ended at %s; want the console", resp.Request.URL)
		}
		var bs web.SessionJSON
		getJSON(t, bob.Client, e.base, "/api/session", "", &bs)
		if got := roleIn(&bs, "T0SSO"); got != "member" {
			t.Fatalf("bob's role in T0SSO = %q; want member from group eng", got)
		}

		// The admin sees the member's session and ends it; the member may
		// not list the workspace's.
		var list web.SessionList
		if code := getJSON(t, alice.Client, e.base, "/api/sessions?workspace="+ws.String(), "", &list); code != http.StatusOK {
			t.Fatalf("alice listing T0SSO's sessions = %d; want 200", code)
		}
		var bobSession *web.SessionItemJSON
		for i, x := range list.Sessions {
			if x.PersonID != nil && *x.PersonID == bs.PersonID {
				bobSession = &list.Sessions[i]
			}
		}
		if bobSession == nil || bobSession.Method != "oidc" || bobSession.LastUsedAt == nil || bobSession.LastIP != "127.0.0.1" || !strings.HasPrefix(bobSession.LastUserAgent, "Go-http-client") {
			t.Fatalf("T0SSO's sessions %+v; want bob's oidc session with its last use from 127.0.0.1 by Go-http-client", list.Sessions)
		}
		if code := getJSON(t, bob.Client, e.base, "/api/sessions?workspace="+ws.String(), "", nil); code != http.StatusForbidden {
			t.Errorf("bob (a member) listing T0SSO's sessions = %d; want 403", code)
		}
		if code := postJSON(t, alice.Client, e.base, "/api/sessions/"+bobSession.ID+"/end", s.CSRF, "", nil); code != http.StatusOK {
			t.Fatalf("alice ending bob's session = %d; want 200", code)
		}
		if code := getJSON(t, bob.Client, e.base, "/api/session", "", nil); code != http.StatusUnauthorized {
			t.Fatalf("bob's ended session at its next request = %d; want 401", code)
		}

		// A changed group changes the role at the next sign-in.
		o.setGroups("u-alice", "eng")
		alice2 := newBrowser(t)
		ssoSignIn(t, alice2, e.base, "alice")
		var s2 web.SessionJSON
		getJSON(t, alice2.Client, e.base, "/api/session", "", &s2)
		if s2.PersonID != alicePerson || roleIn(&s2, "T0SSO") != "member" {
			t.Fatalf("after eng-admins -> eng: person %s role %q; want the same person %s as member", s2.PersonID, roleIn(&s2, "T0SSO"), alicePerson)
		}
		// A removed group takes the role back.
		o.setGroups("u-alice")
		alice3 := newBrowser(t)
		ssoSignIn(t, alice3, e.base, "alice")
		var s3 web.SessionJSON
		getJSON(t, alice3.Client, e.base, "/api/session", "", &s3)
		if got := roleIn(&s3, "T0SSO"); got != "" {
			t.Fatalf("after leaving every group: alice's role in T0SSO = %q; want none", got)
		}

		// The audit holds the sign-ins and the three role changes of alice.
		rows, err := e.store.AuditList(context.Background(), &store.AuditListParams{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var changes []string
		signIns, ends := 0, 0
		for _, r := range rows {
			switch r.Action {
			case sso.AuditRoleChange:
				var d struct {
					Person     uuid.UUID `json:"person"`
					From, To   string
					Workspace_ string `json:"workspace"`
				}
				_ = json.Unmarshal(r.Detail, &d)
				if d.Person == alicePerson {
					changes = append(changes, d.From+">"+d.To)
				}
			case sso.AuditSignIn:
				signIns++
			case sso.AuditSessionEnd:
				ends++
			}
		}
		slices.Reverse(changes) // the list is newest first
		if want := []string{">admin", "admin>member", "member>"}; !slices.Equal(changes, want) {
			t.Errorf("alice's role changes in the audit = %v; want %v", changes, want)
		}
		if signIns != 4 || ends != 1 {
			t.Errorf("audit: %d sign-ins, %d ended sessions; want 4 and 1", signIns, ends)
		}

		// Signing out ends the session here and at the provider.
		var out web.SignedInJSON
		if code := postJSON(t, alice3.Client, e.base, "/auth/logout", s3.CSRF, "", &out); code != http.StatusOK {
			t.Fatalf("signing out = %d; want 200", code)
		}
		lu, err := url.Parse(out.LogoutURL)
		if err != nil || !strings.HasPrefix(out.LogoutURL, issuer) || lu.Query().Get("id_token_hint") == "" {
			t.Fatalf("logout_url = %q; want the provider's end_session_endpoint with id_token_hint", out.LogoutURL)
		}
		resp, err = alice3.Get(out.LogoutURL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Request.URL.String() != e.base+"/" {
			t.Errorf("the provider's logout ended at %s; want back at %s/", resp.Request.URL, e.base)
		}
		if code := getJSON(t, alice3.Client, e.base, "/api/session", "", nil); code != http.StatusUnauthorized {
			t.Errorf("the signed-out session = %d; want 401", code)
		}

		// Another subject with the same verified email is the same person.
		o.addUser("u-alice-new", "alice.new", "Alice@Example.test")
		alice4 := newBrowser(t)
		ssoSignIn(t, alice4, e.base, "alice.new")
		var s4 web.SessionJSON
		if code := getJSON(t, alice4.Client, e.base, "/api/session", "", &s4); code != http.StatusOK || s4.PersonID != alicePerson {
			t.Errorf("a new subject with alice's verified email signed in as %s (%d); want alice, %s", s4.PersonID, code, alicePerson)
		}
	})
}

// TestSSORefusesBadTokensAndCreatesNothing: an ID token for another
// audience, an expired one, one with another nonce, one signed by a key
// the provider does not publish, and a replayed
// callback are each refused with a page saying why, and none of them
// makes a person or a session.
func TestSSORefusesBadTokensAndCreatesNothing(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e, o, issuer := startSSO(t, db(t), ssoConfig)
		o.addUser("u-carol", "carol", "carol@example.test", "eng-admins")
		ctx := context.Background()
		nothing := func(t *testing.T, wantSessions int) {
			t.Helper()
			var list web.SessionList
			if code := getJSON(t, e.http, e.base, "/api/sessions", "op", &list); code != http.StatusOK {
				t.Fatalf("listing every session = %d", code)
			}
			if len(list.Sessions) != wantSessions {
				t.Errorf("sessions = %d; want %d", len(list.Sessions), wantSessions)
			}
			_, err := e.store.PersonFind(ctx, &store.PersonFindParams{Identity: store.Identity{Platform: sso.PlatformOIDC, Workspace: issuer, UserID: "u-carol"}})
			if wantSessions == 0 && !errors.Is(err, store.ErrNotFound) {
				t.Errorf("the person of u-carol: %v; want none made", err)
			}
			if _, err := e.app.Service.Workspaces().Named(ctx, "T0SSO"); wantSessions == 0 && !errors.Is(err, store.ErrNotFound) {
				t.Errorf("workspace T0SSO: %v; want none made", err)
			}
		}
		for _, tc := range []struct {
			name string
			bad  opTamper
			want string
		}{
			{"wrong audience", opTamper{audience: []string{"another-app"}}, "audience"},
			{"expired", opTamper{lifetime: -time.Hour}, "expired"},
			{"bad nonce", opTamper{nonce: "not-the-sign-ins"}, "nonce"},
			{"bad signature", opTamper{foreign: true}, "signature"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				o.tamper(tc.bad)
				defer o.tamper(opTamper{})
				resp := ssoSignIn(t, newBrowser(t), e.base, "carol")
				body, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), tc.want) {
					t.Fatalf("a token with %s = %d %.300s; want 401 naming %q", tc.name, resp.StatusCode, body, tc.want)
				}
				nothing(t, 0)
			})
		}
		t.Run("replayed state", func(t *testing.T) {
			b := newBrowser(t)
			if resp := ssoSignIn(t, b, e.base, "carol"); resp.Request.URL.Path != "/" {
				t.Fatalf("the honest sign-in ended at %s", resp.Request.URL)
			}
			nothing(t, 1)
			cb := b.lastCallback()
			if cb == nil {
				t.Fatal("no callback seen")
			}
			// Replayed with the browser binding (the state cookie) too: the
			// server-side state is spent.
			req, _ := http.NewRequest(http.MethodGet, cb.String(), nil)
			req.AddCookie(&http.Cookie{Name: web.OIDCStateCookie, Value: cb.Query().Get("state")})
			resp, err := newBrowser(t).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "already used") {
				t.Fatalf("the callback replayed = %d %.300s; want 401 saying it was already used", resp.StatusCode, body)
			}
			nothing(t, 1)
		})
		t.Run("callback in another browser", func(t *testing.T) {
			// The callback URL of a sign-in started elsewhere (an attacker's,
			// sent to a victim: login CSRF) signs nobody in.
			b := newBrowser(t)
			b.CheckRedirect = func(req *http.Request, via []*http.Request) error {
				if strings.HasSuffix(req.URL.Path, "/auth/oidc/callback") {
					b.callbacks = append(b.callbacks, req.URL)
					return http.ErrUseLastResponse
				}
				return nil
			}
			ssoSignIn(t, b, e.base, "carol")
			cb := b.lastCallback()
			if cb == nil {
				t.Fatal("no callback seen")
			}
			resp, err := newBrowser(t).Get(cb.String())
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "not started in this browser") {
				t.Fatalf("a callback from another browser = %d %.300s; want 401 saying it was not started here", resp.StatusCode, body)
			}
			nothing(t, 1)
		})
	})
}
