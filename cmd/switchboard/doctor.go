package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/internal/doctor"
)

const doctorUsage = `usage: switchboard doctor [-config FILE] [-url URL] [-timeout D] [-json]

Checks the setup with the settings serve would use: switchboard.yaml and
mcp-servers.json (and why the running service at -url refused its last
reload, if it did), the database and its schema, the Slack and Discord
tokens with their scopes and intents, each agent's model (one small
request), git for coding runs, web search's provider (its key, one small
search), the code sandbox and Chromium for the browse tool when they are
set up, the MCP servers and SWITCHBOARD_PUBLIC_URL. Each problem is printed
with its fix; the exit code is 1 when a check fails.
`

func doctorCommand(ctx context.Context, args []string, cfg app.Config, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, doctorUsage); fs.PrintDefaults() }
	fs.StringVar(&cfg.ConfigPath, "config", cfg.ConfigPath, "agents file (SWITCHBOARD_CONFIG)")
	fs.StringVar(&cfg.DatabaseURL, "database-url", cfg.DatabaseURL, "store (DATABASE_URL)")
	serviceURL := fs.String("url", localURL(cfg.Addr), "the running service, asked for its last reload; empty to skip")
	timeout := fs.Duration("timeout", 15*time.Second, "bound on each check")
	asJSON := fs.Bool("json", false, "print the checks as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	results := doctor.Run(ctx, doctor.Options{Config: cfg, ServiceURL: *serviceURL, Timeout: *timeout})
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(results); err != nil {
			return err
		}
	} else if err := doctor.Write(stdout, results); err != nil {
		return err
	}
	if doctor.Failed(results) {
		return fmt.Errorf("doctor: the setup is broken: see the checks marked FAIL and their fixes")
	}
	return nil
}
