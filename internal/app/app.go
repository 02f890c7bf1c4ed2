// Package app wires Switchboard's parts into one running service: the store,
// the agents, the tools, core, the workers, the platforms and the HTTP
// server. cmd/switchboard is flags around it; end-to-end tests use it too.
package app

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/deliver"
	"github.com/switchboardhq/switchboard/bots/mcp"
	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/bots/web/console"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/access"
	"github.com/switchboardhq/switchboard/core/artifact"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/core/compare"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/connection"
	"github.com/switchboardhq/switchboard/core/connection/github"
	"github.com/switchboardhq/switchboard/core/mcpclient"
	"github.com/switchboardhq/switchboard/core/memory"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/core/run/coding"
	"github.com/switchboardhq/switchboard/core/skill"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/headless"
	"github.com/switchboardhq/switchboard/internal/buildinfo"
	"github.com/switchboardhq/switchboard/internal/metrics"
	"github.com/switchboardhq/switchboard/internal/telemetry"
	"github.com/switchboardhq/switchboard/scheduler"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

// Config is everything the service reads from flags and the environment.
type Config struct {
	// LogLevel and LogFormat are the service log's level and format
	// (SWITCHBOARD_LOG_LEVEL, default info; SWITCHBOARD_LOG_FORMAT, default
	// text); the commands' -log-level and -log-format flags override them.
	LogLevel, LogFormat string
	// PgDumpPath and PgRestorePath are the programs backup and restore run
	// for a Postgres store (SWITCHBOARD_PG_DUMP_PATH, default pg_dump;
	// SWITCHBOARD_PG_RESTORE_PATH, default pg_restore).
	PgDumpPath, PgRestorePath string

	Addr        string // SWITCHBOARD_ADDR, default :8080
	DatabaseURL string // DATABASE_URL
	// DatabaseListenURL is a direct connection to the Postgres server for
	// the one LISTEN connection of the wake-ups, when DATABASE_URL goes
	// through a transaction pooler (DATABASE_LISTEN_URL).
	DatabaseListenURL string
	ConfigPath        string // SWITCHBOARD_CONFIG, default ./switchboard.yaml when present
	// DefaultConfigPath is the file read when ConfigPath is empty, if it is
	// there: ./switchboard.yaml when SWITCHBOARD_CONFIG is not set. It is
	// watched from the start, so one created later is loaded by the next
	// reload (the file watcher or SIGHUP).
	DefaultConfigPath string
	APIToken          string // SWITCHBOARD_API_TOKEN
	Concurrency       int    // SWITCHBOARD_CONCURRENCY, default 8: work other than turns (deliveries, commands, scheduled fires) at once
	// TurnConcurrency is how many turns run at once on this instance
	// (SWITCHBOARD_TURN_CONCURRENCY, default 64). Turns have slots of their
	// own, so a delivery never waits behind long turns, and a turn mostly
	// waits on its model, so many fit on one instance.
	TurnConcurrency int
	// LeaseTTL is how long a turn's lease outlives its last heartbeat
	// (SWITCHBOARD_LEASE_TTL, default 15s): another instance takes over a
	// dead one's turns after it.
	LeaseTTL time.Duration
	// ShutdownTimeout is how long Stop lets running turns finish before it
	// cuts them off and releases them (SWITCHBOARD_SHUTDOWN_TIMEOUT, default
	// 10s), when the caller's context sets no earlier deadline.
	ShutdownTimeout time.Duration
	// InstanceID names this instance in leases (SWITCHBOARD_INSTANCE_ID). It
	// must be stable across restarts of one instance, so a restart takes its
	// own leases back at once, and unique among running instances. Default:
	// the host name plus a hash of the database (see DefaultInstanceID).
	// The process holds it while it runs (instance.go): a second process
	// under a live id refuses to start, unless InstanceIDFallback.
	InstanceID string
	// InstanceIDFallback: when InstanceID is held by another live process,
	// run under an id of its own (InstanceID-chat-XXXXXX) instead of
	// refusing to start, and so never take over that process's turns
	// (switchboard chat beside switchboard serve).
	InstanceIDFallback bool
	// BinaryVersion is this binary's release and commit (see
	// buildinfo.Info.Binary), recorded with each migration the store
	// applies and named when a schema is too new for it. Default: what the
	// Go toolchain recorded in the binary.
	BinaryVersion string
	// StoreTimeout bounds how long the start waits for the store to answer
	// (default 15s): a database that accepts connections and never answers
	// stops the start with an error naming DATABASE_URL.
	StoreTimeout time.Duration
	// WorkRetention is how long finished work items are kept before the
	// sweep deletes them (SWITCHBOARD_WORK_RETENTION, default 7 days).
	WorkRetention time.Duration
	// ModelIdleTimeout fails a model stream that sends nothing for this
	// long, as a dropped connection (SWITCHBOARD_MODEL_IDLE_TIMEOUT,
	// default 60s).
	ModelIdleTimeout time.Duration
	// ModelTimeout bounds one model call as a whole, retries included,
	// however steadily the model streams (SWITCHBOARD_MODEL_TIMEOUT, default
	// 10m): at the deadline the turn ends with one clear message.
	ModelTimeout time.Duration
	// MaxReplyBytes caps one model reply (SWITCHBOARD_MAX_REPLY_BYTES,
	// default 262144): past it the call is cancelled and the reply ends
	// with a note that it was cut.
	MaxReplyBytes int

	// AllowedOrigins are the browser origins whose pages may call the API
	// (SWITCHBOARD_ALLOWED_ORIGINS, comma-separated).
	AllowedOrigins []string

	// SessionTTL is how long a session exchanged for an agent key lives
	// (SWITCHBOARD_SESSION_TTL, default 15m).
	SessionTTL time.Duration

	SlackBotToken      string
	SlackAppToken      string
	SlackSigningSecret string
	SlackAPIURL        string

	// The Slack install flow and secrets at rest (see slackinstall.go):
	// SLACK_CLIENT_ID, SLACK_CLIENT_SECRET, SWITCHBOARD_PUBLIC_URL and the
	// keys of SWITCHBOARD_SECRET_KEY.
	SlackInstall

	// The GitHub and Google connections (see connections.go):
	// GITHUB_CLIENT_ID, GOOGLE_CLIENT_ID, their secrets and endpoint
	// overrides.
	Connections

	DiscordBotToken  string
	DiscordPublicKey string
	DiscordAPIURL    string
	DiscordAppID     string
	// Telegram: TELEGRAM_BOT_TOKEN, TELEGRAM_WEBHOOK_SECRET,
	// TELEGRAM_API_URL (see telegram.go).
	Telegram TelegramSettings

	// DiscordCommandGuildID registers the slash commands in one guild
	// (DISCORD_COMMAND_GUILD_ID; over switchboard.yaml's
	// discord.command_guild_id).
	DiscordCommandGuildID string

	// The Matrix bot account (see matrix.go).
	MatrixSettings

	Env    config.Env
	Logger *slog.Logger
	Now    func() time.Time

	// ProfileTTL is how long a person's name and time zone read from Slack
	// or Discord stay fresh (SWITCHBOARD_PROFILE_TTL, default 24h).
	ProfileTTL time.Duration

	// SkillsDir is a folder of platform skills (SWITCHBOARD_SKILLS_DIR),
	// offered to every agent beside the ones the binary ships.
	SkillsDir string

	// MCPConfigPath is the file of outside MCP servers
	// (SWITCHBOARD_MCP_CONFIG); empty: ./mcp-servers.json when present.
	MCPConfigPath string
	// AdminAddr, when set, serves pprof (/debug/pprof/) on a listener of
	// its own (SWITCHBOARD_ADMIN_ADDR, default off). It has no
	// authentication: bind it to loopback or a private network.
	AdminAddr string
	// TracerProvider makes the spans of turns, model calls and tool calls.
	// Nil: the app builds one from the OTEL_* variables in Env (an OTLP
	// exporter when OTEL_EXPORTER_OTLP_ENDPOINT is set, else the no-op
	// provider) and shuts it down in Stop. A caller's own is not shut down.
	TracerProvider trace.TracerProvider
	// MemoryBudget is how long a turn waits for its background memory
	// (SWITCHBOARD_MEMORY_BUDGET, over memory.budget in switchboard.yaml;
	// default 200ms).
	MemoryBudget time.Duration

	// CLI configures the agents that run on the Claude Code or Codex CLI
	// (see cli.go).
	CLI CLISettings
	// ReloadPoll is how often switchboard.yaml and mcp-servers.json are
	// checked for a change, which reloads them (SWITCHBOARD_RELOAD_POLL,
	// default 2s; negative, or "off": never; SIGHUP still reloads).
	ReloadPoll time.Duration
}

// modelOptions are the bounds every model call of the service keeps.
func (c *Config) modelOptions() model.Options {
	return model.Options{IdleTimeout: c.ModelIdleTimeout, Timeout: c.ModelTimeout, MaxReplyBytes: c.MaxReplyBytes}
}

// FromEnv reads the configuration from the environment.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		Addr:                  getenv("SWITCHBOARD_ADDR"),
		DatabaseURL:           getenv("DATABASE_URL"),
		DatabaseListenURL:     strings.TrimSpace(getenv("DATABASE_LISTEN_URL")),
		ConfigPath:            getenv("SWITCHBOARD_CONFIG"),
		APIToken:              getenv("SWITCHBOARD_API_TOKEN"),
		SlackBotToken:         getenv("SLACK_BOT_TOKEN"),
		SlackAppToken:         getenv("SLACK_APP_TOKEN"),
		SlackSigningSecret:    getenv("SLACK_SIGNING_SECRET"),
		SlackAPIURL:           getenv("SLACK_API_URL"),
		DiscordBotToken:       getenv("DISCORD_BOT_TOKEN"),
		DiscordPublicKey:      getenv("DISCORD_PUBLIC_KEY"),
		DiscordAPIURL:         getenv("DISCORD_API_URL"),
		DiscordAppID:          getenv("DISCORD_APPLICATION_ID"),
		DiscordCommandGuildID: strings.TrimSpace(getenv("DISCORD_COMMAND_GUILD_ID")),
		SkillsDir:             getenv("SWITCHBOARD_SKILLS_DIR"),
		Env:                   getenv,
		MCPConfigPath:         mcpConfigPath(getenv),
		AdminAddr:             strings.TrimSpace(getenv("SWITCHBOARD_ADMIN_ADDR")),
		MatrixSettings:        matrixFromEnv(getenv),
	}
	envOr := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	c.LogLevel, c.LogFormat = envOr("SWITCHBOARD_LOG_LEVEL", "info"), envOr("SWITCHBOARD_LOG_FORMAT", "text")
	c.PgDumpPath, c.PgRestorePath = envOr("SWITCHBOARD_PG_DUMP_PATH", "pg_dump"), envOr("SWITCHBOARD_PG_RESTORE_PATH", "pg_restore")
	var err error
	if v := getenv("SWITCHBOARD_CONCURRENCY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 256 {
			return c, fmt.Errorf("SWITCHBOARD_CONCURRENCY: %q must be a number from 1 to 256", v)
		}
		c.Concurrency = n
	}
	if v := getenv("SWITCHBOARD_TURN_CONCURRENCY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1024 {
			return c, fmt.Errorf("SWITCHBOARD_TURN_CONCURRENCY: %q must be a number from 1 to 1024", v)
		}
		c.TurnConcurrency = n
	}
	if v := getenv("SWITCHBOARD_MODEL_IDLE_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("SWITCHBOARD_MODEL_IDLE_TIMEOUT: %q must be a positive duration such as 60s or 2m", v)
		}
		c.ModelIdleTimeout = d
	}
	if v := getenv("SWITCHBOARD_MODEL_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("SWITCHBOARD_MODEL_TIMEOUT: %q must be a positive duration such as 10m or 90s", v)
		}
		c.ModelTimeout = d
	}
	if v := getenv("SWITCHBOARD_MAX_REPLY_BYTES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1024 {
			return c, fmt.Errorf("SWITCHBOARD_MAX_REPLY_BYTES: %q must be a number of bytes of at least 1024, such as 262144", v)
		}
		c.MaxReplyBytes = n
	}
	if v := getenv("SWITCHBOARD_ALLOWED_ORIGINS"); v != "" {
		origins, err := web.ParseOrigins(v)
		if err != nil {
			return c, fmt.Errorf("SWITCHBOARD_ALLOWED_ORIGINS: %w", err)
		}
		c.AllowedOrigins = origins
	}
	for _, d := range []struct {
		name string
		into *time.Duration
	}{{"SWITCHBOARD_LEASE_TTL", &c.LeaseTTL}, {"SWITCHBOARD_SHUTDOWN_TIMEOUT", &c.ShutdownTimeout}} {
		v := getenv(d.name)
		if v == "" {
			continue
		}
		n, err := time.ParseDuration(v)
		if err != nil || n < time.Second {
			return c, fmt.Errorf("%s: %q must be a duration of at least 1s, such as 15s or 1m", d.name, v)
		}
		*d.into = n
	}
	if v := getenv("SWITCHBOARD_WORK_RETENTION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < store.MinWorkRetention {
			return c, fmt.Errorf("SWITCHBOARD_WORK_RETENTION: %q must be a duration of at least %s, such as 24h or 168h", v, store.MinWorkRetention)
		}
		c.WorkRetention = d
	}
	if v := getenv("SWITCHBOARD_MEMORY_BUDGET"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Millisecond || d > 10*time.Second {
			return c, fmt.Errorf("SWITCHBOARD_MEMORY_BUDGET: %q must be a duration from 1ms to 10s, such as 200ms", v)
		}
		c.MemoryBudget = d
	}
	if v := getenv("SWITCHBOARD_PROFILE_TTL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Minute {
			return c, fmt.Errorf("SWITCHBOARD_PROFILE_TTL: %q must be a duration of at least 1m, such as 24h", v)
		}
		c.ProfileTTL = d
	}
	if c.ReloadPoll, err = reloadPollFromEnv(getenv); err != nil {
		return c, err
	}
	c.InstanceID = strings.TrimSpace(getenv("SWITCHBOARD_INSTANCE_ID"))
	if err := c.SlackInstall.fromEnv(getenv); err != nil {
		return c, err
	}
	c.Connections.fromEnv(getenv)
	c.Telegram.fromEnv(getenv)
	if err := c.CLI.fromEnv(getenv); err != nil {
		return c, err
	}
	if c.SessionTTL, err = sessionTTLFromEnv(getenv); err != nil {
		return c, err
	}
	if c.ConfigPath == "" {
		c.DefaultConfigPath = "switchboard.yaml"
		if _, err := os.Stat(c.DefaultConfigPath); err == nil {
			c.ConfigPath = c.DefaultConfigPath
		}
	}
	return c, nil
}

// binaryVersion is BinaryVersion, or the build's own when it is empty.
func (c Config) binaryVersion() string {
	if c.BinaryVersion != "" {
		return c.BinaryVersion
	}
	return buildinfo.Read(buildinfo.Info{}).Binary()
}

func (c *Config) defaults() {
	if c.Addr == "" {
		c.Addr = ":8080"
	}
	if c.Concurrency == 0 {
		c.Concurrency = 8
	}
	if c.TurnConcurrency == 0 {
		c.TurnConcurrency = 64
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = 15 * time.Second
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = 10 * time.Second
	}
	if c.InstanceID == "" {
		c.InstanceID = DefaultInstanceID(c.DatabaseURL)
	}
	c.BinaryVersion = c.binaryVersion()
	if c.StoreTimeout == 0 {
		c.StoreTimeout = DefaultStoreTimeout
	}
	if c.Env == nil {
		c.Env = os.Getenv
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// secrets is every secret value the service is configured with, for
// redact.AddSecrets: provider keys (the agents' own key variables included),
// platform tokens, the API token and the database password. Whatever shape
// they have, they are then kept out of logs, errors and chat messages.
func (c *Config) secrets(agents *config.Config) []string {
	out := []string{
		c.APIToken, c.SlackBotToken, c.SlackAppToken, c.SlackSigningSecret, c.DiscordBotToken, c.SlackClientSecret,
		c.Env("ANTHROPIC_API_KEY"), c.Env("OPENAI_API_KEY"), c.CLI.MCPToken, c.Env("SWITCHBOARD_OIDC_CLIENT_SECRET"),
	}
	for _, a := range agents.Agents {
		if name := a.KeyEnv(); name != "" {
			out = append(out, c.Env(name))
		}
	}
	if u, err := url.Parse(c.DatabaseURL); err == nil {
		if pw, ok := u.User.Password(); ok {
			out = append(out, pw)
		}
		out = append(out, u.Query().Get("password"))
	}
	return out
}

// DefaultInstanceID is the instance id when SWITCHBOARD_INSTANCE_ID is not
// set: the host name plus a short hash of the database it serves (the
// absolute file for SQLite), so that the same host restarting against the
// same database is the same instance. A second process on the host and
// database (switchboard chat beside serve, or a second serve) finds the id
// held (see instance.go): serve refuses to start, chat takes an id of its
// own. Two serve processes on one host sharing one database must each set
// SWITCHBOARD_INSTANCE_ID.
func DefaultInstanceID(databaseURL string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "switchboard"
	}
	where := strings.TrimSpace(databaseURL)
	if t, err := dial.Parse(databaseURL); err == nil && t.Driver == "sqlite" {
		if abs, err := filepath.Abs(t.Path); err == nil {
			where = "sqlite:" + abs
		}
	}
	sum := sha256.Sum256([]byte(where))
	return host + "-" + hex.EncodeToString(sum[:4])
}

// App is a wired service.
type App struct {
	cfg Config
	log *slog.Logger
	// artifacts make the links to artifacts' pages (a coding step's diff).
	artifacts *artifact.Artifacts
	Store     store.Store
	Service   *core.Service
	Registry  *tool.Registry
	Deliverer *deliver.Deliverer
	Worker    *core.Worker
	Scheduler *scheduler.Scheduler
	Commands  *command.Handler // scheduling commands, from every platform
	Access    *access.Gate     // who may talk to agents, in front of Submit
	People    *core.Directory  // the people behind platform users
	Adapters  []bots.Adapter
	Skills    *skill.Library     // the stored skills, every layer
	MCP       *mcpclient.Manager // the outside MCP servers and their tools
	API       *web.API
	Memory    *memory.Memory // the agents' notes and their upkeep
	// Connections are the GitHub and Google accounts agents act with; nil
	// when neither provider is configured.
	Connections *connection.Manager
	Mux         *http.ServeMux
	Metrics     *metrics.Metrics // the Prometheus registry behind GET /metrics
	// Bridges relays the model calls of runs_on: bridge agents to the
	// bridges connected to this instance.
	Bridges *core.Bridges

	signIn *web.SignIn // the web console's sign-in links and sessions

	srv       *http.Server
	listener  net.Listener
	mcpServer *mcp.Server
	cliProbes *cliProbes    // the CLI agents' capability probes, for /readyz
	sandbox   sandboxState  // what became of run_code's sandbox at start, for /readyz
	instance  *instanceHold // this process's hold on its instance id
	admin     *http.Server
	adminLn   net.Listener
	tracing   *telemetry.Tracing // built here from the environment, or nil
	stops     []func(context.Context) error
	mu        sync.Mutex
	reload    reloader // see reload.go
	// agents are the declared agents as last loaded (the start, then each
	// reload), for the parts built before core.
	agents atomic.Pointer[config.Config]
	// mcpMu guards MCP and mcpConfig, which a reload replaces.
	mcpMu        sync.Mutex
	mcpConfig    *mcpclient.Config
	mcpOAuth     *mcpclient.OAuthOptions // nil: no OAuth to MCP servers (mcp.go)
	mcpTokens    *mcpclient.StoreTokens  // the MCP servers' OAuth grants; nil with mcpOAuth
	mcpCallbacks *mcpclient.Callbacks    // the OAuth redirects' waits; nil with mcpOAuth
	started      atomic.Bool             // the MCP clients run: a reload replaces them
}

// Open opens and migrates the store, loads the agents and builds every
// part. Nothing runs until Start.
func Open(ctx context.Context, cfg Config) (*App, error) {
	cfg.defaults()
	log := cfg.Logger
	// The database URL is checked before anything else starts.
	if _, err := dial.Parse(cfg.DatabaseURL); err != nil {
		return nil, err
	}
	if err := dial.CheckListenURL(cfg.DatabaseURL, cfg.DatabaseListenURL); err != nil {
		return nil, err
	}
	agents, err := config.Load(cfg.ConfigPath, cfg.Env)
	if err != nil {
		return nil, err
	}
	redact.AddSecrets(cfg.secrets(agents)...)
	mcpServers, err := cfg.loadMCP()
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	version, err := st.Migrate(ctx)
	if errors.Is(err, store.ErrSchemaTooNew) {
		_ = st.Close()
		return nil, err // says it all: the schema, who moved it on, what to run
	}
	if err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("migrating: %w", err)
	}
	log.InfoContext(ctx, "store ready", "dialect", st.Dialect(), "schema_version", version)
	// The instance id is held before anything leases under it: the worker
	// takes back at start what the id holds, which is right only when the
	// process before it under the id is gone.
	hold, err := acquireInstance(ctx, instanceOptions{
		Store: st, ID: cfg.InstanceID, Fallback: cfg.InstanceIDFallback, TTL: cfg.LeaseTTL,
		Logger: log.With("part", "instance"), Now: cfg.Now,
	})
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	cfg.InstanceID = hold.ID()
	a := &App{cfg: cfg, log: log, Store: st, Mux: http.NewServeMux(), instance: hold}
	fail := func(err error) (*App, error) {
		_ = hold.release(ctx)
		_ = st.Close()
		return nil, err
	}
	if a.cfg.TracerProvider == nil {
		a.tracing, err = telemetry.NewTracing(ctx, telemetry.TracingOptions{Getenv: cfg.Env, InstanceID: cfg.InstanceID})
		if err != nil {
			return fail(err)
		}
		a.cfg.TracerProvider = a.tracing.Provider
		if a.tracing.Enabled {
			log.InfoContext(ctx, "exporting traces over OTLP")
		}
	}
	if err := a.build(ctx, agents, mcpServers); err != nil {
		_ = a.tracing.Shutdown(ctx)
		return fail(err)
	}
	return a, nil
}

func (a *App) build(ctx context.Context, agents *config.Config, mcpServers *mcpclient.Config) error {
	cfg := a.cfg
	a.agents.Store(agents)
	var err error

	a.Registry = tool.NewRegistry()
	if err := headless.RegisterBuiltins(a.Registry); err != nil {
		return fmt.Errorf("registering built-in tools: %w", err)
	}
	if err := core.RegisterPostResult(a.Registry, cards.DefaultLibrary()); err != nil {
		return fmt.Errorf("registering post_result: %w", err)
	}
	if err := core.RegisterPersonalityTools(a.Registry, core.NewPersonalities(a.Store, agents, cfg.Now)); err != nil {
		return err
	}
	if err := core.RegisterDone(a.Registry); err != nil {
		return fmt.Errorf("registering done: %w", err)
	}
	if err := a.registerArtifacts(cfg); err != nil {
		return err
	}
	reg := a.Registry
	a.Metrics, err = metrics.New(metrics.Options{Store: a.Store, Logger: a.log.With("part", "metrics"), Now: cfg.Now})
	if err != nil {
		return err
	}
	if err := a.buildMCP(mcpServers); err != nil {
		return err
	}
	if err := a.buildSkills(ctx, agents); err != nil {
		return err
	}
	if err := a.buildMemory(agents); err != nil {
		return err
	}
	if err := a.buildCLIProbes(agents); err != nil {
		return err
	}
	// The API is built last; the start of a connection authenticates
	// personal tokens through it.
	var api *web.API
	if err := a.buildConnections(func() *web.API { return api }); err != nil {
		return err
	}
	// Who may talk to agents: decided in front of Submit, before anything
	// of a refused message is stored; !approve goes to the gate.
	a.Access, err = access.New(access.Options{Store: a.Store, Access: &agents.Access, Now: cfg.Now, Logger: a.log.With("part", "access")})
	if err != nil {
		return err
	}
	// The deliverer needs the platforms, which need the service: core gets
	// a forwarder that is pointed at the deliverer once it is built below.
	fwd := &deliverer{}
	// People: each platform adds its profile reader in buildPlatforms.
	a.People, err = core.NewDirectory(core.DirectoryOptions{
		Store: a.Store, TTL: cfg.ProfileTTL, Logger: a.log.With("part", "people"), Now: cfg.Now,
		// Every person gets exactly one personal workspace, made with them.
		PersonCreated: func(ctx context.Context, q store.Queries, p *store.Person) error {
			_, err := workspace.EnsurePersonalWorkspace(ctx, q, p.ID, p.DisplayName)
			return err
		},
	})
	if err != nil {
		return err
	}
	// Live turn events reach the viewers of every instance sharing the
	// database (one SQLite process has no other).
	hub := core.NewHub()
	if a.Store.Dialect() != "sqlite" {
		if hub, err = core.NewSharedHub(core.HubOptions{Store: a.Store, Instance: cfg.InstanceID, Logger: a.log.With("part", "hub")}); err != nil {
			return err
		}
	}
	// Runs' coding steps keep their repositories' mirrors and worktrees in
	// the data folder; an owner/name repository goes through GitHub.
	repos, err := coding.New(coding.Options{Root: cmp.Or(cfg.CLI.DataDir, "data"), Logger: a.log.With("part", "coding")})
	if err != nil {
		return fmt.Errorf("the data folder (SWITCHBOARD_DATA_DIR): %w", err)
	}
	var codeHost core.CodeHost
	if a.Connections != nil && cfg.Connections.GitHubClientID != "" {
		codeHost = github.NewHost(a.Connections)
	}
	auditSinks, err := a.buildAuditSinks(ctx, agents)
	if err != nil {
		return err
	}
	a.Bridges, err = core.NewBridges(core.BridgesOptions{
		Store: a.Store, Settings: func() config.Bridge { return a.agents.Load().Bridge },
		Logger: a.log.With("part", "bridges"), Now: cfg.Now, Instance: cfg.InstanceID,
	})
	if err != nil {
		return err
	}
	a.Service, err = core.New(core.Options{
		AuditSinks:    auditSinks,
		Backend:       a.backend(cfg),
		Coding:        repos,
		CodeHost:      codeHost,
		ArtifactLink:  a.artifacts.Link,
		WorkRetention: cfg.WorkRetention,
		Hub:           hub,
		People:        a.People,
		Deliverer:     fwd,
		Store:         a.Store,
		Agents:        agents,
		Registry:      reg,
		Tools:         a.ToolsFor,
		Skills:        a.Skills,
		Memory:        a.Memory,
		Logger:        a.log,
		Now:           cfg.Now,
		LeaseTTL:      cfg.LeaseTTL,
		Model:         cfg.modelOptions(),
		// Keys and endpoints come from the settings, never from core.
		Credentials: cfg.modelCredentials(),
		RunProgress: fwd, // runs show their progress where they came from
		WorkerID:    cfg.InstanceID,
		// Typed scheduling commands ("!remind in 2h -- call Ana") go to the
		// command handler, built with the scheduler just below; Discord's
		// /remind reaches the same handler (buildPlatforms).
		CommandFunc: a.Access.Commands(func(ctx context.Context, in *core.Inbound, cmd *core.Command) (string, error) {
			return a.Commands.Answer(ctx, in, cmd)
		}),
		// A reminder's Snooze and Done buttons are the scheduler's, built
		// just below.
		ReminderActFunc: func(ctx context.Context, act *core.Action) (*core.ActionResult, error) {
			return a.Scheduler.ReminderAct(ctx, act)
		},
		// The guard: policy levels, who decides and how long they have
		// (switchboard.yaml's policy, workspaces and approvals).
		Policies:    agents.Policies(),
		Deciders:    deciders(agents.Approvals),
		Admins:      yamlAdmins(agents.Approvals),
		ApprovalTTL: agents.Approvals.ExpiryDuration(),
		Gate:        a.Access,
		// Metrics through core's Observer; spans through the OpenTelemetry
		// API (see core/observe.go).
		Observer:       a.Metrics,
		TracerProvider: cfg.TracerProvider,
	})
	if err != nil {
		return err
	}
	if err := a.Service.Start(ctx); err != nil {
		return err
	}
	a.Metrics.SetBudgets(a.Service.Budgets)
	// resolve_side_thread and delegate act through the service.
	if err := a.Service.RegisterTeamTools(reg); err != nil {
		return fmt.Errorf("registering the team tools: %w", err)
	}
	// plan_run turns a lead's plan into a run; the worktree tools are a
	// model agent's hands in a coding step.
	if err := a.Service.RegisterRunTools(reg); err != nil {
		return fmt.Errorf("registering the run tools: %w", err)
	}
	if err := coding.RegisterTools(reg); err != nil {
		return fmt.Errorf("registering the worktree tools: %w", err)
	}
	if err := a.registerWebTools(reg, agents.Web); err != nil {
		return fmt.Errorf("config %s: %w", cfg.ConfigPath, err)
	}
	if err := a.buildSandbox(ctx, agents, reg); err != nil {
		return err
	}
	browseDialer, err := browseDial(agents, a.log.With("part", "browse"))
	if err != nil {
		return fmt.Errorf("config %s: %w", cfg.ConfigPath, err)
	}
	if err := registerBrowse(reg, agents, browseDialer, a.log.With("part", "browse")); err != nil {
		return fmt.Errorf("config %s: %w", cfg.ConfigPath, err)
	}
	if err := scheduler.ValidateConfig(&agents.Schedules); err != nil {
		return fmt.Errorf("config %s: %w", cfg.ConfigPath, err)
	}
	a.Scheduler, err = scheduler.New(scheduler.Options{
		Store: a.Store, Service: a.Service, Registry: reg, Logger: a.log.With("part", "scheduler"),
		InstanceID: a.Service.WorkerID(), Config: &agents.Schedules, Jobs: a.memoryJobs(),
	})
	if err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	if err := a.Scheduler.RegisterTools(reg); err != nil {
		return fmt.Errorf("registering scheduler tools: %w", err)
	}
	if err := a.buildSignIn(); err != nil {
		return err
	}
	a.Commands, err = command.New(command.Options{
		Schedules: a.Scheduler, DefaultAgent: agents.Default().Name, Now: cfg.Now,
		Grants:       a.Service,
		Links:        a.People,
		Participants: a.Service,
		Rulebooks:    a.Service,
		Connections:  a.connectionCommands(),
		Runs:         a.Service,
		Logins:       a.webLogins(),
	})
	if err != nil {
		return fmt.Errorf("commands: %w", err)
	}
	for _, ag := range agents.Agents {
		switch {
		case ag.Model == config.DemoModel:
			a.log.WarnContext(ctx, "agent runs on the offline demo model, not a real one: set ANTHROPIC_API_KEY, OPENAI_API_KEY or SWITCHBOARD_MODEL", "agent", ag.Name)
		case core.IsDemo(&ag):
			a.log.WarnContext(ctx, "agent runs on a scripted model that replays a file, not a real one", "agent", ag.Name, "model", ag.Model)
		}
	}

	if err := a.buildPlatforms(); err != nil {
		return err
	}
	a.Deliverer, err = deliver.New(deliver.Options{
		Store: a.Store, Adapters: a.Adapters, Logger: a.log.With("part", "deliver"), Now: cfg.Now, Observer: a.Metrics,
		// A side thread's marker links to its conversation over the API.
		LinkFunc: conversationLink(cfg.Env("SWITCHBOARD_PUBLIC_URL")),
		// Replies to voice notes are spoken too, for agents that say so.
		SpeakReplyFunc: a.speakReply,
		IdentityFunc: func(name string) *bots.Identity {
			ag, ok := a.Service.Agents().Find(name) // as last reloaded
			if !ok {
				return nil
			}
			id := &bots.Identity{Name: ag.DisplayName, IconURL: ag.IconURL}
			if id.Name == "" {
				id.Name = ag.Name
			}
			return id
		},
	})
	if err != nil {
		return err
	}
	fwd.d = a.Deliverer
	// Every tool is registered by now (MCP servers' by their declaration).
	if err := checkAgentTools(agents, reg, mcpServers); err != nil {
		return fmt.Errorf("config %s: %w", cfg.ConfigPath, err)
	}
	handlers := core.NewHandlers()
	core.AddHandler(handlers, a.Service.RunTurn)
	core.AddHandler(handlers, a.Deliverer.HandleDeliver)
	core.AddHandler(handlers, a.Deliverer.HandleSideThreadMarker)
	core.AddHandler(handlers, a.Deliverer.HandleApprovalCard)
	core.AddHandler(handlers, a.Service.RunCommand)
	core.AddHandler(handlers, a.Service.RunInbound)
	core.AddHandler(handlers, a.Service.RunSummarize)
	core.AddHandler(handlers, a.Service.RunDelegationResult)
	core.AddHandler(handlers, a.Service.DeliverAudit)
	core.AddHandler(handlers, a.Service.RunAskAnswer)
	a.Service.AddRunHandlers(handlers)
	a.Scheduler.AddHandlers(handlers)
	a.Memory.AddHandlers(handlers)
	a.Worker, err = core.NewWorker(core.WorkerOptions{
		Store:       a.Store,
		WorkerID:    a.Service.WorkerID(),
		Handlers:    handlers,
		Concurrency: cfg.Concurrency,
		Lanes:       []core.Lane{{Kinds: []string{core.WorkTurn}, Concurrency: cfg.TurnConcurrency}},
		LeaseTTL:    cfg.LeaseTTL,
		Logger:      a.log,
		Now:         cfg.Now,
		Observer:    a.Metrics,
	})
	if err != nil {
		return err
	}

	keys, err := newKeys(a.Store, a.agents.Load, cfg)
	if err != nil {
		return err
	}
	api, err = web.New(web.Options{Service: a.Service, Token: cfg.APIToken, AllowedOrigins: cfg.AllowedOrigins, Logger: a.log, Grants: a.Service, Keys: keys, Pairings: a.Access,
		Personalities: a.Service.Personalities(), Skills: a.Skills, Rulebooks: a.Service, Connections: a.webConnections(), Runs: a.Service,
		Compare: func(ctx context.Context, req *web.CompareRequest) ([]compare.Result, error) {
			return Compare(ctx, a.cfg, req)
		},
		SignIn: a.signIn, AgentsFunc: a.agentList, Actor: a.Service, Schedules: a.Scheduler, Sessions: a.Service, Bridges: a.Bridges, Voice: a.Service,
		MCPStatus: func() []mcpclient.Status { return a.mcpNow().Status() }, ConfigStatus: a.ReloadStatus})
	if err != nil {
		return err
	}
	api.Routes(a.Mux)
	console.Routes(a.Mux)
	a.API = api
	if err := a.buildMCPServer(api); err != nil {
		return err
	}
	a.Mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok\n"))
	})
	a.Mux.HandleFunc("GET /readyz", a.readyz)
	a.Mux.Handle("GET /metrics", web.RequireToken(cfg.APIToken, a.Metrics.Handler()))
	return nil
}

// readyz answers 200 when the database answers and this binary may run on
// its schema: the one it ships, or a newer one that keeps it working (a
// rolling upgrade's newer release migrated it). An older schema, or one a
// newer release contracted past this binary, answers 503.
func (a *App) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	w.Header().Set("Content-Type", "text/plain")
	if err := a.Store.Ping(ctx); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("database unreachable\n"))
		return
	}
	schema, err := a.Store.SchemaState(ctx)
	switch {
	case err != nil:
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintf(w, "reading the schema version: %s\n", redact.String(err.Error()))
		return
	case schema.Applied < schema.Latest:
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintf(w, "schema version %d, want %d\n", schema.Applied, schema.Latest)
		return
	case schema.Err() != nil:
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintf(w, "%s\n", schema.Err())
		return
	}
	// A store that answers reads may still refuse every write (a full
	// disk): the instance lease heartbeat is the write probe.
	if err := a.instance.writable(ctx, time.Second); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintf(w, "store cannot write: %s\n", redact.String(err.Error()))
		return
	}
	// A store that answers pings but refuses claims (a pooler rejecting the
	// session, a permission missing) leaves this instance unable to work.
	if a.Worker != nil {
		if since, err := a.Worker.ClaimHealth(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = fmt.Fprintf(w, "worker cannot claim work since %s: %s\n", since.UTC().Format(time.RFC3339), redact.String(err.Error()))
			return
		}
	}
	if schema.Newer() {
		_, _ = fmt.Fprintf(w, "ready: %s schema %d, newer than this binary's %d (applied by %s) and compatible with it\n",
			a.Store.Dialect(), schema.Applied, schema.Latest, cmp.Or(schema.AppliedBy, "an unknown version"))
	} else {
		_, _ = fmt.Fprintf(w, "ready: %s schema %d\n", a.Store.Dialect(), schema.Applied)
	}
	a.mcpReadyz(w)
	a.cliProbes.refresh(r.Context())
	a.cliProbes.readyz(w)
	a.sandbox.readyz(w)
	a.slackRenewalsReadyz(ctx, w)
	a.bridgesReadyz(w)
	// A refused reload leaves the service running on the configuration it
	// had: ready, but the operator should know.
	if st := a.ReloadStatus(); st.LastError != "" {
		_, _ = fmt.Fprintf(w, "config: last reload refused at %s: %s\n", st.ErrorAt.Format(time.RFC3339), st.LastError)
	}
}

// Start runs the workers, the platforms and the HTTP server (when Addr is
// not "-").
func (a *App) Start(ctx context.Context) error {
	// Stopped in reverse: the worker drains first, while the platforms can
	// still deliver what its turns finish, and the hub relays their last
	// events.
	if err := a.Service.Hub().Start(ctx); err != nil {
		return fmt.Errorf("starting the live event hub: %w", err)
	}
	a.onStop(a.Service.Hub().Stop)
	for _, ad := range a.Adapters {
		if err := ad.Start(ctx); err != nil {
			return fmt.Errorf("starting %s: %w", ad.Name(), err)
		}
		a.onStop(soft(ad.Stop))
	}
	if err := a.Scheduler.Start(ctx); err != nil {
		return fmt.Errorf("starting scheduler: %w", err)
	}
	a.onStop(soft(a.Scheduler.Stop))
	if err := a.startMCP(ctx); err != nil {
		return err
	}
	a.cliProbes.refresh(ctx)
	if err := a.Worker.Start(ctx); err != nil {
		return err
	}
	a.onStop(a.Worker.Stop)
	a.checkWakeups(ctx)
	a.startWatch(ctx)
	if err := a.startAdmin(ctx); err != nil {
		return err
	}
	if a.cfg.Addr == "-" {
		return nil
	}
	ln, err := net.Listen("tcp", a.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s (SWITCHBOARD_ADDR): %w", a.cfg.Addr, err)
	}
	a.listener = ln
	// The platforms' endpoints have their answer time observed: the ack.
	// One access log line per request (accesslog.go).
	a.srv = &http.Server{Handler: a.Metrics.Acks(accessLog(a.log.With("part", "http"), a.cfg.Now, a.Mux)), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := a.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.ErrorContext(ctx, "http server", "error", err)
		}
	}()
	a.log.InfoContext(ctx, "listening", "addr", ln.Addr().String(), "console", consoleURL(a.cfg.Env("SWITCHBOARD_PUBLIC_URL"), ln.Addr()))
	return nil
}

// consoleURL is where the web console answers: under SWITCHBOARD_PUBLIC_URL
// when set, else on the listener (a wildcard address as loopback, where a
// browser on this host reaches it).
func consoleURL(publicURL string, addr net.Addr) string {
	if base := strings.TrimRight(strings.TrimSpace(publicURL), "/"); base != "" {
		return base + "/"
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String() + "/"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}

// ShutdownTimeout is how long Stop lets running turns finish.
func (a *App) ShutdownTimeout() time.Duration { return a.cfg.ShutdownTimeout }

// InstanceID is this instance's name in leases: the configured one, or,
// with InstanceIDFallback, one of its own when that was held.
func (a *App) InstanceID() string { return a.cfg.InstanceID }

// Lost is closed when another process took this instance id, having
// presumed this one dead (its heartbeats failed for longer than the lease
// TTL): the process should stop, as its work is being taken over.
func (a *App) Lost() <-chan struct{} { return a.instance.Lost() }

// Addr is the address the HTTP server listens on, once started.
func (a *App) Addr() string {
	if a.listener == nil {
		return ""
	}
	return a.listener.Addr().String()
}

func (a *App) onStop(f func(context.Context) error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stops = append(a.stops, f)
}

// soft adapts a part whose Stop takes no context.
func soft(stop func()) func(context.Context) error {
	return func(context.Context) error { stop(); return nil }
}

// Stop shuts everything down in reverse order and closes the store. Running
// turns get until ctx's deadline, or ShutdownTimeout when that comes first,
// to finish; then they are cut off, keeping what they committed, and their
// leases released, so the next instance picks them up at once. The error
// says what could not stop cleanly.
func (a *App) Stop(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.ShutdownTimeout)
	defer cancel()
	var errs []error
	if a.mcpServer != nil {
		_ = a.mcpServer.Stop(ctx)
	}
	if a.API != nil {
		a.API.CloseStreams() // followers reconnect; the shutdown need not wait for them
	}
	if a.srv != nil {
		hctx, hcancel := context.WithTimeout(ctx, 5*time.Second)
		if err := a.srv.Shutdown(hctx); err != nil {
			errs = append(errs, fmt.Errorf("stopping the HTTP server: %w", err))
		}
		hcancel()
	}
	a.mu.Lock()
	stops := a.stops
	a.stops = nil
	a.mu.Unlock()
	for i := len(stops) - 1; i >= 0; i-- {
		if err := stops[i](ctx); err != nil {
			errs = append(errs, err)
		}
	}
	// Everything leased under the id is released by now: the id goes last,
	// so a restart takes it at once.
	if err := a.instance.release(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := a.Store.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing the store: %w", err))
	}
	if a.admin != nil {
		if err := a.admin.Close(); err != nil {
			errs = append(errs, fmt.Errorf("stopping the admin server: %w", err))
		}
	}
	// Last: the spans of the turns that just finished are exported.
	if err := a.tracing.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("flushing traces: %w", err))
	}
	return errors.Join(errs...)
}

// ToolsFor lists the tools the model is offered in a conversation of
// contextName: the registry's tools as the context can run them (headless),
// with the scheduled-run tools only in the scheduler's own runs.
func (a *App) ToolsFor(contextName tool.ContextName) []*tool.Tool {
	return scheduler.Offered(contextName, headless.ToolsFor(a.Registry, contextName))
}

// conversationLink is where a conversation is read over the API: under
// publicURL (SWITCHBOARD_PUBLIC_URL) when it is set, else nowhere (the
// marker shows the conversation's id).
func conversationLink(publicURL string) func(uuid.UUID) string {
	base := strings.TrimRight(strings.TrimSpace(publicURL), "/")
	return func(id uuid.UUID) string {
		if base == "" {
			return ""
		}
		return base + "/api/conversations/" + id.String() + "/entries"
	}
}

// deliverer forwards core's delivery calls to the deliverer, which is built
// after core (it needs the platforms, which need core).
type deliverer struct{ d *deliver.Deliverer }

func (f *deliverer) OpenTurn(ctx context.Context, conv *store.Conversation, item *store.WorkItem, agent string) (core.TurnDelivery, error) {
	if f.d == nil {
		return nil, nil
	}
	return f.d.OpenTurn(ctx, conv, item, agent)
}

// ShowRun forwards a run's progress to delivery once it is built.
func (f *deliverer) ShowRun(ctx context.Context, v *core.RunView) error {
	if f.d == nil {
		return nil
	}
	return f.d.ShowRun(ctx, v)
}
