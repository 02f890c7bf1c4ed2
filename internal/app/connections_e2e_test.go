package app_test

// GitHub connections end to end, on both stores: workspace and personal
// accounts connected through start → the fake provider's authorize →
// callback, an agent (scripted model) listing pull requests with the
// account of the conversation it acts in (each workspace's own, the
// speaker's own first), a token refreshed before it expires, the list and
// the disconnect through !connections and the API, and no token in clear
// in the database.

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/githubtest"
	"github.com/switchboardhq/switchboard/internal/oauthtest"
	"github.com/switchboardhq/switchboard/internal/secret"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

const (
	ghClientID     = "Iv1.e2e0000000000001"
	ghClientSecret = "gh-client-secret-e2e-5c2d"
)

type connEnv struct {
	*installEnv
	oauth *oauthtest.Server
	gh    *githubtest.Server
}

func startConnections(t *testing.T, db string) *connEnv {
	t.Helper()
	oauth := oauthtest.New(t, oauthtest.Options{Flavor: oauthtest.GitHub, ClientID: ghClientID, ClientSecret: ghClientSecret})
	gh := githubtest.New(t, oauth)
	script, err := filepath.Abs(filepath.Join("testdata", "connections_e2e.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	e := startInstallWith(t, db, "k1:"+testKey(7), testenv.Logger(t), map[string]string{
		"SWITCHBOARD_MODEL":            "scripted:" + script,
		"GITHUB_CLIENT_ID":             ghClientID,
		"GITHUB_CLIENT_SECRET":         ghClientSecret,
		"SWITCHBOARD_GITHUB_OAUTH_URL": oauth.URL(),
		"SWITCHBOARD_GITHUB_API_URL":   gh.URL(),
	}, openAccess)
	return &connEnv{installEnv: e, oauth: oauth, gh: gh}
}

func teamDM(t slacktest.Team, user, channel, ts, text string) signedEvent {
	ev := map[string]any{
		"type": "message", "channel_type": "im", "user": user, "text": text,
		"ts": ts, "channel": channel, "team": t.ID, "event_ts": ts,
	}
	return signedEvent{body: slacktest.MustJSON(slacktest.EventCallback(t.ID, "Ev"+t.ID+ts, ev)), secret: e2eSecret, signedAt: time.Now()}
}

func teamMentionBy(t slacktest.Team, user, channel, ts, text string) signedEvent {
	ev := map[string]any{
		"type": "app_mention", "user": user, "text": "<@" + t.BotUserID + "> " + text,
		"ts": ts, "channel": channel, "team": t.ID, "event_ts": ts,
	}
	return signedEvent{body: slacktest.MustJSON(slacktest.EventCallback(t.ID, "Ev"+t.ID+ts, ev)), secret: e2eSecret, signedAt: time.Now()}
}

var startLink = regexp.MustCompile(`/connections/github/start\?ticket=[A-Za-z0-9_.%=-]+`)

// command sends a DM to the bot in team and returns the bot's reply.
func (e *connEnv) command(team slacktest.Team, user, channel, ts, text string) string {
	e.tb.Helper()
	bot := func() []slacktest.Message {
		var out []slacktest.Message
		for _, m := range e.slack.Messages(channel) {
			if m.User == team.BotUserID && !m.Deleted {
				out = append(out, m)
			}
		}
		return out
	}
	seen := len(bot())
	e.mustPost(teamDM(team, user, channel, ts, text))
	var reply string
	poll(e.tb, "the bot's answer to "+text, func() (bool, string) {
		if ms := bot(); len(ms) > seen && !ms[seen].Streaming {
			reply = shown(ms[seen])
			return true, ""
		}
		return false, ""
	})
	return reply
}

// connect follows a start link as the person's browser: the start (302 to
// the provider), the provider's authorize page signed in as acct, and the
// callback; it returns the callback's page.
func (e *connEnv) connect(link string, acct oauthtest.Account) string {
	e.tb.Helper()
	path := startLink.FindString(link)
	if path == "" {
		e.tb.Fatalf("no start link in %q", link)
	}
	resp, body := e.get(path)
	if resp.StatusCode != http.StatusFound {
		e.tb.Fatalf("GET %s answered %d %q, want 302 to GitHub's authorize page", path, resp.StatusCode, body)
	}
	loc := resp.Header.Get("Location")
	au, _ := url.Parse(loc)
	if !strings.HasPrefix(loc, e.oauth.URL()+"/login/oauth/authorize?") || au.Query().Get("client_id") != ghClientID ||
		au.Query().Get("redirect_uri") != installPublic+"/connections/github/callback" || !strings.Contains(au.Query().Get("scope"), "repo") {
		e.tb.Fatalf("start redirects to %q: want the provider's authorize page with the client id, the callback and the repo scope", loc)
	}
	e.oauth.SignIn(acct)
	back, err := e.oauth.Authorize(loc)
	if err != nil {
		e.tb.Fatal(err)
	}
	resp, body = e.get(back.Path + "?" + back.RawQuery)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, acct.Login) {
		e.tb.Fatalf("the callback answered %d %q, want the page naming %s", resp.StatusCode, body, acct.Login)
	}
	// The state is single use.
	if resp, _ := e.get(back.Path + "?" + back.RawQuery); resp.StatusCode != http.StatusBadRequest {
		e.tb.Fatalf("a replayed callback answered %d, want 400", resp.StatusCode)
	}
	return body
}

// listedAs waits for the agent's reply in channel naming want, and returns
// the logins the fake GitHub saw for the pull request lists of repo since
// calls[from:].
func (e *connEnv) listedAs(team slacktest.Team, channel, want, repo string, from int) []string {
	e.tb.Helper()
	e.replyIn(team, channel, want)
	var logins []string
	for _, c := range e.gh.Calls()[from:] {
		if c.Path == "/repos/"+repo+"/pulls" {
			logins = append(logins, c.Login)
		}
	}
	return logins
}

func (e *connEnv) api(method, path string) (int, string) {
	e.tb.Helper()
	req, _ := http.NewRequest(method, e.base+path, nil)
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.http.Do(req)
	if err != nil {
		e.tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestConnectionsGitHubE2E(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		dbURL := db(t)
		e := startConnections(t, dbURL)
		e.install(teamA)
		e.install(teamB)
		acmeBot := oauthtest.Account{ID: "9001", Login: "acme-bot"}
		globexBot := oauthtest.Account{ID: "9002", Login: "globex-bot"}
		aliceGH := oauthtest.Account{ID: "9003", Login: "alice-gh"}
		e.gh.AddRepo(&githubtest.Repo{Owner: "acme", Name: "app", Readers: []string{"acme-bot", "alice-gh"},
			Branches: map[string]string{"fix-login": "aaa111"},
			PRs:      []*githubtest.PR{{Number: 1, Title: "Fix the acme login", State: "open", Author: "acme-dev", Head: "fix-login", Base: "main"}}})
		e.gh.AddRepo(&githubtest.Repo{Owner: "globex", Name: "app", Readers: []string{"globex-bot"},
			Branches: map[string]string{"release": "bbb222"},
			PRs:      []*githubtest.PR{{Number: 7, Title: "Globex release 2.0", State: "open", Author: "globex-dev", Head: "release", Base: "main"}}})

		// A start link is given in a DM only.
		e.mustPost(teamMentionBy(teamA, "U0INSTALLER", "C0AAA", "1700000000.000100", "!connections connect github workspace"))
		e.replyIn(teamA, "C0AAA", "direct message only")

		// Each team's owner connects a GitHub account for their workspace.
		link := e.command(teamA, "U0INSTALLER", "D0AOWN", "1700000001.000100", "!connections connect github workspace")
		e.connect(link, acmeBot)
		link = e.command(teamB, "U0INSTALLER", "D0BOWN", "1700000002.000100", "!connections connect github workspace")
		e.connect(link, globexBot)
		// A member may not connect one for the workspace.
		if reply := e.command(teamA, alice, "D0AALI", "1700000003.000100", "!connections connect github workspace"); !strings.Contains(reply, "manage_connections") {
			t.Fatalf("a member asking for a workspace link got %q, want a refusal naming the right it takes", reply)
		}

		// The same agent in two workspaces acts with each one's account.
		calls := len(e.gh.Calls())
		e.mustPost(teamMentionBy(teamA, alice, "C0AAA10", "1700000010.000100", "what is open in acme?"))
		if got := e.listedAs(teamA, "C0AAA10", "Fix the acme login", "acme/app", calls); len(got) != 1 || got[0] != "acme-bot" {
			t.Fatalf("in team A the pull requests were listed as %v, want [acme-bot] (the workspace's account)", got)
		}
		calls = len(e.gh.Calls())
		e.mustPost(teamMentionBy(teamB, alice, "C0BBB", "1700000011.000100", "what is open in globex?"))
		if got := e.listedAs(teamB, "C0BBB", "Globex release 2.0", "globex/app", calls); len(got) != 1 || got[0] != "globex-bot" {
			t.Fatalf("in team B the pull requests were listed as %v, want [globex-bot] (that workspace's account)", got)
		}

		// Alice connects her own account, with tokens that expire in 90s:
		// less than the refresh margin, so it is refreshed before use.
		e.oauth.SetTokenTTL(90 * time.Second)
		link = e.command(teamA, alice, "D0AALI", "1700000020.000100", "!connections connect github")
		e.connect(link, aliceGH)
		alicePerson, err := e.store.PersonFind(context.Background(), &store.PersonFindParams{Identity: store.Identity{Platform: "slack", Workspace: teamA.ID, UserID: alice}})
		if err != nil {
			t.Fatal(err)
		}
		before, err := e.store.ConnectionFind(context.Background(), &store.ConnectionFindParams{Provider: store.ProviderGitHub, Owner: store.PersonOwner(alicePerson.ID)})
		if err != nil || before.Account != "alice-gh" || before.Expiry == nil || before.RefreshToken == "" {
			t.Fatalf("alice's connection: %+v, %v; want alice-gh with an expiry and a refresh token", before, err)
		}
		// The provider's clock passes the token's expiry: only a refreshed
		// token works now.
		e.oauth.Advance(2 * time.Minute)
		calls = len(e.gh.Calls())
		e.mustPost(teamMentionBy(teamA, alice, "C0AAA21", "1700000021.000100", "and now, acme?"))
		if got := e.listedAs(teamA, "C0AAA21", "Fix the acme login", "acme/app", calls); len(got) != 1 || got[0] != "alice-gh" {
			t.Fatalf("alice's own question was answered as %v, want [alice-gh] (her own account before the workspace's)", got)
		}
		if n := e.oauth.Refreshes(); n != 1 {
			t.Fatalf("the provider served %d refreshes, want 1", n)
		}
		after, err := e.store.ConnectionGet(context.Background(), before.ID)
		if err != nil || after.AccessToken == before.AccessToken || after.RefreshToken == before.RefreshToken || !after.Expiry.After(*before.Expiry) {
			t.Fatalf("alice's connection after the refresh: %+v, %v; want new sealed tokens and a later expiry", after, err)
		}
		// Bob, a member without an account of his own, gets the workspace's.
		calls = len(e.gh.Calls())
		e.mustPost(teamMentionBy(teamA, "U0BOB", "C0AAA22", "1700000022.000100", "acme please"))
		if got := e.listedAs(teamA, "C0AAA22", "Fix the acme login", "acme/app", calls); len(got) != 1 || got[0] != "acme-bot" {
			t.Fatalf("bob's question was answered as %v, want [acme-bot]", got)
		}
		e.waitIdle()

		// No token in clear at rest.
		issued := e.oauth.Issued()
		if len(issued) < 5 {
			t.Fatalf("the provider issued %d tokens; want the workspaces', alice's and the refreshed ones", len(issued))
		}
		for _, tok := range issued {
			checkNotAtRest(t, dbURL, tok)
		}

		// !connections lists what a person may see: alice her own only.
		if reply := e.command(teamA, alice, "D0AALI", "1700000030.000100", "!connections"); !strings.Contains(reply, "alice-gh") || strings.Contains(reply, "acme-bot") {
			t.Fatalf("alice's !connections: %q, want her own account and not the workspace's", reply)
		}
		if reply := e.command(teamA, "U0INSTALLER", "D0AOWN", "1700000031.000100", "!connections"); !strings.Contains(reply, "acme-bot") || strings.Contains(reply, "globex-bot") {
			t.Fatalf("team A's owner's !connections: %q, want workspace A's account and not B's", reply)
		}
		// The API (a local caller: the operator) lists all three, without
		// a token.
		status, body := e.api(http.MethodGet, "/api/connections")
		if status != http.StatusOK || strings.Count(body, `"id"`) != 3 || !strings.Contains(body, "globex-bot") {
			t.Fatalf("GET /api/connections: %d %s, want the three connections", status, body)
		}
		for _, tok := range issued {
			if strings.Contains(body, tok) {
				t.Fatalf("GET /api/connections shows a token: %s", body)
			}
		}
		// Alice disconnects hers: revoked at GitHub, deleted, and her next
		// question uses the workspace's account again.
		if reply := e.command(teamA, alice, "D0AALI", "1700000032.000100", "!connections disconnect "+before.ID.String()); !strings.Contains(reply, "Disconnected") {
			t.Fatalf("alice's disconnect: %q", reply)
		}
		if len(e.oauth.Revocations()) != 1 {
			t.Fatalf("revocations at the provider: %v, want alice's grant", e.oauth.Revocations())
		}
		calls = len(e.gh.Calls())
		e.mustPost(teamMentionBy(teamA, alice, "C0AAA33", "1700000033.000100", "acme again"))
		if got := e.listedAs(teamA, "C0AAA33", "Fix the acme login", "acme/app", calls); len(got) != 1 || got[0] != "acme-bot" {
			t.Fatalf("after disconnecting, alice's question was answered as %v, want [acme-bot]", got)
		}
		// The operator disconnects team B's through the API.
		var teamBConn uuid.UUID
		all, err := e.store.ConnectionList(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range all {
			if c.Account == "globex-bot" {
				teamBConn = c.ID
			}
		}
		if status, body := e.api(http.MethodDelete, "/api/connections/"+teamBConn.String()); status != http.StatusOK {
			t.Fatalf("DELETE /api/connections/%s: %d %s", teamBConn, status, body)
		}
		if status, _ := e.api(http.MethodDelete, "/api/connections/"+teamBConn.String()); status != http.StatusNotFound {
			t.Fatalf("a second DELETE answered %d, want 404", status)
		}
		e.waitIdle()

		// rotate-key reseals the connection left (workspace A's) with the
		// two teams' bot tokens, and it still opens to a working token.
		keys, err := secret.ParseKeys("k2:" + testKey(8) + ",k1:" + testKey(7))
		if err != nil {
			t.Fatal(err)
		}
		res, err := app.RotateKey(context.Background(), e.store, keys, time.Now)
		if err != nil || res.Resealed != 3 || len(res.Unopened) != 0 {
			t.Fatalf("RotateKey: %+v, %v; want two bot tokens and one connection resealed", res, err)
		}
		left, err := e.store.ConnectionList(context.Background(), nil)
		if err != nil || len(left) != 1 || secret.Sealed(left[0].AccessToken).KeyID() != "k2" {
			t.Fatalf("connections after the rotation: %+v, %v; want workspace A's sealed under k2", left, err)
		}
		plain, err := keys.Open(secret.Sealed(left[0].AccessToken), store.ConnectionAAD(left[0].Provider, left[0].Owner, "access"))
		if acct, ok := e.oauth.AccountOf(string(plain)); err != nil || !ok || acct.Login != "acme-bot" {
			t.Fatalf("the resealed token opens to %v (%v), want acme-bot's live token", acct, err)
		}
	})
}
