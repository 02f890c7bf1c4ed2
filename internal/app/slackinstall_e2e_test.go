package app_test

// The Slack install flow end to end: two teams installed through the fake's
// oauth.v2.access on one instance, each answered with its own token, one
// uninstalled while the other goes on, the tokens sealed at rest, and the
// key rotated.

import (
	"bytes"
	"context"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/secret"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

const (
	installClientID = "111.222"
	installSecret   = "client-secret-e2e"
	installPublic   = "https://switchboard.example.test"
	installRedirect = installPublic + "/slack/oauth/callback"
)

var (
	teamA = slacktest.Team{ID: "T0AAA", Name: "Team A", BotUserID: "U0BOTA", BotID: "B0BOTA", Token: "xoxb-team-a-7f3c9d2e1b"}
	teamB = slacktest.Team{ID: "T0BBB", Name: "Team B", BotUserID: "U0BOTB", BotID: "B0BOTB", Token: "xoxb-team-b-4a8e6f0c5d"}
)

func testKey(b byte) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32)) }

type installEnv struct {
	*slackEnv
	db string
}

// startInstall runs the service with the install flow on and no single
// bot token: every team it answers was installed through OAuth.
func startInstall(t *testing.T, db, keys string) *installEnv {
	t.Helper()
	return startInstallLogged(t, db, keys, testenv.Logger(t))
}

// startInstallLogged is startInstall with the service's log going to logger.
func startInstallLogged(t *testing.T, db, keys string, logger *slog.Logger) *installEnv {
	t.Helper()
	return startInstallWith(t, db, keys, logger, nil, "")
}

// startInstallWith is startInstallLogged with more of the environment
// (extra wins over the defaults) and a switchboard.yaml ("": none).
func startInstallWith(t *testing.T, db, keys string, logger *slog.Logger, extra map[string]string, config string) *installEnv {
	t.Helper()
	return startInstallOn(t, db, keys, logger, extra, config, nil, "")
}

// startInstallOn is startInstallWith on the fake Slack srv (nil: a new
// one) under the instance id instanceID ("": from the database), so that
// two instances can share one database and one Slack.
func startInstallOn(t *testing.T, db, keys string, logger *slog.Logger, extra map[string]string, config string, srv *slacktest.Server, instanceID string) *installEnv {
	t.Helper()
	if srv == nil {
		srv = slacktest.NewServer(slacktest.Options{})
		t.Cleanup(srv.Close)
	}
	srv.SetOAuth(slacktest.OAuthCheck{ClientID: installClientID, ClientSecret: installSecret})
	script, err := filepath.Abs(filepath.Join("testdata", "slack_e2e.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SWITCHBOARD_MODEL": "scripted:" + script}
	for k, v := range extra {
		env[k] = v
	}
	getenv := func(k string) string {
		switch k {
		case "SLACK_CLIENT_ID":
			return installClientID
		case "SLACK_CLIENT_SECRET":
			return installSecret
		case "SWITCHBOARD_PUBLIC_URL":
			return installPublic
		case "SWITCHBOARD_SECRET_KEY":
			return keys
		}
		return env[k]
	}
	cfg, err := app.FromEnv(getenv)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr, cfg.DatabaseURL, cfg.Logger = "127.0.0.1:0", db, logger
	if config != "" {
		cfg.ConfigPath = writeConfig(t, config)
	}
	cfg.SlackSigningSecret, cfg.SlackAPIURL = e2eSecret, srv.APIURL()
	cfg.InstanceID = instanceID
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := app.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("opening the service: %v", err)
	}
	if err := a.Start(context.Background()); err != nil {
		_ = a.Stop(context.Background())
		t.Fatalf("starting the service: %v", err)
	}
	t.Cleanup(func() { _ = a.Stop(context.Background()) })
	client := &http.Client{
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	t.Cleanup(client.CloseIdleConnections)
	return &installEnv{slackEnv: &slackEnv{tb: t, app: a, slack: srv, base: "http://" + a.Addr(), store: a.Store, http: client}, db: db}
}

func (e *installEnv) get(path string) (*http.Response, string) {
	e.tb.Helper()
	resp, err := e.http.Get(e.base + path)
	if err != nil {
		e.tb.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp, b.String()
}

// installLink follows GET /slack/install and returns the state it carries.
func (e *installEnv) installLink() string {
	e.tb.Helper()
	resp, _ := e.get("/slack/install")
	if resp.StatusCode != http.StatusFound {
		e.tb.Fatalf("GET /slack/install answered %d, want 302", resp.StatusCode)
	}
	u, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || u.Scheme+"://"+u.Host+u.Path != "https://slack.com/oauth/v2/authorize" {
		e.tb.Fatalf("install redirects to %q, want Slack's oauth/v2/authorize", resp.Header.Get("Location"))
	}
	q := u.Query()
	if q.Get("client_id") != installClientID || q.Get("redirect_uri") != installRedirect || !strings.Contains(q.Get("scope"), "chat:write") || q.Get("state") == "" {
		e.tb.Fatalf("authorize URL query %v: want client_id, the manifest's scopes, redirect_uri and a state", q)
	}
	return q.Get("state")
}

func (e *installEnv) install(t slacktest.Team) {
	e.tb.Helper()
	state := e.installLink()
	code := e.slack.Authorize(t, installRedirect)
	resp, body := e.get("/slack/oauth/callback?code=" + url.QueryEscape(code) + "&state=" + url.QueryEscape(state))
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, t.Name) {
		e.tb.Fatalf("installing in %s: callback answered %d %q", t.ID, resp.StatusCode, body)
	}
}

func teamMention(t slacktest.Team, channel, ts, text string) signedEvent {
	ev := map[string]any{
		"type": "app_mention", "user": alice, "text": "<@" + t.BotUserID + "> " + text,
		"ts": ts, "channel": channel, "team": t.ID, "event_ts": ts,
	}
	return signedEvent{body: slacktest.MustJSON(slacktest.EventCallback(t.ID, "Ev"+t.ID+ts, ev)), secret: e2eSecret, signedAt: time.Now()}
}

// replyIn waits for the reply in channel and checks that every call made
// for that channel carried the team's token.
func (e *installEnv) replyIn(t slacktest.Team, channel, text string) {
	e.tb.Helper()
	poll(e.tb, "a reply by "+t.BotUserID+" in "+channel, func() (bool, string) {
		for _, m := range e.slack.Messages(channel) {
			if m.User == t.BotUserID && !m.Streaming && strings.Contains(shown(m), text) {
				return true, ""
			}
		}
		return false, ""
	})
	for _, c := range e.slack.Calls() {
		if c.Params.Get("channel") == channel && c.Token != t.Token {
			e.tb.Fatalf("%s to %s (team %s) used token %q, want the team's own", c.Method, channel, t.ID, c.Token)
		}
	}
}

func TestSlackInstallTwoTeams(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		url := db(t)
		oldKeys := "old:" + testKey(1)
		e := startInstall(t, url, oldKeys)

		e.install(teamA)
		e.install(teamB)

		// Each team got a team workspace of its own, bound to it and owned
		// by the person who installed the app.
		var wsIDs []uuid.UUID
		for _, team := range []string{teamA.ID, teamB.ID} {
			b, err := e.store.WorkspaceBindingFind(context.Background(), &store.WorkspaceBindingFindParams{Platform: "slack", ExternalID: team})
			if err != nil {
				t.Fatalf("the workspace of team %s after install: %v", team, err)
			}
			ws, err := e.store.WorkspaceGet(context.Background(), b.WorkspaceID)
			if err != nil || ws.Kind != store.WorkspaceTeam {
				t.Fatalf("workspace of team %s = %+v, %v; want a team workspace", team, ws, err)
			}
			owner, err := e.store.PersonFind(context.Background(), &store.PersonFindParams{Identity: store.Identity{Platform: "slack", Workspace: team, UserID: "U0INSTALLER"}})
			if err != nil || ws.OwnerPersonID != owner.ID {
				t.Fatalf("team %s workspace owner %s; want the installer's person (%+v, %v)", team, ws.OwnerPersonID, owner, err)
			}
			wsIDs = append(wsIDs, ws.ID)
		}
		if wsIDs[0] == wsIDs[1] {
			t.Fatal("two teams share one workspace")
		}

		// The state is single use, and only ours.
		state := e.installLink()
		code := e.slack.Authorize(teamA, installRedirect)
		if resp, _ := e.get("/slack/oauth/callback?code=" + code + "&state=" + state); resp.StatusCode != http.StatusOK {
			t.Fatalf("a fresh reinstall answered %d", resp.StatusCode)
		}
		code = e.slack.Authorize(teamA, installRedirect)
		if resp, body := e.get("/slack/oauth/callback?code=" + code + "&state=" + state); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "used already") {
			t.Fatalf("a replayed state answered %d %q, want 400 saying it was used", resp.StatusCode, body)
		}
		tampered := e.installLink()
		tampered = tampered[:len(tampered)-2] + "AA"
		if resp, _ := e.get("/slack/oauth/callback?code=" + code + "&state=" + tampered); resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("a tampered state answered %d, want 400", resp.StatusCode)
		}

		e.mustPost(teamMention(teamA, "C0AAA", "1700000001.000100", "hello from A"))
		e.replyIn(teamA, "C0AAA", "hello from A")
		e.mustPost(teamMention(teamB, "C0BBB", "1700000002.000100", "hello from B"))
		e.replyIn(teamB, "C0BBB", "hello from B")
		e.waitIdle()

		// Encryption at rest: no token in clear in the database.
		for _, tok := range []string{teamA.Token, teamB.Token} {
			checkNotAtRest(t, url, tok)
		}

		// Uninstalling A stops A and leaves B working.
		e.slack.Revoke(teamA.Token)
		uninstall := slacktest.EventCallback(teamA.ID, "EvUninstallA", map[string]any{"type": "app_uninstalled", "event_ts": "1700000003.000100"})
		e.mustPost(signedEvent{body: slacktest.MustJSON(uninstall), secret: e2eSecret, signedAt: time.Now()})
		if _, err := e.store.SlackInstallationGet(context.Background(), teamA.ID); !errorsIsNotFound(err) {
			t.Fatalf("team A's installation after app_uninstalled: %v, want not found", err)
		}
		before := len(e.slack.Calls())
		e.mustPost(teamMention(teamA, "C0AAA", "1700000004.000100", "anyone there?"))
		e.mustPost(teamMention(teamB, "C0BBB", "1700000005.000100", "still here"))
		e.replyIn(teamB, "C0BBB", "still here")
		e.waitIdle()
		for _, c := range e.slack.Calls()[before:] {
			if c.Token == teamA.Token {
				t.Fatalf("after the uninstall, %s was called with team A's token", c.Method)
			}
		}

		// rotate-key: everything sealed under "old" moves to "new".
		keys, err := secret.ParseKeys("new:" + testKey(2) + "," + oldKeys)
		if err != nil {
			t.Fatal(err)
		}
		res, err := app.RotateKey(context.Background(), e.store, keys, time.Now)
		if err != nil || res.Resealed != 1 || len(res.Unopened) != 0 {
			t.Fatalf("RotateKey: %+v, %v; want B's token resealed", res, err)
		}
		in, err := e.store.SlackInstallationGet(context.Background(), teamB.ID)
		if err != nil || secret.Sealed(in.BotToken).KeyID() != "new" {
			t.Fatalf("team B after the rotation: %+v, %v; want sealed under key new", in, err)
		}
		got, err := keys.Open(secret.Sealed(in.BotToken), store.SlackInstallationAAD(teamB.ID))
		if err != nil || string(got) != teamB.Token {
			t.Fatalf("team B's token after the rotation opens to %q, %v", got, err)
		}
		onlyNew, _ := secret.ParseKeys("new:" + testKey(2))
		res, err = app.RotateKey(context.Background(), e.store, onlyNew, time.Now)
		if err != nil || res.Resealed != 0 || res.Current != 1 {
			t.Fatalf("a second rotation: %+v, %v; want nothing left to reseal", res, err)
		}
		stranger, _ := secret.ParseKeys("other:" + testKey(3))
		res, err = app.RotateKey(context.Background(), e.store, stranger, time.Now)
		if err != nil || len(res.Unopened) != 1 {
			t.Fatalf("rotating with a key that opens nothing: %+v, %v; want one secret reported", res, err)
		}
		if in2, _ := e.store.SlackInstallationGet(context.Background(), teamB.ID); in2.BotToken != in.BotToken {
			t.Fatal("a secret that did not open was changed")
		}
	})
}

func TestSlackInstallNeedsTheSecretKey(t *testing.T) {
	t.Parallel()
	e := startInstall(t, sqliteDatabase(t), "")
	state := e.installLink()
	code := e.slack.Authorize(teamA, installRedirect)
	resp, body := e.get("/slack/oauth/callback?code=" + code + "&state=" + state)
	if resp.StatusCode == http.StatusOK || !strings.Contains(body, "SWITCHBOARD_SECRET_KEY") {
		t.Fatalf("installing without a key answered %d %q; want a refusal naming SWITCHBOARD_SECRET_KEY", resp.StatusCode, body)
	}
	if _, err := e.store.SlackInstallationGet(context.Background(), teamA.ID); !errorsIsNotFound(err) {
		t.Fatalf("an installation was stored without a key: %v", err)
	}
}

func errorsIsNotFound(err error) bool {
	return err != nil && strings.Contains(err.Error(), store.ErrNotFound.Error())
}

// checkNotAtRest fails when token is in the database's bytes: the SQLite
// file and its WAL, or a pg_dump of the test's schema.
func checkNotAtRest(t *testing.T, dbURL, token string) {
	t.Helper()
	if path, ok := strings.CutPrefix(dbURL, "sqlite:"); ok {
		for _, f := range []string{path, path + "-wal"} {
			b, err := os.ReadFile(f)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(token)) {
				t.Fatalf("the token %q is in clear in %s", token, f)
			}
		}
		return
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	schema := q.Get("switchboard_schema")
	q.Del("switchboard_schema")
	u.RawQuery = q.Encode()
	out, err := exec.Command("pg_dump", "-n", schema, u.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("pg_dump -n %s: %v\n%s", schema, err, out)
	}
	if !bytes.Contains(out, []byte("slack_installations")) {
		t.Fatalf("pg_dump of %s has no slack_installations table; the check would prove nothing", schema)
	}
	if bytes.Contains(out, []byte(token)) {
		t.Fatalf("the token %q is in clear in a pg_dump", token)
	}
}
