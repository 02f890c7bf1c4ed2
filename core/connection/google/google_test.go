package google_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/connection"
	"github.com/switchboardhq/switchboard/core/connection/google"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/internal/googletest"
	"github.com/switchboardhq/switchboard/internal/oauthtest"
	"github.com/switchboardhq/switchboard/internal/secret"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

type env struct {
	t      *testing.T
	st     store.Store
	m      *connection.Manager
	reg    *tool.Registry
	oauth  *oauthtest.Server
	api    *googletest.Server
	public string
	bearer map[string]uuid.UUID // personal "tokens" of the start endpoint
}

func setup(t *testing.T, st store.Store) *env {
	oauth := oauthtest.New(t, oauthtest.Options{Flavor: oauthtest.Google, ClientID: "cid.apps.googleusercontent.com", ClientSecret: "gsecret", TokenTTL: time.Hour})
	api := googletest.New(t, oauth)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	keys, err := secret.ParseKeys("k1:" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{5}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, st: st, oauth: oauth, api: api, public: srv.URL, bearer: map[string]uuid.UUID{}}
	e.m, err = connection.New(connection.Options{
		Store: st, Keys: keys, PublicURL: srv.URL, StateKey: []byte("0123456789abcdef0123456789abcdef"),
		Providers: []*connection.Provider{connection.Google(connection.ProviderOptions{
			ClientID: "cid.apps.googleusercontent.com", ClientSecret: "gsecret", OAuthURL: oauth.URL(), APIURL: api.URL(),
		})},
		Claim: func(ctx context.Context, nonce string, now time.Time) (bool, error) {
			return st.InboundRecord(ctx, &store.InboundRecordParams{Platform: "test_state", EventID: nonce, Now: now})
		},
		AuthenticateFunc: func(r *http.Request) (connection.Viewer, error) {
			tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if id, ok := e.bearer[tok]; ok {
				return connection.Viewer{PersonID: id}, nil
			}
			return connection.Viewer{}, errors.New("unknown token")
		},
		Logger: testenv.Logger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	e.m.Routes(mux)
	e.reg = tool.NewRegistry()
	if err := google.Register(e.reg, e.m); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) person(name string) uuid.UUID {
	e.t.Helper()
	p, err := e.st.PersonCreate(context.Background(), &store.PersonCreateParams{Identity: store.Identity{Platform: "slack", Workspace: "T1", UserID: name}, DisplayName: name})
	if err != nil {
		e.t.Fatal(err)
	}
	return p.ID
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// follow runs a start request (a link, or the start URL with a bearer
// token) through the provider signed in as acct and the callback.
func (e *env) follow(req *http.Request, acct oauthtest.Account) (int, string) {
	e.t.Helper()
	resp, err := noRedirect.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return resp.StatusCode, ""
	}
	e.oauth.SignIn(acct)
	back, err := e.oauth.Authorize(resp.Header.Get("Location"))
	if err != nil {
		e.t.Fatal(err)
	}
	resp, err = noRedirect.Get(back.String())
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

func (e *env) call(name string, req *tool.Request, args string) tool.Result {
	e.t.Helper()
	tl, ok := e.reg.Get(name)
	if !ok {
		e.t.Fatalf("tool %s is not registered", name)
	}
	return tl.Call(context.Background(), req, json.RawMessage(args))
}

func TestGoogleToolsActAsTheResolvedAccount(t *testing.T) {
	testenv.Each(t, func(t *testing.T, open func(tb testing.TB) store.Store) {
		e := setup(t, open(t))
		ctx := context.Background()
		ana, ops := e.person("U0ANA"), e.person("U0OPS")
		team, err := e.st.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: "Team", Kind: store.WorkspaceTeam, OwnerPersonID: ops})
		if err != nil {
			t.Fatal(err)
		}
		e.api.AddAccount(&googletest.Account{Email: "ana@example.com", Messages: []googletest.Message{
			{ID: "m1", ThreadID: "t1", From: "Bo <bo@example.com>", To: "ana@example.com", Subject: "Quarterly numbers", Date: "Mon, 30 Nov 2026 09:00:00 +0000", Text: "Revenue is up 12%."},
		}})
		e.api.AddAccount(&googletest.Account{Email: "ops@team.example", Files: []googletest.File{
			{ID: "f1", Name: "Runbook", MimeType: "application/vnd.google-apps.document", Content: "Restart the worker first."},
		}, Events: []googletest.Event{{ID: "e1", Summary: "Standup", Start: "2026-12-02T09:00:00Z", End: "2026-12-02T09:15:00Z"}}})

		// Nothing connected: the error says how to connect, with no link.
		res := e.call("gmail__search", &tool.Request{Speaker: &ana, WorkspaceID: &team.ID}, `{"query":"quarterly"}`)
		if !res.IsError || !strings.Contains(string(res.Output), "!connections connect google") || strings.Contains(string(res.Output), "ticket=") {
			t.Fatalf("a call with nothing connected: %s; want an error naming the command, without a start link", res.Output)
		}

		// Ana connects her own account with a personal token.
		e.bearer["ana-token"] = ana
		req, _ := http.NewRequest(http.MethodGet, e.public+"/connections/google/start", nil)
		req.Header.Set("Authorization", "Bearer ana-token")
		if status, page := e.follow(req, oauthtest.Account{ID: "1", Email: "ana@example.com"}); status != http.StatusOK || !strings.Contains(page, "ana@example.com") {
			t.Fatalf("ana's connection: %d %q", status, page)
		}
		// Without a sign-in the start refuses.
		req, _ = http.NewRequest(http.MethodGet, e.public+"/connections/google/start", nil)
		if status, _ := e.follow(req, oauthtest.Account{}); status != http.StatusUnauthorized {
			t.Fatalf("an anonymous start answered %d, want 401", status)
		}
		// A member may not connect the workspace's; its owner may.
		e.bearer["ana-token"] = ana
		if _, err := e.st.WorkspaceMemberPut(ctx, &store.WorkspaceMemberPutParams{WorkspaceID: team.ID, PersonID: ana, Role: store.RoleMember}); err != nil {
			t.Fatal(err)
		}
		req, _ = http.NewRequest(http.MethodGet, e.public+"/connections/google/start?scope=workspace&workspace="+team.ID.String(), nil)
		req.Header.Set("Authorization", "Bearer ana-token")
		if status, _ := e.follow(req, oauthtest.Account{}); status != http.StatusForbidden {
			t.Fatalf("a member starting the workspace's connection got %d, want 403", status)
		}
		link, err := e.m.StartLink(ctx, store.ProviderGoogle, ops, &team.ID)
		if err != nil {
			t.Fatal(err)
		}
		req, _ = http.NewRequest(http.MethodGet, link, nil)
		if status, page := e.follow(req, oauthtest.Account{ID: "2", Email: "ops@team.example"}); status != http.StatusOK || !strings.Contains(page, "workspace") {
			t.Fatalf("the owner's workspace connection: %d %q", status, page)
		}
		// A start link works once.
		req, _ = http.NewRequest(http.MethodGet, link, nil)
		if status, _ := e.follow(req, oauthtest.Account{}); status != http.StatusBadRequest {
			t.Fatalf("a start link used twice answered %d, want 400", status)
		}

		// Ana speaking: her own mailbox.
		anaReq := &tool.Request{Speaker: &ana, WorkspaceID: &team.ID}
		res = e.call("gmail__search", anaReq, `{"query":"quarterly"}`)
		var found google.SearchOut
		if res.IsError || json.Unmarshal(res.Output, &found) != nil || len(found.Messages) != 1 || found.Messages[0].Subject != "Quarterly numbers" {
			t.Fatalf("gmail__search as ana: %s", res.Output)
		}
		res = e.call("gmail__read", anaReq, `{"id":"m1"}`)
		var read google.ReadOut
		if res.IsError || json.Unmarshal(res.Output, &read) != nil || read.Text != "Revenue is up 12%." || !strings.Contains(read.From, "bo@example.com") {
			t.Fatalf("gmail__read as ana: %s", res.Output)
		}
		res = e.call("gmail__send", anaReq, `{"to":["bo@example.com"],"subject":"Re: numbers","body":"Thanks!"}`)
		if sent := e.api.Account("ana@example.com").Sent; res.IsError || len(sent) != 1 || !strings.Contains(sent[0], "To: bo@example.com") || !strings.Contains(sent[0], "Thanks!") {
			t.Fatalf("gmail__send as ana: %s; sent %q", res.Output, sent)
		}
		// Nobody speaking (a scheduled run): the workspace's account.
		wsReq := &tool.Request{WorkspaceID: &team.ID}
		res = e.call("drive__read_file", wsReq, `{"id":"f1"}`)
		var file google.ReadFileOut
		if res.IsError || json.Unmarshal(res.Output, &file) != nil || file.Text != "Restart the worker first." {
			t.Fatalf("drive__read_file as the workspace: %s", res.Output)
		}
		res = e.call("calendar__list_events", wsReq, `{"from":"2026-12-01T00:00:00Z"}`)
		var evs google.ListEventsOut
		if res.IsError || json.Unmarshal(res.Output, &evs) != nil || len(evs.Events) != 1 || evs.Events[0].Summary != "Standup" {
			t.Fatalf("calendar__list_events as the workspace: %s", res.Output)
		}
		for _, c := range e.api.Calls() {
			if strings.HasPrefix(c.Path, "/drive/") || strings.HasPrefix(c.Path, "/calendar/") {
				if c.Email != "ops@team.example" {
					t.Fatalf("%s %s acted as %q, want the workspace's account", c.Method, c.Path, c.Email)
				}
			} else if strings.HasPrefix(c.Path, "/gmail/") && c.Email != "ana@example.com" {
				t.Fatalf("%s %s acted as %q, want ana's own", c.Method, c.Path, c.Email)
			}
		}

		// Ana disconnects hers: revoked at Google, then gone; her next call
		// falls back to the workspace's mailbox.
		mine, err := e.m.List(ctx, connection.Viewer{PersonID: ana})
		if err != nil || len(mine) != 1 || mine[0].Account != "ana@example.com" {
			t.Fatalf("ana's connections: %+v, %v; want her own only", mine, err)
		}
		if _, err := e.m.Disconnect(ctx, connection.Viewer{PersonID: ops}, mine[0].ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another person disconnecting ana's: %v, want not found", err)
		}
		if _, err := e.m.Disconnect(ctx, connection.Viewer{PersonID: ana}, mine[0].ID); err != nil {
			t.Fatal(err)
		}
		if len(e.oauth.Revocations()) != 1 {
			t.Fatalf("revocations at Google: %v, want ana's", e.oauth.Revocations())
		}
		res = e.call("gmail__search", anaReq, `{"query":"quarterly"}`)
		if res.IsError || json.Unmarshal(res.Output, &found) != nil || len(found.Messages) != 0 {
			t.Fatalf("after ana disconnected, gmail__search: %s; want the workspace mailbox's (empty) answer", res.Output)
		}
		if _, err := workspace.Check(ctx, e.st, team.ID, ops, workspace.ManageConnections); err != nil {
			t.Fatal(err)
		}
		theirs, err := e.m.List(ctx, connection.Viewer{PersonID: ops})
		if err != nil || len(theirs) != 1 || theirs[0].Owner.WorkspaceID == nil {
			t.Fatalf("the owner's connections: %+v, %v; want the workspace's", theirs, err)
		}
	})
}

func TestGoogleToolsDeclareRisks(t *testing.T) {
	reg := tool.NewRegistry()
	if err := google.Register(reg, &connection.Manager{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		risk     tool.Risk
		readOnly bool
	}{
		"gmail__search": {tool.RiskLow, true}, "gmail__read": {tool.RiskLow, true}, "gmail__create_draft": {tool.RiskMedium, false},
		"gmail__send": {tool.RiskHigh, false}, "calendar__list_events": {tool.RiskLow, true}, "calendar__create_event": {tool.RiskMedium, false},
		"drive__list_files": {tool.RiskLow, true}, "drive__read_file": {tool.RiskLow, true},
	}
	if got := len(reg.List()); got != len(want) {
		t.Fatalf("%d tools registered, want %d", got, len(want))
	}
	for name, w := range want {
		tl, ok := reg.Get(name)
		if !ok {
			t.Errorf("%s is not registered", name)
			continue
		}
		if tl.Risk() != w.risk || tl.ReadOnly() != w.readOnly {
			t.Errorf("%s: risk %v, read-only %v; want risk %v, read-only %v", name, tl.Risk(), tl.ReadOnly(), w.risk, w.readOnly)
		}
	}
}

// TestGoogleTokenRefreshed: an access token close to its expiry is
// refreshed at Google (Google keeps its refresh token) before the call,
// once: the new token serves the next call as well.
func TestGoogleTokenRefreshed(t *testing.T) {
	testenv.Each(t, func(t *testing.T, open func(tb testing.TB) store.Store) {
		e := setup(t, open(t))
		ana := e.person("U0ANA")
		e.api.AddAccount(&googletest.Account{Email: "ana@example.com", Messages: []googletest.Message{
			{ID: "m1", ThreadID: "t1", From: "Bo <bo@example.com>", To: "ana@example.com", Subject: "Quarterly numbers", Date: "Mon, 30 Nov 2026 09:00:00 +0000", Text: "Revenue is up 12%."},
		}})
		// The first token lives 90s: inside the 2 minutes before expiry in
		// which a token is refreshed.
		e.oauth.SetTokenTTL(90 * time.Second)
		e.bearer["ana-token"] = ana
		req, _ := http.NewRequest(http.MethodGet, e.public+"/connections/google/start", nil)
		req.Header.Set("Authorization", "Bearer ana-token")
		if status, page := e.follow(req, oauthtest.Account{ID: "1", Email: "ana@example.com"}); status != http.StatusOK {
			t.Fatalf("ana's connection: %d %q", status, page)
		}
		e.oauth.SetTokenTTL(time.Hour)
		anaReq := &tool.Request{Speaker: &ana}
		for i := range 2 {
			var found google.SearchOut
			if res := e.call("gmail__search", anaReq, `{"query":"quarterly"}`); res.IsError || json.Unmarshal(res.Output, &found) != nil || len(found.Messages) != 1 {
				t.Fatalf("call %d: gmail__search: %s", i+1, res.Output)
			}
			if got := e.oauth.Refreshes(); got != 1 {
				t.Fatalf("after call %d, %d refreshes at Google; want exactly 1 (the first call's)", i+1, got)
			}
		}
		if last := e.api.Calls()[len(e.api.Calls())-1]; last.Email != "ana@example.com" {
			t.Fatalf("the last call acted as %q, want ana with her refreshed token", last.Email)
		}
	})
}
