package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/internal/childenv"
)

// CLISettings configure the agents that run on a coding CLI
// (claude-code:…, codex:…).
type CLISettings struct {
	// DataDir holds each such agent's private working directory,
	// DataDir/agents/NAME/work (SWITCHBOARD_DATA_DIR, default ./data).
	DataDir string
	// ClaudeCodePath and CodexPath are the programs
	// (SWITCHBOARD_CLAUDE_CODE_PATH, SWITCHBOARD_CODEX_PATH; default claude
	// and codex on PATH).
	ClaudeCodePath, CodexPath string
	// ClaudeCodeArgs and CodexArgs are extra arguments
	// (SWITCHBOARD_CLAUDE_CODE_ARGS, SWITCHBOARD_CODEX_ARGS, split at
	// spaces; "none" for none); nil: defaultClaudeCodeArgs and
	// defaultCodexArgs.
	ClaudeCodeArgs, CodexArgs []string
	// PassEnv names more variables of the service's environment the CLIs
	// get (SWITCHBOARD_CLI_ENV, comma-separated), beside cliEnvNames.
	PassEnv []string
	// IdleTimeout kills a CLI that prints nothing for this long
	// (SWITCHBOARD_CLI_IDLE_TIMEOUT, default 10m).
	IdleTimeout time.Duration
	// MCPURL is where the CLIs reach Switchboard's /mcp
	// (SWITCHBOARD_CLI_MCP_URL; default http://127.0.0.1:PORT/mcp from
	// SWITCHBOARD_ADDR when it names a port; "off" gives the CLIs their
	// native tools only).
	MCPURL string
	// MCPToken is the bearer token the CLIs present there
	// (SWITCHBOARD_CLI_MCP_TOKEN, default SWITCHBOARD_API_TOKEN).
	MCPToken string
}

// The CLIs' default permissions: Claude Code may edit files in its working
// directory without asking (in -p mode nothing can ask, and an unallowed
// tool is refused); Codex runs commands in its workspace-write sandbox.
var (
	defaultClaudeCodeArgs = []string{"--permission-mode", "acceptEdits"}
	defaultCodexArgs      = []string{"-c", `sandbox_mode="workspace-write"`}
)

// cliEnvNames are the variables a CLI gets from the service's environment:
// the base every started program gets (childenv.Base), what a terminal
// program expects, and the CLIs' own settings. Provider keys are not among
// them (a CLI logged in to a subscription would bill the key instead); name
// them in SWITCHBOARD_CLI_ENV or an agent's api_key_env.
var cliEnvNames = append(slices.Clone(childenv.Base),
	"TERM", "SHELL",
	"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
	"CLAUDE_CONFIG_DIR", "CODEX_HOME",
)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (c *CLISettings) fromEnv(getenv func(string) string) error {
	c.DataDir = strings.TrimSpace(getenv("SWITCHBOARD_DATA_DIR"))
	c.ClaudeCodePath = strings.TrimSpace(getenv("SWITCHBOARD_CLAUDE_CODE_PATH"))
	c.CodexPath = strings.TrimSpace(getenv("SWITCHBOARD_CODEX_PATH"))
	c.ClaudeCodeArgs = cliArgs(getenv("SWITCHBOARD_CLAUDE_CODE_ARGS"))
	c.CodexArgs = cliArgs(getenv("SWITCHBOARD_CODEX_ARGS"))
	for _, n := range strings.Split(getenv("SWITCHBOARD_CLI_ENV"), ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if !envName.MatchString(n) {
			return fmt.Errorf("SWITCHBOARD_CLI_ENV: %q is not a variable name", n)
		}
		c.PassEnv = append(c.PassEnv, n)
	}
	if v := getenv("SWITCHBOARD_CLI_IDLE_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second {
			return fmt.Errorf("SWITCHBOARD_CLI_IDLE_TIMEOUT: %q must be a duration of at least 1s, such as 10m", v)
		}
		c.IdleTimeout = d
	}
	c.MCPURL = strings.TrimSpace(getenv("SWITCHBOARD_CLI_MCP_URL"))
	if c.MCPURL != "" && c.MCPURL != "off" && !strings.HasPrefix(c.MCPURL, "http://") && !strings.HasPrefix(c.MCPURL, "https://") {
		return fmt.Errorf("SWITCHBOARD_CLI_MCP_URL: %q must be an http:// or https:// URL, or off", c.MCPURL)
	}
	c.MCPToken = getenv("SWITCHBOARD_CLI_MCP_TOKEN")
	return nil
}

// cliArgs splits an ARGS setting: nil when unset (the defaults apply),
// none for no extra arguments at all.
func cliArgs(v string) []string {
	switch v = strings.TrimSpace(v); v {
	case "":
		return nil
	case "none":
		return []string{}
	}
	return strings.Fields(v)
}

// cliOptions are an agent's CLI settings; the working directory is made
// when missing.
func (c *Config) cliOptions(a *config.Agent, spec model.Spec) (*model.CLIOptions, error) {
	s := c.CLI
	dataDir := s.DataDir
	if dataDir == "" {
		dataDir = "data"
	}
	dir, err := filepath.Abs(filepath.Join(dataDir, "agents", a.Name, "work"))
	if err != nil {
		return nil, fmt.Errorf("agent %s: working directory: %w", a.Name, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("agent %s: making its working directory (SWITCHBOARD_DATA_DIR): %w", a.Name, err)
	}
	o := &model.CLIOptions{Dir: dir, IdleTimeout: s.IdleTimeout}
	var names []string
	names = append(names, cliEnvNames...)
	names = append(names, s.PassEnv...)
	o.Env = childenv.From(c.Env, names...)
	switch spec.Provider {
	case model.ProviderClaudeCode:
		o.Path, o.Args = s.ClaudeCodePath, s.ClaudeCodeArgs
		if o.Args == nil {
			o.Args = defaultClaudeCodeArgs
		}
		if a.APIKeyEnv != "" {
			key := c.Env(a.APIKeyEnv)
			if key == "" {
				return nil, fmt.Errorf("model %s: api_key_env names %s, which is empty", a.Model, a.APIKeyEnv)
			}
			o.Env = append(o.Env, "ANTHROPIC_API_KEY="+key)
		}
	case model.ProviderCodex:
		o.Path, o.Args = s.CodexPath, s.CodexArgs
		if o.Args == nil {
			o.Args = defaultCodexArgs
		}
	}
	if url := c.cliMCPURL(); url != "" {
		token := s.MCPToken
		if token == "" {
			token = c.APIToken
		}
		o.MCP = &model.CLIMCP{URL: url, Token: token, Exclude: []string{a.Name}}
	}
	return o, nil
}

// cliMCPURL is where the CLIs reach /mcp, or "" when they cannot: the
// setting, else the loopback address of the port the service listens on.
func (c *Config) cliMCPURL() string {
	switch u := c.CLI.MCPURL; u {
	case "off":
		return ""
	case "":
	default:
		return u
	}
	if c.Addr == "-" {
		return ""
	}
	_, port, err := net.SplitHostPort(c.Addr)
	if err != nil || port == "" || port == "0" {
		return ""
	}
	return "http://127.0.0.1:" + port + "/mcp"
}

// cliProbes keeps the last capability probe of each CLI agent, for /readyz.
// A probe runs two short commands, so it runs in the background and at
// most once a minute; /readyz never waits for it.
type cliProbes struct {
	mu      sync.Mutex
	agents  []cliAgent
	results map[string]model.ProbeResult
	at      time.Time
	running bool
	now     func() time.Time
}

type cliAgent struct {
	name string
	spec model.Spec
	opts model.CLIOptions
}

const cliProbeEvery = time.Minute

// buildCLIProbes finds the agents that run on a CLI.
func (a *App) buildCLIProbes(agents *config.Config) error {
	p := &cliProbes{results: map[string]model.ProbeResult{}, now: a.cfg.Now}
	for _, ag := range agents.Agents {
		spec, err := model.ParseSpec(ag.Model)
		if err != nil || !model.IsCLI(spec.Provider) || ag.OnBridge() {
			continue // a bridge agent's CLI is on its own machine
		}
		o, err := a.cfg.cliOptions(&ag, spec)
		if err != nil {
			return err
		}
		p.agents = append(p.agents, cliAgent{name: ag.Name, spec: spec, opts: *o})
	}
	a.cliProbes = p
	return nil
}

// refresh probes every CLI agent again, in the background, unless a probe
// ran lately or runs now.
func (p *cliProbes) refresh(ctx context.Context) {
	p.mu.Lock()
	if len(p.agents) == 0 || p.running || (!p.at.IsZero() && p.now().Sub(p.at) < cliProbeEvery) {
		p.mu.Unlock()
		return
	}
	p.running = true
	p.mu.Unlock()
	go func() {
		ctx := context.WithoutCancel(ctx)
		results := map[string]model.ProbeResult{}
		for _, ag := range p.agents {
			results[ag.name] = model.Probe(ctx, ag.spec, ag.opts)
		}
		p.mu.Lock()
		p.results, p.at, p.running = results, p.now(), false
		p.mu.Unlock()
	}()
}

// readyz writes one line per CLI agent. A CLI that is not ready does not
// make the instance unready: the other agents answer, and that one's turns
// say what is wrong.
func (p *cliProbes) readyz(w io.Writer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ag := range p.agents {
		r, ok := p.results[ag.name]
		if !ok {
			fmt.Fprintf(w, "cli %s (%s): probing\n", ag.name, ag.spec.Provider)
			continue
		}
		line := fmt.Sprintf("cli %s (%s): %s", ag.name, ag.spec.Provider, r.State)
		if r.Version != "" {
			line += ", " + r.Version
		}
		if r.State != model.ProbeReady && r.Detail != "" {
			line += " (" + redact.String(r.Detail) + ")"
		}
		fmt.Fprintln(w, line)
	}
}

// ProbeCLIs runs the capability probe of every agent that runs on a coding
// CLI, with the settings serve would give it, and returns the results by
// agent name (for `switchboard doctor`). Agents on HTTP APIs are left out.
func ProbeCLIs(ctx context.Context, cfg Config) (map[string]model.ProbeResult, error) {
	cfg.defaults()
	agents, err := config.Load(cfg.ConfigPath, cfg.Env)
	if err != nil {
		return nil, err
	}
	out := map[string]model.ProbeResult{}
	for _, ag := range agents.Agents {
		spec, err := model.ParseSpec(ag.Model)
		if err != nil || !model.IsCLI(spec.Provider) {
			continue
		}
		res, err := ProbeAgent(ctx, cfg, &ag)
		if err != nil {
			return nil, err
		}
		out[ag.Name] = res
	}
	return out, nil
}

// ProbeAgent runs the capability probe of one agent's model with the
// settings serve would give it (for `switchboard doctor`): a CLI backend's
// program, version and login; an HTTP backend reports ready.
func ProbeAgent(ctx context.Context, cfg Config, a *config.Agent) (model.ProbeResult, error) {
	cfg.defaults()
	spec, err := model.ParseSpec(a.Model)
	if err != nil {
		return model.ProbeResult{}, err
	}
	if !model.IsCLI(spec.Provider) {
		return model.Probe(ctx, spec, model.CLIOptions{}), nil
	}
	o, err := cfg.cliOptions(a, spec)
	if err != nil {
		return model.ProbeResult{}, err
	}
	return model.Probe(ctx, spec, *o), nil
}

// modelCredentials resolves an agent's model settings: the CLI settings for
// the CLI backends, the key and endpoint (credentials) for the others.
func (c *Config) modelCredentials() func(a *config.Agent) (model.Credentials, error) {
	keys := credentials(c.Env)
	return func(a *config.Agent) (model.Credentials, error) {
		spec, err := model.ParseSpec(a.Model)
		if err != nil || !model.IsCLI(spec.Provider) {
			return keys(a)
		}
		o, err := c.cliOptions(a, spec)
		if err != nil {
			return model.Credentials{}, err
		}
		return model.Credentials{CLI: o}, nil
	}
}
