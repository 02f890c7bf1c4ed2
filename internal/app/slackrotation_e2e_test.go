package app_test

// Slack installs that stay valid: rotating tokens renewed before they
// expire by exactly one of two instances sharing one Postgres, with both
// posting on the renewed token; a renewal Slack refuses for good, reported
// and not retried; organisation-wide installs on Enterprise Grid; and
// app_uninstalled / tokens_revoked removing what they must.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/secret"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// slackAdapter is the service's Slack adapter, to post through it
// directly: a post made by one instance, whatever the queue does.
func (e *installEnv) slackAdapter() bots.Adapter {
	e.tb.Helper()
	for _, ad := range e.app.Adapters {
		if ad.Name() == "slack" {
			return ad
		}
	}
	e.tb.Fatal("the service runs no Slack adapter")
	return nil
}

// postAs posts text to channel of team through this instance's adapter and
// returns the token the fake saw on that chat.postMessage, which must have
// succeeded.
func (e *installEnv) postAs(team, channel, text string) string {
	e.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := e.slackAdapter().Post(ctx, bots.Target{Platform: "slack", Workspace: team, Channel: channel}, &bots.Message{Text: text}); err != nil {
		e.tb.Fatalf("posting %q to %s of %s: %v", text, channel, team, err)
	}
	for _, c := range e.slack.Calls("chat.postMessage") {
		if c.Params.Get("channel") == channel && strings.Contains(c.Params.Get("text")+c.Params.Get("blocks"), text) {
			if !c.OK() {
				e.tb.Fatalf("chat.postMessage of %q answered %s", text, c.Error)
			}
			return c.Token
		}
	}
	e.tb.Fatalf("no chat.postMessage of %q in %s", text, channel)
	return ""
}

// replyBy waits for a reply by botUser in channel containing text, and
// returns the tokens of every call made for that channel.
func (e *installEnv) replyBy(botUser, channel, text string) []string {
	e.tb.Helper()
	poll(e.tb, "a reply by "+botUser+" in "+channel, func() (bool, string) {
		for _, m := range e.slack.Messages(channel) {
			if m.User == botUser && !m.Streaming && strings.Contains(shown(m), text) {
				return true, ""
			}
		}
		return false, fmt.Sprint(e.slack.Messages(channel))
	})
	var tokens []string
	for _, c := range e.slack.Calls() {
		if c.Params.Get("channel") == channel {
			tokens = append(tokens, c.Token)
		}
	}
	return tokens
}

func (e *installEnv) apiGet(path string, into any) {
	e.tb.Helper()
	resp, body := e.get(path)
	if resp.StatusCode != http.StatusOK {
		e.tb.Fatalf("GET %s answered %d %s", path, resp.StatusCode, body)
	}
	if err := json.Unmarshal([]byte(body), into); err != nil {
		e.tb.Fatalf("GET %s: %v\n%s", path, err, body)
	}
}

// TestSlackTokenRotationTwoInstances: a workspace installed with token
// rotation on gets tokens that live 18 s (the fake's lifetime, set short);
// SLACK_TOKEN_REFRESH_MARGIN=12s has them renewed 6 s after each is issued.
// Two instances share one Postgres (SQLite runs the same with one): each
// rotation is exactly one refresh at Slack, whichever instance made it,
// and both instances post with the renewed token, directly and as replies
// to events each received. The tokens are sealed at rest.
func TestSlackTokenRotationTwoInstances(t *testing.T) {
	eachStoreInTurn(t, func(t *testing.T, db databaseFunc) {
		url := db(t)
		keys := "k:" + testKey(5)
		srv := slacktest.NewServer(slacktest.Options{})
		t.Cleanup(srv.Close)
		const lifetime = 18 * time.Second
		srv.SetTokenLifetime(lifetime)
		extra := map[string]string{"SLACK_TOKEN_REFRESH_MARGIN": "12s"}
		envs := []*installEnv{startInstallOn(t, url, keys, testenv.Logger(t), extra, "", srv, "first")}
		if strings.HasPrefix(url, "postgres") {
			envs = append(envs, startInstallOn(t, url, keys, testenv.Logger(t), extra, "", srv, "second"))
		}
		team := slacktest.Team{ID: "T0ROT", Name: "Rotating", BotUserID: "U0BOTR", BotID: "B0BOTR", Token: "xoxb-rot-5e1f9a", Rotate: true}
		envs[0].install(team)
		t0 := srv.CurrentToken(team.ID)
		if !strings.HasPrefix(t0, "xoxe.xoxb-") {
			t.Fatalf("the install's token %q is not a rotating one", t0)
		}
		row, err := envs[0].store.SlackInstallationGet(context.Background(), team.ID)
		if err != nil || row.RefreshToken == "" || row.TokenExpiresAt == nil || time.Until(*row.TokenExpiresAt) > lifetime {
			t.Fatalf("the stored install %+v, %v: want a sealed refresh token and the expiry %s out", row, err, lifetime)
		}
		checkNotAtRest(t, url, t0)
		k, err := secret.ParseKeys(keys)
		if err != nil {
			t.Fatal(err)
		}

		round := 0
		bothPost := func(want string) {
			t.Helper()
			round++
			for i, e := range envs {
				ch := fmt.Sprintf("C0R%dI%d", round, i)
				if got := e.postAs(team.ID, ch, fmt.Sprintf("round %d from instance %d", round, i)); got != want {
					t.Fatalf("round %d: instance %d posted with %q, want %q", round, i, got, want)
				}
				// A mention this instance receives is answered (by any
				// instance's worker) with the same token.
				ts := fmt.Sprintf("17000%02d%d.000100", round, i)
				e.mustPost(teamMention(team, ch+"M", ts, fmt.Sprintf("mention %d to %d", round, i)))
				for _, tok := range e.replyBy(team.BotUserID, ch+"M", fmt.Sprintf("mention %d to %d", round, i)) {
					if tok != want {
						t.Fatalf("round %d: the reply to instance %d's mention used %q, want %q", round, i, tok, want)
					}
				}
			}
		}
		bothPost(t0)

		for rotation, prev := 1, t0; rotation <= 2; rotation++ {
			pollFor(t, 30*time.Second, 20*time.Millisecond, fmt.Sprintf("rotation %d", rotation), func() (bool, string) {
				return srv.Refreshes(team.ID) >= rotation, fmt.Sprint(srv.Refreshes(team.ID), " refreshes")
			})
			next := srv.CurrentToken(team.ID)
			if n := srv.Refreshes(team.ID); n != rotation || next == prev {
				t.Fatalf("after rotation %d: %d refreshes at Slack and token %q (was %q); want exactly %d and a new token", rotation, n, next, prev, rotation)
			}
			// The renewal ends when the instance that made it stored the
			// new pair (until then the old token, still valid, is the one
			// in the store); from then on every instance posts with it.
			pollFor(t, 10*time.Second, 10*time.Millisecond, fmt.Sprintf("rotation %d stored", rotation), func() (bool, string) {
				row, err := envs[0].store.SlackInstallationGet(context.Background(), team.ID)
				if err != nil {
					return false, err.Error()
				}
				got, err := k.Open(secret.Sealed(row.BotToken), store.SlackInstallationAAD(team.ID))
				return err == nil && string(got) == next, fmt.Sprint(err)
			})
			bothPost(next)
			prev = next
		}
		var refused []string
		for _, c := range srv.Calls("oauth.v2.access") {
			if c.Params.Get("grant_type") == "refresh_token" && !c.OK() {
				refused = append(refused, c.Error)
			}
		}
		if len(refused) != 0 {
			t.Fatalf("refresh calls refused %v: a refresh token was spent twice", refused)
		}
		row, err = envs[0].store.SlackInstallationGet(context.Background(), team.ID)
		if err != nil || row.RefreshError != "" || row.RefreshStopped {
			t.Fatalf("the install after two rotations: %+v, %v", row, err)
		}
		if got, err := k.Open(secret.Sealed(row.BotToken), store.SlackInstallationAAD(team.ID)); err != nil || string(got) != srv.CurrentToken(team.ID) {
			t.Fatalf("the stored token opens to %q, %v; want Slack's current one", got, err)
		}
	})
}

// TestSlackTokenRenewalRefused: Slack refuses the refresh token for good
// (invalid_refresh_token): the renewal stops, is not tried again however
// often the renewer looks, and /readyz and GET /api/slack/installs say so.
func TestSlackTokenRenewalRefused(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		srv := slacktest.NewServer(slacktest.Options{})
		t.Cleanup(srv.Close)
		srv.SetTokenLifetime(4 * time.Second)
		e := startInstallOn(t, db(t), "k:"+testKey(6), testenv.Logger(t), map[string]string{"SLACK_TOKEN_REFRESH_MARGIN": "3s"}, "", srv, "")
		team := slacktest.Team{ID: "T0REF", Name: "Refused", BotUserID: "U0BOTX", BotID: "B0BOTX", Token: "xoxb-ref-77aa", Rotate: true}
		// Every refresh is refused; the code exchange is not. (Set after
		// the install, a slow install's first renewal, due 1 s after it,
		// could pass before the fault.)
		srv.Fail("oauth.v2.access", slacktest.Fault{Error: "invalid_refresh_token", Always: true, Params: map[string]string{"grant_type": "refresh_token"}})
		e.install(team)
		refreshCalls := func() int {
			n := 0
			for _, c := range srv.Calls("oauth.v2.access") {
				if c.Params.Get("grant_type") == "refresh_token" {
					n++
				}
			}
			return n
		}
		pollFor(t, 20*time.Second, 20*time.Millisecond, "the renewal to be refused and stopped", func() (bool, string) {
			row, err := e.store.SlackInstallationGet(context.Background(), team.ID)
			return err == nil && row.RefreshStopped, fmt.Sprint(row, err)
		})
		seen := refreshCalls()
		// The renewer looks every 375 ms (an eighth of the margin): 2 s is
		// five looks at a token still due.
		time.Sleep(2 * time.Second)
		if n := refreshCalls(); n != 1 || seen != 1 {
			t.Fatalf("%d refresh calls (%d when it stopped), want exactly 1: a refused renewal is not retried", n, seen)
		}
		resp, body := e.get("/readyz")
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, "token renewal of Refused stopped (T0REF)") || !strings.Contains(body, "invalid_refresh_token") {
			t.Fatalf("/readyz answered %d %q; want ready, naming the stopped renewal", resp.StatusCode, body)
		}
		var list core.SlackInstallList
		e.apiGet("/api/slack/installs", &list)
		if len(list.Installs) != 1 || list.Installs[0].Renewal != core.RenewalStopped || !strings.Contains(list.Installs[0].RenewalError, "invalid_refresh_token") {
			t.Fatalf("GET /api/slack/installs = %+v; want the install with its renewal stopped", list)
		}
	})
}

// TestSlackOrgWideInstall: one organisation-wide install on Enterprise
// Grid answers events from two teams of the organisation with its token,
// is found for a team by the event's enterprise and, once a team was seen,
// by the team alone (posts to it after a restart), binds each team to a
// team workspace owned by the installer at its first event, shows in the
// installs view with its last event, and app_uninstalled removes it for
// every team.
func TestSlackOrgWideInstall(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		url := db(t)
		keys := "k:" + testKey(7)
		e := startInstallOn(t, url, keys, testenv.Logger(t), nil, "", nil, "")
		org := slacktest.Team{Name: "Grid org", BotUserID: "U0ORGBOT", BotID: "B0ORGBOT", Token: "xoxb-org-3c3c",
			EnterpriseID: "E0GRID", EnterpriseName: "Grid", OrgWide: true}
		state := e.installLink()
		resp, body := e.get("/slack/oauth/callback?code=" + e.slack.Authorize(org, installRedirect) + "&state=" + state)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, "every workspace of Grid") {
			t.Fatalf("the org-wide install answered %d %q", resp.StatusCode, body)
		}
		row, err := e.store.SlackInstallationGet(context.Background(), "E0GRID")
		if err != nil || !row.EnterpriseInstall || row.EnterpriseID != "E0GRID" {
			t.Fatalf("the org-wide install is stored as %+v, %v; want keyed by E0GRID", row, err)
		}
		orgEvent := func(team, channel, ts, text string, ev map[string]any) signedEvent {
			if ev == nil {
				ev = map[string]any{"type": "app_mention", "user": alice, "text": "<@" + org.BotUserID + "> " + text,
					"ts": ts, "channel": channel, "team": team, "event_ts": ts}
			}
			cb := slacktest.EventCallback(team, "Ev"+team+ts, ev)
			cb["enterprise_id"] = "E0GRID"
			return signedEvent{body: slacktest.MustJSON(cb), secret: e2eSecret, signedAt: time.Now()}
		}
		for i, team := range []string{"T0ONE", "T0TWO"} {
			ch, ts := "C0ORG"+team, fmt.Sprintf("170000100%d.000100", i)
			e.mustPost(orgEvent(team, ch, ts, "hello from "+team, nil))
			for _, tok := range e.replyBy(org.BotUserID, ch, "hello from "+team) {
				if tok != org.Token {
					t.Fatalf("a call for %s used %q, want the org token", team, tok)
				}
			}
		}
		e.waitIdle()
		// Each team got a team workspace of its own at its first event,
		// owned by the person who installed the app organisation-wide.
		var wsIDs []string
		for _, team := range []string{"T0ONE", "T0TWO"} {
			b, err := e.store.WorkspaceBindingFind(context.Background(), &store.WorkspaceBindingFindParams{Platform: "slack", ExternalID: team})
			if err != nil {
				t.Fatalf("the workspace of %s: %v", team, err)
			}
			ws, err := e.store.WorkspaceGet(context.Background(), b.WorkspaceID)
			if err != nil || ws.Kind != store.WorkspaceTeam {
				t.Fatalf("the workspace of %s: %+v, %v; want a team workspace", team, ws, err)
			}
			owner, err := e.store.PersonFind(context.Background(), &store.PersonFindParams{Identity: store.Identity{Platform: "slack", Workspace: team, UserID: "U0INSTALLER"}})
			if err != nil || ws.OwnerPersonID != owner.ID {
				t.Fatalf("the workspace of %s is owned by %s; want the installer (%+v, %v)", team, ws.OwnerPersonID, owner, err)
			}
			wsIDs = append(wsIDs, ws.ID.String())
		}
		if wsIDs[0] == wsIDs[1] {
			t.Fatal("two teams of the organisation share one workspace")
		}
		var list core.SlackInstallList
		pollFor(t, 10*time.Second, 20*time.Millisecond, "the event's time in the installs view", func() (bool, string) {
			list = core.SlackInstallList{}
			e.apiGet("/api/slack/installs", &list)
			return len(list.Installs) == 1 && list.Installs[0].LastEventAt != nil, fmt.Sprintf("%+v", list)
		})
		if in := list.Installs[0]; in.Key != "E0GRID" || !in.OrgWide || in.EnterpriseName != "Grid" || in.InstalledBy != "U0INSTALLER" || len(in.Scopes) == 0 || in.Renewal != "" {
			t.Fatalf("the installs view shows %+v", in)
		}
		// Another instance (a restart) posts to a team it never got an
		// event from: the team is found by itself.
		e.app.Stop(context.Background())
		e2 := startInstallOn(t, url, keys, testenv.Logger(t), nil, "", e.slack, "")
		if tok := e2.postAs("T0TWO", "C0ORGPOST", "posted after a restart"); tok != org.Token {
			t.Fatalf("the post to T0TWO after the restart used %q, want the org token", tok)
		}
		// Uninstalled from the organisation: gone for every team.
		e2.slack.Revoke(org.Token)
		e2.mustPost(orgEvent("T0ONE", "", "1700001100.000100", "", map[string]any{"type": "app_uninstalled", "event_ts": "1700001100.000100"}))
		if _, err := e2.store.SlackInstallationGet(context.Background(), "E0GRID"); !errorsIsNotFound(err) {
			t.Fatalf("the org install after app_uninstalled: %v, want not found", err)
		}
		for _, team := range []string{"T0ONE", "T0TWO"} {
			_, err := e2.slackAdapter().Post(context.Background(), bots.Target{Platform: "slack", Workspace: team, Channel: "C0GONE"}, &bots.Message{Text: "anyone?"})
			if !errors.Is(err, bots.ErrGone) {
				t.Fatalf("posting to %s after the uninstall: %v, want gone", team, err)
			}
		}
	})
}

// TestSlackTokensRevoked: tokens_revoked naming another bot user leaves the
// install; naming the install's bot user removes it and its token.
func TestSlackTokensRevoked(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		e := startInstall(t, db(t), "k:"+testKey(8))
		e.install(teamA)
		revoked := func(id string, bots ...string) signedEvent {
			ev := map[string]any{"type": "tokens_revoked", "event_ts": "1700002000.000100", "tokens": map[string]any{"oauth": []string{}, "bot": bots}}
			return signedEvent{body: slacktest.MustJSON(slacktest.EventCallback(teamA.ID, id, ev)), secret: e2eSecret, signedAt: time.Now()}
		}
		e.mustPost(revoked("EvRevOther", "U0SOMEONEELSE"))
		if _, err := e.store.SlackInstallationGet(context.Background(), teamA.ID); err != nil {
			t.Fatalf("the install after another bot's tokens were revoked: %v, want kept", err)
		}
		e.slack.Revoke(teamA.Token)
		e.mustPost(revoked("EvRevOurs", teamA.BotUserID))
		if _, err := e.store.SlackInstallationGet(context.Background(), teamA.ID); !errorsIsNotFound(err) {
			t.Fatalf("the install after its bot's tokens were revoked: %v, want removed", err)
		}
		before := len(e.slack.Calls())
		e.mustPost(teamMention(teamA, "C0AAA", "1700002001.000100", "still there?"))
		e.waitIdle()
		for _, c := range e.slack.Calls()[before:] {
			if c.Token == teamA.Token {
				t.Fatalf("after tokens_revoked, %s was called with the revoked token", c.Method)
			}
		}
	})
}
