package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/store/dial"
)

const sessionsUsage = `usage:
  switchboard sessions [list] [--person ID] [--workspace REF] [--json]
        live console sessions and personal API tokens, with when, from where (IP)
        and with what (user agent) each was last used; every one without a filter
  switchboard sessions end ID
        end a console session (its id) or revoke a personal token (sbp_…); every
        instance refuses it from its next request
`

// sessionsCommand runs `sessions`: the operator's view of the console
// sessions and personal tokens, straight on the store.
func sessionsCommand(ctx context.Context, args []string, cfg app.Config, stdout, stderr io.Writer) error {
	sub := "list"
	if len(args) > 0 && (args[0] == "list" || args[0] == "end") {
		sub, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("sessions "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.DatabaseURL, "database-url", cfg.DatabaseURL, "store: postgres://..., sqlite:PATH, or empty for "+dial.DefaultSQLitePath+" (DATABASE_URL)")
	var person, ws string
	var asJSON bool
	if sub == "list" {
		fs.StringVar(&person, "person", "", "one person's (a person id)")
		fs.StringVar(&ws, "workspace", "", "the people of one workspace (its id, or a Slack team or Discord guild bound to it)")
		fs.BoolVar(&asJSON, "json", false, "JSON, as GET /api/sessions answers")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	now := time.Now()
	if sub == "end" {
		if fs.NArg() != 1 {
			fmt.Fprint(stderr, sessionsUsage)
			return fmt.Errorf("sessions end: give one id (a console session's UUID, or sbp_… for a token)")
		}
		// The ended session's audit row reaches the webhook sinks as the
		// service's rows do.
		agents, err := config.Load(cfg.ConfigPath, cfg.Env)
		if err != nil {
			return err
		}
		ast, err := cliAuditStore(st, agents, cfg.Env)
		if err != nil {
			return err
		}
		s, err := core.EndSession(ctx, ast, workspace.TheOperator, fs.Arg(0), "operator", now)
		if err != nil {
			return fmt.Errorf("ending %s: %w", fs.Arg(0), err)
		}
		fmt.Fprintf(stdout, "ended %s %s\n", s.Kind, s.ID)
		return nil
	}
	var q core.SessionQuery
	if person != "" {
		id, err := uuid.Parse(person)
		if err != nil {
			return fmt.Errorf("sessions: --person %q must be a person's id (a UUID)", person)
		}
		q.Person = &id
	}
	if ws != "" {
		id, err := workspace.NewService(st).Named(ctx, ws)
		if err != nil {
			return fmt.Errorf("sessions: --workspace: %w", err)
		}
		q.Workspace = &id
	}
	list, err := core.ListSessions(ctx, st, workspace.TheOperator, q, now)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if list == nil {
			list = []*core.SessionInfo{}
		}
		return enc.Encode(map[string]any{"sessions": list})
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tPERSON\tOPENED\tLAST USED\tFROM\tUSER AGENT")
	for _, s := range list {
		who := "operator"
		if s.PersonID != nil {
			who = s.PersonID.String()
		}
		kind := s.Kind
		if s.Method != "" {
			kind += " (" + s.Method + ")"
		} else if s.Label != "" {
			kind += " (" + s.Label + ")"
		}
		used := "never"
		if s.LastUsedAt != nil {
			used = s.LastUsedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, kind, who, s.CreatedAt.Format(time.RFC3339), used, s.LastIP, s.LastUserAgent)
	}
	return tw.Flush()
}
