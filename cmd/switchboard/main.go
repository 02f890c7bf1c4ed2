// Command switchboard runs Switchboard: `serve` (the service), `chat` (talk
// to an agent in the terminal through the same engine and store),
// `migrate` (apply the schema and print its version), `backup` and
// `restore`, `audit` (list the guarded tool calls) and more (see usage).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/switchboardhq/switchboard/bots/terminal"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/telemetry"
	"github.com/switchboardhq/switchboard/store/dial"
)

// usage (commands.go) is the top-level usage, built from the commands table.

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "switchboard:", redact.String(err.Error()))
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	cmd, args := args[0], args[1:]
	// version reads no settings: it answers even where the environment is
	// incomplete or wrong.
	if cmd == "version" || cmd == "-version" || cmd == "--version" {
		return versionCommand(args, stdout, stderr)
	}
	cfg, err := app.FromEnv(getenv)
	if err != nil {
		return err
	}
	cfg.BinaryVersion = readBuildInfo().Binary()
	if cmd == "keys" || cmd == "tokens" {
		return keysCommand(ctx, cmd, args, cfg, stdout, stderr)
	}
	if cmd == "personality" {
		return personalityCommand(ctx, args, cfg, stdin, stdout, stderr)
	}
	if cmd == "skills" {
		return skillsCommand(ctx, args, cfg, stdout, stderr)
	}
	if cmd == "mcp" {
		return mcpCommand(ctx, args, cfg, stdout, stderr)
	}
	if cmd == "doctor" {
		return doctorCommand(ctx, args, cfg, stdout, stderr)
	}
	if cmd == "compare" {
		return compareCommand(ctx, args, cfg, stdout, stderr)
	}
	if cmd == "bench" {
		return benchCommand(ctx, args, cfg, stdout, stderr)
	}
	if cmd == "budgets" {
		return budgetsCommand(ctx, args, cfg, stdout, stderr)
	}
	if cmd == "sessions" {
		return sessionsCommand(ctx, args, cfg, stdout, stderr)
	}
	if cmd == "audit" && len(args) > 0 && args[0] == "export" {
		return auditExportCommand(ctx, args[1:], cfg, stdout, stderr)
	}
	if cmd == "installs" {
		return installsCommand(ctx, args, cfg, stdout, stderr)
	}
	if cmd == "runs" {
		return runsCommand(ctx, args, cfg, stdin, stdout, stderr)
	}
	if cmd == "bridge" {
		return bridgeCommand(ctx, args, cfg, getenv, stdout, stderr)
	}
	if cmd == "healthcheck" {
		return healthcheckCommand(ctx, args, cfg, stdout, stderr)
	}
	if cmd == "backup" || cmd == "restore" {
		return backupCommand(ctx, cmd, args, cfg, stdout, stderr)
	}
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.DatabaseURL, "database-url", cfg.DatabaseURL, "store: postgres://..., sqlite:PATH, or empty for "+dial.DefaultSQLitePath+" (DATABASE_URL)")
	var grantsCmd grantsArgs
	var peopleCmdArgs peopleArgs // people forget PERSON [-delete-messages]
	logLevel := fs.String("log-level", cfg.LogLevel, "debug, info, warn or error (SWITCHBOARD_LOG_LEVEL)")
	logFormat := fs.String("log-format", cfg.LogFormat, "text or json (SWITCHBOARD_LOG_FORMAT)")
	switch cmd {
	case "serve":
		fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "HTTP listen address, default :8080 (SWITCHBOARD_ADDR)")
		fs.StringVar(&cfg.ConfigPath, "config", cfg.ConfigPath, "agents file (SWITCHBOARD_CONFIG)")
	case "chat":
		fs.StringVar(&cfg.ConfigPath, "config", cfg.ConfigPath, "agents file (SWITCHBOARD_CONFIG)")
	case "migrate", "rotate-key", "pairing":
	case "grants":
		// The subcommand comes first: grants list -workspace T…, grants revoke ID.
		if len(args) == 0 {
			return errors.New("grants: say list or revoke ID")
		}
		grantsCmd.sub, args = args[0], args[1:]
		fs.StringVar(&grantsCmd.workspace, "workspace", "", "list only this workspace's grants (a workspace id, or a Slack team or Discord guild id)")
		fs.BoolVar(&grantsCmd.revoked, "revoked", false, "list revoked grants too")
	case "workspaces", "agents":
	case "people":
		// Flags may follow the person: people forget PERSON -delete-messages.
		fs.BoolVar(&peopleCmdArgs.deleteMessages, "delete-messages", false, "also delete the text of what the person wrote (their entries show \"[deleted]\")")
	case "audit", "usage":
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", cmd)
	}
	var agentName string
	if cmd == "chat" {
		fs.StringVar(&agentName, "agent", "", "the agent to talk to (default: the default agent)")
	}
	var auditOpts *queryFlags
	if cmd == "audit" {
		auditOpts = newAuditFlags(fs)
	}
	var usageOpts *queryFlags
	if cmd == "usage" {
		usageOpts = newUsageFlags(fs)
	}
	var positional []string
	if cmd == "people" {
		positional, err = parseInterspersed(fs, args)
	} else {
		err = fs.Parse(args)
		positional = fs.Args()
	}
	if err != nil {
		return err
	}
	level, err := parseLevel(*logLevel)
	if err != nil {
		return err
	}
	cfg.Logger, err = newLogger(stderr, *logFormat, level)
	if err != nil {
		return err
	}

	switch cmd {
	case "migrate":
		return migrate(ctx, cfg, stdout)
	case "rotate-key":
		return rotateKey(ctx, cfg, stdout)
	case "grants":
		return grants(ctx, cfg, grantsCmd, fs.Args(), stdout)
	case "workspaces":
		return workspacesCmd(ctx, cfg, fs.Args(), stdout)
	case "agents":
		return agentsCmd(ctx, cfg, fs.Args(), stdout)
	case "people":
		return peopleCmd(ctx, cfg, peopleCmdArgs, positional, stdout)
	case "pairing":
		return pairing(ctx, cfg, fs.Args(), stdout)
	case "chat":
		return chat(ctx, cfg, agentName, stdin, stdout, stderr)
	case "audit":
		return audit(ctx, cfg, auditOpts, stdout)
	case "usage":
		return usageReport(ctx, cfg, usageOpts, stdout)
	default:
		return serve(ctx, cfg)
	}
}

func serve(ctx context.Context, cfg app.Config) error {
	a, err := app.Open(ctx, cfg)
	if err != nil {
		return err
	}
	// The parts run until Stop, not until the signal: SIGTERM or SIGINT
	// starts a graceful stop, which lets running turns finish for up to
	// SWITCHBOARD_SHUTDOWN_TIMEOUT and then releases what it cut off.
	life := context.WithoutCancel(ctx)
	// SIGHUP reloads switchboard.yaml and mcp-servers.json; a file with an
	// error is refused and the configuration in use stays (see app.Reload).
	// Caught from before the start, so an early one does not end the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	if err := a.Start(life); err != nil {
		stopApp(life, a, cfg.Logger)
		return err
	}
	var lost error
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-a.Lost():
			// Another process took the instance id, presuming this one
			// dead: its work is being taken over, so this one stops.
			lost = fmt.Errorf("instance id %q (SWITCHBOARD_INSTANCE_ID) was taken by another process: stopped", a.InstanceID())
			done = true
		case <-hup:
			cfg.Logger.Info("SIGHUP: reloading the configuration")
			_ = a.Reload(life) // logged, and kept for doctor
		}
	}
	cfg.Logger.Info("shutting down", "grace", a.ShutdownTimeout().String())
	stopApp(life, a, cfg.Logger)
	return lost
}

// stopApp stops the service; what could not stop cleanly (turns cut off at
// the deadline, released for the next instance) is logged, not fatal.
func stopApp(ctx context.Context, a *app.App, log *slog.Logger) {
	if err := a.Stop(ctx); err != nil {
		log.Warn("stopped with loose ends", "error", err.Error())
	}
}

func migrate(ctx context.Context, cfg app.Config, stdout io.Writer) error {
	st, err := dialStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	v, err := st.Migrate(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s schema at version %d\n", st.Dialect(), v)
	return nil
}

// newLogger is the service log: text or JSON lines, each stamped with the
// trace and span it was logged in (telemetry.LogHandler). Every line goes
// through redact.Handler: whatever a package logs, no configured secret or
// key-shaped string reaches the service log.
func newLogger(w io.Writer, format string, level slog.Level) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "", "text":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("SWITCHBOARD_LOG_FORMAT: %q must be text or json", format)
	}
	return slog.New(redact.NewHandler(telemetry.LogHandler(h), nil)), nil
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(s))); err != nil {
		return 0, fmt.Errorf("SWITCHBOARD_LOG_LEVEL: %q must be debug, info, warn or error", s)
	}
	return l, nil
}

func envOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func chat(ctx context.Context, cfg app.Config, agentName string, stdin io.Reader, stdout, stderr io.Writer) error {
	// The terminal is the platform: no HTTP server, and no Slack or Discord
	// connection even when their tokens are in the environment.
	cfg.Addr = "-"
	cfg.SlackBotToken, cfg.SlackAppToken, cfg.SlackSigningSecret = "", "", ""
	cfg.DiscordBotToken, cfg.DiscordPublicKey = "", ""
	// Beside a running serve on the same database (the same default
	// instance id), chat runs under an id of its own: it never takes that
	// process's running turns as its own.
	cfg.InstanceIDFallback = true
	a, err := app.Open(ctx, cfg)
	if err != nil {
		return err
	}
	life := context.WithoutCancel(ctx)
	defer stopApp(life, a, cfg.Logger)
	if err := a.Start(life); err != nil {
		return err
	}
	return terminal.Run(ctx, terminal.Options{Service: a.Service, Agent: agentName, User: envOr(os.Getenv("USER"), "you"), In: stdin, Out: stdout,
		CommandFunc: a.Commands.Answer})
}
