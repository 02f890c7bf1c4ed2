// Package doctor checks a Switchboard setup the way `switchboard doctor`
// prints it: the configuration files (and the running service's last
// reload), the database and its schema, each platform token with the
// scopes and intents the features in use need, each agent's model backend
// (its key and its model, with one small request), git for coding runs,
// web search's provider (its key, with one small search), the code
// sandbox, Chromium for the browse tool, the MCP servers, and the public
// URL that HTTP events arrive at. Each problem comes with its
// fix; a failed check makes the command exit non-zero.
package doctor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/run/coding"
	"github.com/switchboardhq/switchboard/internal/app"
)

// Status is a check's outcome.
type Status string

// Outcomes. Only StatusFail makes the setup broken.
const (
	StatusOK   Status = "ok"
	StatusWarn Status = "warn"
	StatusFail Status = "fail"
	StatusSkip Status = "skip"
)

// Result is one check.
type Result struct {
	Check  string `json:"check"` // "config", "slack", "model ana", ...
	Status Status `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// ProbeFunc probes an agent's CLI backend (claude-code:, codex:).
type ProbeFunc func(ctx context.Context, a *config.Agent) (model.ProbeResult, error)

// Options configure a run.
type Options struct {
	// Config is the settings as `switchboard serve` reads them.
	Config app.Config
	// ServiceURL is where the running service answers (its last reload is
	// asked at /api/config/status with Config.APIToken); "" skips that.
	ServiceURL string
	// HTTPClient makes the checks' plain HTTP requests (default: one with
	// Timeout).
	HTTPClient *http.Client
	// Timeout bounds each check (default 15s).
	Timeout time.Duration
	// ProbeFunc probes the CLI backends; nil: app.ProbeAgent, with Config.
	ProbeFunc ProbeFunc
}

// Run makes every check and returns them in order.
func Run(ctx context.Context, o Options) []Result {
	if o.Timeout == 0 {
		o.Timeout = 15 * time.Second
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: o.Timeout}
	}
	if o.Config.Env == nil {
		o.Config.Env = func(string) string { return "" }
	}
	d := &doctor{o: o}
	agents := d.config(ctx)
	d.reload(ctx)
	d.database(ctx)
	d.slack(ctx)
	d.slackInstalls(ctx)
	d.discord(ctx)
	d.models(ctx, agents)
	d.coding(ctx, agents)
	d.web(ctx, agents)
	d.sso(ctx, agents)
	d.sandbox(ctx, agents)
	d.browser(ctx, agents)
	d.mcp(ctx)
	d.publicURL(ctx)
	return d.out
}

// Failed reports whether any check failed.
func Failed(rs []Result) bool {
	for _, r := range rs {
		if r.Status == StatusFail {
			return true
		}
	}
	return false
}

// Write prints the results, each problem followed by its fix.
func Write(w io.Writer, rs []Result) error {
	marks := map[Status]string{StatusOK: "ok  ", StatusWarn: "WARN", StatusFail: "FAIL", StatusSkip: "--  "}
	fails, warns := 0, 0
	for _, r := range rs {
		if _, err := fmt.Fprintf(w, "%s  %-16s %s\n", marks[r.Status], r.Check, r.Detail); err != nil {
			return err
		}
		if r.Fix != "" && (r.Status == StatusFail || r.Status == StatusWarn) {
			fmt.Fprintf(w, "      %-16s fix: %s\n", "", r.Fix)
		}
		switch r.Status {
		case StatusFail:
			fails++
		case StatusWarn:
			warns++
		}
	}
	_, err := fmt.Fprintf(w, "\n%d checks: %d failed, %d warnings\n", len(rs), fails, warns)
	return err
}

type doctor struct {
	o   Options
	out []Result
}

func (d *doctor) add(check string, st Status, detail, fix string) {
	d.out = append(d.out, Result{Check: check, Status: st, Detail: detail, Fix: fix})
}

func (d *doctor) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d.o.Timeout)
}

// config loads switchboard.yaml and mcp-servers.json as the service does.
func (d *doctor) config(_ context.Context) *config.Config {
	cfg := d.o.Config
	where := cfg.ConfigPath
	if where == "" {
		where = "no switchboard.yaml (one default agent)"
	}
	agents, err := config.Load(cfg.ConfigPath, cfg.Env)
	if err != nil {
		d.add("config", StatusFail, err.Error(), "correct the setting named (SWITCHBOARD_CONFIG is the file); a running service keeps its configuration until the file is right")
		return nil
	}
	if _, err := app.LoadMCP(cfg); err != nil {
		d.add("config", StatusFail, err.Error(), "correct mcp-servers.json (SWITCHBOARD_MCP_CONFIG)")
		return agents
	}
	d.add("config", StatusOK, fmt.Sprintf("%s: %d agent(s)", where, len(agents.Agents)), "")
	return agents
}

// reload asks the running service why its last reload was refused.
func (d *doctor) reload(ctx context.Context) {
	if d.o.ServiceURL == "" {
		return
	}
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(d.o.ServiceURL, "/")+"/api/config/status", nil)
	if err != nil {
		d.add("reload", StatusWarn, err.Error(), "")
		return
	}
	if d.o.Config.APIToken != "" {
		req.Header.Set("Authorization", "Bearer "+d.o.Config.APIToken)
	}
	resp, err := d.o.HTTPClient.Do(req)
	if err != nil {
		d.add("reload", StatusSkip, fmt.Sprintf("no service answering at %s", d.o.ServiceURL), "")
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		d.add("reload", StatusWarn, fmt.Sprintf("the service at %s answered %s to GET /api/config/status", d.o.ServiceURL, resp.Status),
			"set SWITCHBOARD_API_TOKEN to the service's operator token")
		return
	}
	var st app.ReloadStatus
	if err := decodeJSON(resp.Body, &st); err != nil {
		d.add("reload", StatusWarn, fmt.Sprintf("reading the service's reload status: %v", err), "")
		return
	}
	if st.LastError != "" {
		d.add("reload", StatusFail, fmt.Sprintf("the running service refused its last reload (%s): %s", st.ErrorAt.Format(time.RFC3339), st.LastError),
			"correct the file; the service runs on its previous configuration until a reload succeeds (save the file again, or send SIGHUP)")
		return
	}
	d.add("reload", StatusOK, fmt.Sprintf("running service on the configuration loaded %s (%d reloads)", st.LoadedAt.Format(time.RFC3339), st.Reloads), "")
}

// database opens the store and compares its schema with the binary's.
func (d *doctor) database(ctx context.Context) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	st, err := openStore(ctx, d.o.Config)
	if err != nil {
		d.add("database", StatusFail, err.Error(), "check DATABASE_URL (the server up, the credentials right); a new SQLite file is made by switchboard migrate or serve")
		return
	}
	defer st.Close()
	if err := st.Ping(ctx); err != nil {
		d.add("database", StatusFail, fmt.Sprintf("%s: %v", st.Dialect(), err), "check DATABASE_URL and that the database server is up")
		return
	}
	s, err := st.SchemaState(ctx)
	if err != nil {
		d.add("database", StatusFail, fmt.Sprintf("reading the schema version: %v", err), "run switchboard migrate")
		return
	}
	by := ""
	if s.AppliedBy != "" {
		by = ", applied by switchboard " + s.AppliedBy
	}
	floor := fmt.Sprintf("binaries of schema %d or later run on it", s.Floor)
	switch {
	case s.Applied < s.Latest:
		d.add("database", StatusFail, fmt.Sprintf("%s schema at version %d, this binary needs %d", st.Dialect(), s.Applied, s.Latest), "run switchboard migrate (serve also migrates at start)")
	case s.Err() != nil:
		d.add("database", StatusFail, fmt.Sprintf("%s: %v", st.Dialect(), s.Err()), "run the release the message names (or a later one) in place of this binary")
	case s.Newer():
		d.add("database", StatusWarn, fmt.Sprintf("%s schema at version %d%s: newer than this binary's %d and compatible with it (%s)", st.Dialect(), s.Applied, by, s.Latest, floor),
			"upgrade this binary to the release that migrated the database")
	default:
		d.add("database", StatusOK, fmt.Sprintf("%s schema at version %d%s; %s", st.Dialect(), s.Applied, by, floor), "")
	}
}

// models sends each distinct model the agents use one small request:
// it proves the endpoint answers, the key is accepted and the model
// exists.
func (d *doctor) models(ctx context.Context, agents *config.Config) {
	if agents == nil {
		d.add("models", StatusSkip, "not checked: the configuration does not load", "")
		return
	}
	seen := map[string]bool{}
	for i := range agents.Agents {
		a := &agents.Agents[i]
		if a.OnBridge() {
			d.bridge(ctx, a)
			continue
		}
		key := a.Model + "|" + a.KeyEnv() + "|" + a.BaseURL
		if seen[key] {
			continue
		}
		seen[key] = true
		d.model(ctx, a)
	}
}

// coding checks what runs' coding steps need, when repositories are set
// up for them (runs.repositories) or GitHub is connected: git on PATH.
func (d *doctor) coding(ctx context.Context, agents *config.Config) {
	if agents == nil || (len(agents.Runs.Repositories) == 0 && d.o.Config.Connections.GitHubClientID == "") {
		return
	}
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	repos, err := coding.New(coding.Options{Root: cmp.Or(d.o.Config.CLI.DataDir, "data")})
	if err == nil {
		err = repos.Check(ctx)
	}
	if err != nil {
		d.add("coding runs", StatusFail, err.Error(), "install git 2.30 or later on the service's PATH")
		return
	}
	d.add("coding runs", StatusOK, fmt.Sprintf("git found; %d repository prefixes in runs.repositories", len(agents.Runs.Repositories)), "")
}

// browser checks what the browse tool needs, when switchboard.yaml turns
// it on (browser:): a Chromium that starts with the tool's flags, behind
// its proxy.
func (d *doctor) browser(ctx context.Context, agents *config.Config) {
	if agents == nil || agents.Browser == nil {
		return
	}
	// Starting a browser takes seconds, and more on a busy host: the
	// check gets the browse tool's own budget when that is longer.
	wait := max(d.o.Timeout, cmp.Or(agents.Browser.Timeout, time.Minute))
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	b, err := app.NewBrowser(agents, nil)
	version := ""
	if err == nil {
		version, err = b.Check(ctx)
	}
	if err != nil {
		fix := "install Chromium on the service's PATH (apt-get install chromium), or set browser.chromium to its path"
		if errors.Is(err, context.DeadlineExceeded) {
			fix = fmt.Sprintf("Chromium did not start within %s: the host may be short of CPU or memory; raise browser.timeout if it is only slow", wait)
		}
		d.add("browser", StatusFail, err.Error(), fix)
		return
	}
	d.add("browser", StatusOK, version+" starts behind the browse tool's proxy", "")
}

func (d *doctor) model(ctx context.Context, a *config.Agent) {
	check := "model " + a.Name
	spec, err := model.ParseSpec(a.Model)
	if err != nil {
		d.add(check, StatusFail, err.Error(), "set the agent's model to provider:model")
		return
	}
	if model.IsCLI(spec.Provider) {
		// A CLI backend is probed (its program, version and login), not
		// asked a question: a call would run the CLI's whole agent loop.
		probe := d.o.ProbeFunc
		if probe == nil {
			probe = func(ctx context.Context, a *config.Agent) (model.ProbeResult, error) {
				return app.ProbeAgent(ctx, d.o.Config, a)
			}
		}
		p, err := probe(ctx, a)
		switch {
		case err != nil:
			d.add(check, StatusFail, err.Error(), "fix the CLI settings the error names (see docs/agents.md, CLI backends)")
		case p.State == model.ProbeReady:
			d.add(check, StatusOK, strings.TrimSpace(a.Model+": ready "+p.Version), "")
		case p.State == model.ProbeNeedsAuth:
			d.add(check, StatusFail, a.Model+": not logged in: "+p.Detail, "log the CLI in as the user the service runs as (claude auth login, codex login)")
		default:
			d.add(check, StatusFail, a.Model+": "+string(p.State)+": "+p.Detail, "install the CLI (npm install -g @anthropic-ai/claude-code or @openai/codex) or set SWITCHBOARD_CLAUDE_CODE_PATH / SWITCHBOARD_CODEX_PATH")
		}
		return
	}
	if spec.Provider == model.ProviderScripted {
		if _, err := model.LoadScript(spec.Model); err != nil {
			d.add(check, StatusFail, err.Error(), "fix the script file the model names")
			return
		}
		d.add(check, StatusWarn, a.Model+": a scripted model, not a real one", "set ANTHROPIC_API_KEY, OPENAI_API_KEY or the agent's model for real answers")
		return
	}
	b, err := app.AgentBackend(d.o.Config, a)
	if err != nil {
		d.add(check, StatusFail, err.Error(), fmt.Sprintf("set %s (or the agent's api_key_env)", a.KeyEnv()))
		return
	}
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	_, err = b.Generate(ctx, &model.Request{
		Messages:  []model.Message{{Role: model.RoleUser, Parts: []model.Part{{Kind: model.PartText, Text: "ping"}}}},
		MaxTokens: 1,
	}, nil)
	if err == nil {
		d.add(check, StatusOK, a.Model+": key accepted, model answers", "")
		return
	}
	var me *model.Error
	status := 0
	if errors.As(err, &me) {
		status = me.Status
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		d.add(check, StatusFail, err.Error(), fmt.Sprintf("the provider refused the key: set a valid key in %s", a.KeyEnv()))
	case status == http.StatusNotFound || status == http.StatusBadRequest:
		d.add(check, StatusFail, err.Error(), fmt.Sprintf("check the model name in the agent's model (%s)", a.Model))
	case status == http.StatusTooManyRequests || status >= 500:
		d.add(check, StatusWarn, err.Error(), "the provider is busy or rate limiting; try again later")
	default:
		d.add(check, StatusFail, err.Error(), "check the endpoint (the agent's base_url, ANTHROPIC_BASE_URL, OPENAI_BASE_URL) and the network")
	}
}
