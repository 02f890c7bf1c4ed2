package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/bridge"
)

// stringsFlag is a repeatable string flag.
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

// bridgeCommand runs the model calls of runs_on: bridge agents on this
// machine (switchboard bridge), or supervises one bridge per agent of a
// host (switchboard bridge supervise -f hosts.yaml).
func bridgeCommand(ctx context.Context, args []string, cfg app.Config, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "supervise" {
		return superviseCommand(ctx, args[1:], cfg, stderr)
	}
	fs := flag.NewFlagSet("bridge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "the service's base URL, e.g. https://switchboard.example.com (required)")
	token := fs.String("token", "", "a host token (switchboard keys create --host) or an agent key (SWITCHBOARD_BRIDGE_TOKEN)")
	tokenFile := fs.String("token-file", "", "a file holding the token, read again at each exchange: rotate it without a restart (SWITCHBOARD_BRIDGE_TOKEN_FILE)")
	var agents stringsFlag
	fs.Var(&agents, "agent", "an agent this bridge serves (repeatable; default: the one agent the token names)")
	dir := fs.String("dir", "", "working folder: a CLI agent works in DIR/agents/NAME/work (SWITCHBOARD_DATA_DIR, default ./data)")
	id := fs.String("id", "", "the bridge's name in the service's list (default: host name, process id and a random suffix)")
	poll := fs.Duration("poll", 2*time.Second, "how often to claim without an announcement")
	logLevel := fs.String("log-level", cfg.LogLevel, "debug, info, warn or error (SWITCHBOARD_LOG_LEVEL)")
	logFormat := fs.String("log-format", cfg.LogFormat, "text or json (SWITCHBOARD_LOG_FORMAT)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bridge: unexpected argument %q (did you mean bridge supervise?)", fs.Arg(0))
	}
	level, err := parseLevel(*logLevel)
	if err != nil {
		return err
	}
	if cfg.Logger, err = newLogger(stderr, *logFormat, level); err != nil {
		return err
	}
	tok, file := *token, *tokenFile
	if file == "" {
		file = getenv("SWITCHBOARD_BRIDGE_TOKEN_FILE")
	}
	if tok == "" && file == "" {
		tok = getenv("SWITCHBOARD_BRIDGE_TOKEN")
	}
	b, err := bridge.New(bridge.Options{
		URL: *url, Token: tok, TokenFile: file, Agents: agents, ID: *id, Version: cfg.BinaryVersion, Poll: *poll,
		Backend: app.BridgeBackend(cfg, *dir), Logger: cfg.Logger,
		Ready: func() { fmt.Fprintln(stdout, bridge.ReadyLine) },
	})
	if err != nil {
		return err
	}
	cfg.Logger.Info("bridge starting", "url", *url, "agents", agents.String(), "id", b.ID())
	return b.Run(ctx)
}

func superviseCommand(ctx context.Context, args []string, cfg app.Config, stderr io.Writer) error {
	fs := flag.NewFlagSet("bridge supervise", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("f", "hosts.yaml", "the host's bridges: url, token_env, and one entry per agent (agent, dir, user, env)")
	logFormat := fs.String("log-format", cfg.LogFormat, "text or json (SWITCHBOARD_LOG_FORMAT)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	level, err := parseLevel(cfg.LogLevel)
	if err != nil {
		return err
	}
	if cfg.Logger, err = newLogger(stderr, *logFormat, level); err != nil {
		return err
	}
	hosts, err := bridge.LoadHosts(*file)
	if err != nil {
		return err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	restart := make(chan struct{}, 1)
	go func() {
		for range hup {
			select {
			case restart <- struct{}{}:
			default:
			}
		}
	}()
	err = bridge.Supervise(ctx, bridge.SuperviseOptions{Hosts: hosts, Env: os.Environ(), Logger: cfg.Logger, Restart: restart})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
