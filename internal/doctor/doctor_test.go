package doctor_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	slackbot "github.com/switchboardhq/switchboard/bots/slack"
	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/clitest"
	"github.com/switchboardhq/switchboard/internal/discordtest"
	"github.com/switchboardhq/switchboard/internal/doctor"
	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/internal/slacktest"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/migrations"
	"github.com/switchboardhq/switchboard/store/dial"
)

// setup is one set of fakes and the settings pointing at them.
type setup struct {
	cfg     app.Config
	slack   *slacktest.Server
	discord *discordtest.Server
	model   *modeltest.Fake
}

// newSetup is a healthy setup: tokens the fakes accept with every scope
// and intent, a key the fake Anthropic accepts, a migrated database, a
// connected MCP server and a public URL that answers as Switchboard.
func newSetup(t *testing.T, db string) *setup {
	t.Helper()
	dir := t.TempDir()
	sl := slacktest.NewServer(slacktest.Options{BotToken: "xoxb-good", AppToken: "xapp-good", Scopes: slackbot.BotScopes})
	t.Cleanup(sl.Close)
	dc := discordtest.NewServer(t)
	an := modeltest.NewAnthropic(t)
	an.APIKey = "anth-good"
	an.Default(modeltest.Reply{Text: "p"})

	srv := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, nil)
	type in struct{}
	mcp.AddTool(srv, &mcp.Tool{Name: "lookup", Description: "looks up"}, func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	servers := filepath.Join(dir, "mcp-servers.json")
	write(t, servers, fmt.Sprintf(`{"mcpServers": {"docs": {"url": %q}}}`, hs.URL))

	// The public address: Switchboard's /healthz behind it.
	pub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			_, _ = w.Write([]byte("ok\n"))
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(pub.Close)

	cfgPath := filepath.Join(dir, "switchboard.yaml")
	write(t, cfgPath, "agents:\n  - name: ana\n    model: anthropic:claude-sonnet-4-5\n    tools: [docs__lookup]\n")
	st, err := dial.Open(context.Background(), dial.Options{DatabaseURL: db})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	env := map[string]string{"ANTHROPIC_API_KEY": "anth-good", "ANTHROPIC_BASE_URL": an.URL, "SWITCHBOARD_PUBLIC_URL": pub.URL}
	cfg := app.Config{
		DatabaseURL: db, ConfigPath: cfgPath, MCPConfigPath: servers,
		SlackBotToken: "xoxb-good", SlackAppToken: "xapp-good", SlackAPIURL: sl.APIURL(),
		DiscordBotToken: dc.Token, DiscordAPIURL: dc.URL,
		Env: func(k string) string { return env[k] },
	}
	cfg.PublicURL = pub.URL
	return &setup{cfg: cfg, slack: sl, discord: dc, model: an}
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, cfg app.Config, serviceURL string) ([]doctor.Result, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rs := doctor.Run(ctx, doctor.Options{Config: cfg, ServiceURL: serviceURL, Timeout: 5 * time.Second})
	var out bytes.Buffer
	if err := doctor.Write(&out, rs); err != nil {
		t.Fatal(err)
	}
	return rs, out.String()
}

func find(rs []doctor.Result, check string) *doctor.Result {
	for i := range rs {
		if rs[i].Check == check {
			return &rs[i]
		}
	}
	return nil
}

func eachStore(t *testing.T, f func(t *testing.T, db string)) {
	t.Run("sqlite", func(t *testing.T) { f(t, "sqlite:"+testenv.SQLiteFile(t)) })
	t.Run("postgres", func(t *testing.T) {
		f(t, testenv.PostgresURL(t)+"&switchboard_schema="+testenv.PostgresEmptySchema(t))
	})
}

// TestDoctorHealthy: against fakes that accept everything, every check
// passes and the setup is not broken.
func TestDoctorHealthy(t *testing.T) {
	eachStore(t, func(t *testing.T, db string) {
		s := newSetup(t, db)
		rs, out := run(t, s.cfg, "")
		if doctor.Failed(rs) {
			t.Fatalf("a healthy setup failed:\n%s", out)
		}
		for _, check := range []string{"config", "database", "slack", "slack scopes", "slack events", "discord", "discord gateway", "discord intents", "model ana", "mcp docs", "public url"} {
			if r := find(rs, check); r == nil || r.Status != doctor.StatusOK {
				t.Fatalf("check %q = %+v, want ok:\n%s", check, r, out)
			}
		}
		if reqs := s.model.Requests(); len(reqs) != 1 {
			t.Fatalf("the fake Anthropic got %d requests, want the one small check", len(reqs))
		}
	})
}

// TestDoctorBroken: each broken part is its own failed check with a fix
// that says what to do, and the setup is broken.
func TestDoctorBroken(t *testing.T) {
	eachStore(t, func(t *testing.T, db string) {
		s := newSetup(t, db)
		cfg := s.cfg
		cfg.SlackBotToken = "xoxb-revoked"
		cfg.DiscordBotToken = "wrong"
		env := map[string]string{"ANTHROPIC_API_KEY": "anth-wrong", "ANTHROPIC_BASE_URL": s.model.URL}
		cfg.Env = func(k string) string { return env[k] }
		write(t, cfg.MCPConfigPath, `{"mcpServers": {"docs": {"url": "http://127.0.0.1:1/mcp"}}}`)
		cfg.PublicURL = "http://127.0.0.1:1"
		rs, out := run(t, cfg, "")
		if !doctor.Failed(rs) {
			t.Fatalf("a broken setup passed:\n%s", out)
		}
		for check, fix := range map[string]string{
			"slack":      "SLACK_BOT_TOKEN is wrong or was revoked",
			"discord":    "DISCORD_BOT_TOKEN is wrong",
			"model ana":  "set a valid key in ANTHROPIC_API_KEY",
			"mcp docs":   "mcp-servers.json",
			"public url": "SWITCHBOARD_PUBLIC_URL",
		} {
			r := find(rs, check)
			if r == nil || r.Status != doctor.StatusFail || !strings.Contains(r.Fix, fix) {
				t.Fatalf("check %q = %+v, want a failure whose fix says %q:\n%s", check, r, fix, out)
			}
		}
		if !strings.Contains(out, "fix: ") {
			t.Fatalf("the report prints no fixes:\n%s", out)
		}
	})
}

// TestDoctorScopesIntentsSchemaConfig: a token missing a scope, an app
// without the Message Content intent, a database not migrated and a
// config typo are each named.
func TestDoctorScopesIntentsSchemaConfig(t *testing.T) {
	s := newSetup(t, "sqlite:"+testenv.SQLiteFile(t))
	sl := slacktest.NewServer(slacktest.Options{Scopes: []string{"chat:write", "app_mentions:read"}})
	t.Cleanup(sl.Close)
	cfg := s.cfg
	cfg.SlackBotToken, cfg.SlackAppToken, cfg.SlackAPIURL = "xoxb-any", "", sl.APIURL()
	s.discord.AppFlags = 0
	fresh := "sqlite:" + filepath.Join(t.TempDir(), "fresh.db")
	st, err := dial.Open(context.Background(), dial.Options{DatabaseURL: fresh}) // made, never migrated
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	cfg.DatabaseURL = fresh
	write(t, cfg.ConfigPath, "agents:\n  - name: ana\n    persnoa: x\n")
	rs, out := run(t, cfg, "")
	checks := map[string]string{
		"slack scopes":    "reactions:write",
		"slack events":    "neither SLACK_APP_TOKEN nor SLACK_SIGNING_SECRET",
		"discord intents": "Message Content",
		"database":        "schema at version 0",
		"config":          `unknown field "persnoa" in agents[0]`,
	}
	for check, detail := range checks {
		if r := find(rs, check); r == nil || r.Status != doctor.StatusFail || !strings.Contains(r.Detail, detail) {
			t.Fatalf("check %q = %+v, want a failure saying %q:\n%s", check, r, detail, out)
		}
	}
}

// TestDoctorSchemaOfANewerRelease: the database check names the schema's
// version, the binary that applied it and the floor; a newer schema that
// keeps this binary working is a warning, one a newer release contracted
// past this binary a failure naming the release to run.
func TestDoctorSchemaOfANewerRelease(t *testing.T) {
	eachStore(t, func(t *testing.T, db string) {
		s := newSetup(t, db)
		latest, err := migrations.Latest("sqlite")
		if err != nil {
			t.Fatal(err)
		}
		testenv.RecordSchemaVersion(t, db, latest+1, latest, "v9.1.0 (commit 9191aaaa9191)")
		rs, out := run(t, s.cfg, "")
		want := fmt.Sprintf("schema at version %d, applied by switchboard v9.1.0 (commit 9191aaaa9191): newer than this binary's %d and compatible with it (binaries of schema %d or later run on it)", latest+1, latest, latest)
		if r := find(rs, "database"); r == nil || r.Status != doctor.StatusWarn || !strings.Contains(r.Detail, want) {
			t.Fatalf("database check on a newer, compatible schema = %+v; want a warning saying %q:\n%s", r, want, out)
		}

		testenv.RecordSchemaVersion(t, db, latest+2, latest+2, "v9.2.0 (commit 9292bbbb9292)")
		rs, out = run(t, s.cfg, "")
		want = "run switchboard v9.2.0 (commit 9292bbbb9292) or later"
		if r := find(rs, "database"); r == nil || r.Status != doctor.StatusFail || !strings.Contains(r.Detail, want) {
			t.Fatalf("database check on a schema contracted past this binary = %+v; want a failure saying %q:\n%s", r, want, out)
		}
	})
}

// TestDoctorReadsARefusedReload: the running service refused a reload;
// doctor, asking it, says so and why.
func TestDoctorReadsARefusedReload(t *testing.T) {
	s := newSetup(t, "sqlite:"+testenv.SQLiteFile(t))
	cfg := s.cfg
	cfg.Addr, cfg.APIToken, cfg.ReloadPoll = "127.0.0.1:0", "op-doctor", -1
	cfg.SlackBotToken, cfg.SlackAppToken, cfg.DiscordBotToken = "", "", ""
	cfg.Logger = testenv.Logger(t)
	a, err := app.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Stop(context.Background()) })
	write(t, cfg.ConfigPath, "agents:\n  - name: ana\n    model: anthropic:claude-sonnet-4-5\n    tools: [nope]\n")
	if err := a.Reload(context.Background()); err == nil {
		t.Fatal("a reload naming an unknown tool was applied")
	}
	rs, out := run(t, cfg, "http://"+a.Addr())
	r := find(rs, "reload")
	if r == nil || r.Status != doctor.StatusFail || !strings.Contains(r.Detail, `no tool named "nope"`) {
		t.Fatalf("reload check = %+v, want the running service's refusal:\n%s", r, out)
	}
}

// TestDoctorProbesCLIAgents: an agent on a coding CLI is probed, not asked
// a question: a logged-in CLI is ready, one that is not logged in and one
// that is not installed are failures whose fixes say what to do.
func TestDoctorProbesCLIAgents(t *testing.T) {
	fake := clitest.Build(t)
	s := newSetup(t, "sqlite:"+testenv.SQLiteFile(t))
	for _, tc := range []struct {
		name, scenario, path string
		status               doctor.Status
		fix                  string
	}{
		{"ready", "text", fake.Claude, doctor.StatusOK, ""},
		{"not logged in", "noauth", fake.Claude, doctor.StatusFail, "log the CLI in"},
		{"not installed", "text", filepath.Join(t.TempDir(), "claude"), doctor.StatusFail, "install the CLI"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := s.cfg
			write(t, cfg.ConfigPath, "agents:\n  - name: coder\n    model: claude-code:sonnet\n")
			env := map[string]string{}
			for _, kv := range fake.Env(tc.scenario) {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
			cfg.Env = func(k string) string { return env[k] }
			cfg.CLI = app.CLISettings{DataDir: t.TempDir(), ClaudeCodePath: tc.path,
				PassEnv: []string{"FAKECLI_SCENARIO", "FAKECLI_STATE", "FAKECLI_LOG"}}
			rs, out := run(t, cfg, "")
			r := find(rs, "model coder")
			if r == nil || r.Status != tc.status || !strings.Contains(r.Fix, tc.fix) {
				t.Fatalf("check model coder = %+v, want %s with a fix saying %q:\n%s", r, tc.status, tc.fix, out)
			}
			if calls := fake.Calls(t); len(calls) > 0 {
				for _, c := range calls {
					if slices.Contains(c.Args, "-p") {
						t.Fatalf("doctor ran the CLI's agent loop (%v); a probe needs no model call", c.Args)
					}
				}
			}
		})
	}
}

// TestDoctorAsksTheServiceAboutOAuthServers: a server behind OAuth is not
// connected by doctor (it would start a sign-in); without the service's
// address it is skipped with how to see it, and with it the service's
// state is shown: waiting for a person, with the link to open.
func TestDoctorAsksTheServiceAboutOAuthServers(t *testing.T) {
	s := newSetup(t, "sqlite:"+testenv.SQLiteFile(t))
	cfg := s.cfg
	write(t, cfg.MCPConfigPath, `{"mcpServers": {"tracker": {"url": "http://127.0.0.1:1/mcp", "oauth": {}}}}`)
	write(t, cfg.ConfigPath, "agents:\n  - name: ana\n    model: anthropic:claude-sonnet-4-5\n")
	rs, out := run(t, cfg, "")
	if r := find(rs, "mcp tracker"); r == nil || r.Status != doctor.StatusSkip || !strings.Contains(r.Fix, "-url") {
		t.Fatalf("without the service: mcp tracker = %+v, want skipped with how to see it:\n%s", r, out)
	}
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/mcp/status" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `{"servers": [{"name": "tracker", "transport": "http", "state": "authorizing", "tools": [], "authorize_url": "https://auth.example.com/authorize?x=1"}]}`)
	}))
	t.Cleanup(svc.Close)
	rs, out = run(t, cfg, svc.URL)
	if r := find(rs, "mcp tracker"); r == nil || r.Status != doctor.StatusWarn || !strings.Contains(r.Fix, "https://auth.example.com/authorize") {
		t.Fatalf("with the service: mcp tracker = %+v, want a warning with the link to open:\n%s", r, out)
	}
}

// TestDoctorChecksGitForCodingRuns: with repositories listed for coding
// steps, doctor says whether git runs; without, it says nothing of it.
func TestDoctorChecksGitForCodingRuns(t *testing.T) {
	s := newSetup(t, "sqlite:"+testenv.SQLiteFile(t))
	cfg := s.cfg
	cfg.CLI = app.CLISettings{DataDir: t.TempDir()}
	rs, out := run(t, cfg, "")
	if r := find(rs, "coding runs"); r != nil {
		t.Fatalf("coding runs checked with nothing set up for them: %+v", r)
	}
	write(t, cfg.ConfigPath, "agents:\n  - name: ana\n    model: anthropic:claude-sonnet-4-5\nruns:\n  repositories: [/srv/git/]\n")
	rs, out = run(t, cfg, "")
	if r := find(rs, "coding runs"); r == nil || r.Status != doctor.StatusOK || !strings.Contains(r.Detail, "git found; 1 repository prefixes") {
		t.Fatalf("coding runs = %+v:\n%s", r, out)
	}
	if entries, _ := os.ReadDir(cfg.CLI.DataDir); len(entries) != 0 {
		t.Errorf("doctor made %v in the data folder", entries)
	}
}

// TestDoctorChecksTheBrowser: with a browser: section, doctor starts
// Chromium as the browse tool would and says so, or fails with the fix
// when the configured one is not there; without the section it says
// nothing of it.
func TestDoctorChecksTheBrowser(t *testing.T) {
	s := newSetup(t, "sqlite:"+testenv.SQLiteFile(t))
	cfg := s.cfg
	rs, out := run(t, cfg, "")
	if r := find(rs, "browser"); r != nil {
		t.Fatalf("browser checked without a browser: section: %+v", r)
	}
	write(t, cfg.ConfigPath, "agents:\n  - name: ana\n    model: anthropic:claude-sonnet-4-5\nbrowser:\n  chromium: /nonexistent/chromium\n")
	rs, out = run(t, cfg, "")
	if r := find(rs, "browser"); r == nil || r.Status != doctor.StatusFail || !strings.Contains(r.Detail, "browser.chromium /nonexistent/chromium") || !strings.Contains(r.Fix, "apt-get install chromium") {
		t.Fatalf("browser = %+v:\n%s", r, out)
	}
	if _, err := exec.LookPath("chromium"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no chromium on PATH: the browser check needs it in CI (apt-get install -y chromium)")
		}
		t.Skip("no chromium on PATH: the rest of the test starts it")
	}
	write(t, cfg.ConfigPath, "agents:\n  - name: ana\n    model: anthropic:claude-sonnet-4-5\nbrowser: {}\n")
	rs, out = run(t, cfg, "")
	if r := find(rs, "browser"); r == nil || r.Status != doctor.StatusOK || !strings.Contains(r.Detail, "Chrome/") {
		t.Fatalf("browser = %+v:\n%s", r, out)
	}
}

// TestDoctorListsBridges: a runs_on: bridge agent's model is not probed
// here; with the service's address, doctor lists its connected bridges,
// and warns when none is.
func TestDoctorListsBridges(t *testing.T) {
	s := newSetup(t, "sqlite:"+testenv.SQLiteFile(t))
	cfg := s.cfg
	write(t, cfg.ConfigPath, "agents:\n  - name: ada\n    model: claude-code:sonnet\n    runs_on: bridge\n")
	rs, out := run(t, cfg, "")
	if r := find(rs, "model ada"); r == nil || r.Status != doctor.StatusSkip || !strings.Contains(r.Fix, "-url") {
		t.Fatalf("without the service: model ada = %+v, want skipped with how to see its bridges:\n%s", r, out)
	}
	connected := `{"bridges": [{"id": "laptop-1", "agents": ["ada"], "version": "v1.2.3", "connected_at": "2026-01-01T00:00:00Z", "last_heartbeat": "2026-01-01T00:00:00Z", "calls": 0}]}`
	answer := connected
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/bridges" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, answer)
	}))
	t.Cleanup(svc.Close)
	rs, out = run(t, cfg, svc.URL)
	if r := find(rs, "model ada"); r == nil || r.Status != doctor.StatusOK || !strings.Contains(r.Detail, "laptop-1 (v1.2.3") {
		t.Fatalf("with a bridge: model ada = %+v, want ok naming laptop-1:\n%s", r, out)
	}
	answer = `{"bridges": []}`
	rs, out = run(t, cfg, svc.URL)
	if r := find(rs, "model ada"); r == nil || r.Status != doctor.StatusWarn || !strings.Contains(r.Fix, "switchboard bridge") {
		t.Fatalf("with none: model ada = %+v, want a warning saying how to start one:\n%s", r, out)
	}
}
