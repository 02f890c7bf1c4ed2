package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	auditsink "github.com/switchboardhq/switchboard/core/audit"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/store"
)

// auditExportCommand is `switchboard audit export`: the rows created in a
// time range, oldest first, as JSON lines (one audit.Event a line, the
// shape the sinks receive), read from the store as GET /api/audit/export
// answers.
func auditExportCommand(ctx context.Context, args []string, cfg app.Config, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("audit export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.DatabaseURL, "database-url", cfg.DatabaseURL, "the store (DATABASE_URL)")
	since := fs.String("since", "", "rows created at or after this: RFC 3339, a UTC day (2026-12-01) or a duration before now (24h); default: the first")
	until := fs.String("until", "", "rows created before this, in the same forms; default: now")
	ws := fs.String("workspace", "", "only the rows of this workspace (its id)")
	out := fs.String("o", "", "write to this file instead of standard output")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("audit export: unexpected %q (audit export [-since T] [-until T] [-workspace ID] [-o FILE])", fs.Arg(0))
	}
	now := time.Now()
	x := &core.AuditExport{}
	var err error
	if *since != "" {
		if x.Since, err = core.ParseAuditTime(*since, now); err != nil {
			return fmt.Errorf("-since: %w", err)
		}
	}
	if *until != "" {
		if x.Until, err = core.ParseAuditTime(*until, now); err != nil {
			return fmt.Errorf("-until: %w", err)
		}
	}
	if *ws != "" {
		id, err := uuid.Parse(*ws)
		if err != nil {
			return fmt.Errorf("-workspace %q: must be a workspace id (switchboard workspaces lists them)", *ws)
		}
		x.WorkspaceID = &id
	}
	st, err := dialStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	w := stdout
	var f *os.File
	if *out != "" {
		if f, err = os.OpenFile(*out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600); err != nil {
			return fmt.Errorf("-o: %w", err)
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriter(w)
	n, err := core.ExportAudit(ctx, st, x, bw)
	if err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing the export: %w", err)
	}
	if f != nil {
		if err := f.Close(); err != nil {
			return fmt.Errorf("-o: %w", err)
		}
		fmt.Fprintf(stderr, "wrote %d audit rows to %s\n", n, *out)
	}
	return nil
}

// cliAuditStore is st whose audit writes reach the webhook sinks agents
// declares, as the service's do: a row the CLI writes (budgets extend)
// is queued for them in its own transaction, and the service delivers
// it. The file and OTLP sinks belong to the service's processes.
func cliAuditStore(st store.Store, agents *config.Config, getenv func(string) string) (store.Store, error) {
	var hooks config.Audit
	for _, s := range agents.Audit.Sinks {
		if s.Webhook != "" {
			hooks.Sinks = append(hooks.Sinks, s)
		}
	}
	sinks, err := auditsink.New(auditsink.Options{Config: hooks, Getenv: getenv})
	if err != nil {
		return nil, err
	}
	return core.AuditingStore(st, sinks, time.Now), nil
}
