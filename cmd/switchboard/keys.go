package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/auth/apikey"
	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

const keysUsage = `usage:
  switchboard keys create --agent NAME [--label TEXT]          an agent key (exchange it at POST /api/auth/token)
  switchboard keys create --host --agent NAME... [--label TEXT] an exchange-only token for a host running these agents
  switchboard keys list [--revoked]                             agent keys and host tokens
  switchboard keys revoke ID                                    revoke a key or token and its sessions (ID: sbk_…, sbh_…, sbp_…)
  switchboard tokens create --person ID [--workspace ID...] [--label TEXT] [--expires 720h]
                                                               a person's token; without --workspace it reaches every
                                                               workspace the person belongs to (their roles decide)
  switchboard tokens list [--revoked]                           personal access tokens
  switchboard tokens revoke ID
`

// names is a repeatable flag; each value may also be comma-separated.
type names []string

func (n *names) String() string { return strings.Join(*n, ",") }
func (n *names) Set(v string) error {
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*n = append(*n, s)
		}
	}
	return nil
}

// keysCommand runs `keys` and `tokens`: the credentials of the HTTP API,
// straight on the store (no service needs to run).
func keysCommand(ctx context.Context, cmd string, args []string, cfg app.Config, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, keysUsage)
		return fmt.Errorf("%s: no subcommand given (create, list, revoke)", cmd)
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet(cmd+" "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.DatabaseURL, "database-url", cfg.DatabaseURL, "store: postgres://..., sqlite:PATH, or empty for "+dial.DefaultSQLitePath+" (DATABASE_URL)")
	fs.StringVar(&cfg.ConfigPath, "config", cfg.ConfigPath, "agents file (SWITCHBOARD_CONFIG)")
	var (
		agents, workspaces names
		host, revoked      bool
		label, person      string
		expires            time.Duration
	)
	switch cmd + " " + sub {
	case "keys create":
		fs.Var(&agents, "agent", "the agent the key acts as (with --host: repeat for each agent)")
		fs.BoolVar(&host, "host", false, "an exchange-only token for a host that runs the agents")
		fs.StringVar(&label, "label", "", "a note shown in lists")
	case "tokens create":
		fs.StringVar(&person, "person", "", "the person's id (a UUID)")
		fs.Var(&workspaces, "workspace", "a workspace id (a UUID) the token reaches; repeat for more")
		fs.StringVar(&label, "label", "", "a note shown in lists")
		fs.DurationVar(&expires, "expires", 0, "lifetime, such as 720h (default: until revoked)")
	case "keys list", "tokens list":
		fs.BoolVar(&revoked, "revoked", false, "include revoked ones")
	case "keys revoke", "tokens revoke":
	default:
		fmt.Fprint(stderr, keysUsage)
		return fmt.Errorf("%s: unknown subcommand %q", cmd, sub)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	keys, closeStore, err := app.OpenKeys(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeStore()

	var is *apikey.Issued
	switch cmd + " " + sub {
	case "keys create":
		switch {
		case host && len(agents) == 0:
			return fmt.Errorf("keys create --host: name the agents with --agent")
		case host:
			is, err = keys.CreateHostToken(ctx, agents, label)
		case len(agents) != 1:
			return fmt.Errorf("keys create: name exactly one agent with --agent (or use --host)")
		default:
			is, err = keys.CreateAgentKey(ctx, agents[0], label)
		}
	case "tokens create":
		pid, perr := uuid.Parse(person)
		if perr != nil {
			return fmt.Errorf("tokens create: --person %q must be a person's id (a UUID)", person)
		}
		ws := make([]uuid.UUID, len(workspaces))
		for i, w := range workspaces {
			if ws[i], perr = uuid.Parse(w); perr != nil {
				return fmt.Errorf("tokens create: --workspace %q must be a workspace id (a UUID)", w)
			}
		}
		is, err = keys.CreatePersonal(ctx, pid, ws, label, expires)
	case "keys list", "tokens list":
		kinds := []store.KeyKind{store.KeyAgent, store.KeyHost}
		if cmd == "tokens" {
			kinds = []store.KeyKind{store.KeyPersonal}
		}
		return listKeys(ctx, keys, kinds, revoked, stdout)
	case "keys revoke", "tokens revoke":
		if fs.NArg() != 1 {
			return fmt.Errorf("%s revoke: give one key id (sbk_…, sbh_…, sbp_…)", cmd)
		}
		k, err := keys.Revoke(ctx, fs.Arg(0))
		if err != nil {
			return fmt.Errorf("revoking %s: %w", fs.Arg(0), err)
		}
		fmt.Fprintf(stdout, "revoked %s (%s) and its sessions\n", apikey.ID(k), k.Kind)
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n\nid %s (%s). This is the only time the token is shown: store it now.\n", is.Token, apikey.ID(is.Key), is.Key.Kind)
	if is.Key.Kind == store.KeyAgent || is.Key.Kind == store.KeyHost {
		fmt.Fprintln(stdout, "Exchange it for a session: POST /api/auth/token with Authorization: Bearer <token>.")
	}
	return nil
}

func listKeys(ctx context.Context, keys *apikey.Keys, kinds []store.KeyKind, revoked bool, stdout io.Writer) error {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tFOR\tLABEL\tCREATED\tSTATE")
	for _, kind := range kinds {
		list, err := keys.List(ctx, kind, revoked)
		if err != nil {
			return err
		}
		for _, k := range list {
			who := strings.Join(k.Agents, ",")
			if k.PersonID != nil {
				ws := make([]string, len(k.Workspaces))
				for i, w := range k.Workspaces {
					ws[i] = w.String()
				}
				who = "person " + k.PersonID.String() + " in " + strings.Join(ws, ",")
			}
			state := "live"
			switch {
			case k.RevokedAt != nil:
				state = "revoked " + k.RevokedAt.Format(time.RFC3339)
			case k.ExpiresAt != nil:
				state = "expires " + k.ExpiresAt.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", apikey.ID(k), k.Kind, who, k.Label, k.CreatedAt.Format(time.RFC3339), state)
		}
	}
	return tw.Flush()
}
