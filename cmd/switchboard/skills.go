package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboardhq/switchboard/core/skill"
	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

const skillsUsage = `usage: switchboard skills <subcommand> [flags]

  import PATH|URL [--agent NAME]   import skills from a folder, a .zip or .tar.gz file, or an https:// URL;
                                   with --agent they are that agent's, else every agent's of switchboard.yaml
  list                             list the skills of every layer
  remove NAME [--agent NAME]       remove an imported skill

Platform skills come from SWITCHBOARD_SKILLS_DIR and the binary; they are not imported.
`

// skillsCommand imports, lists and removes skills straight in the store:
// every instance reads them there, so a running service offers an
// imported skill from the next turn on.
func skillsCommand(ctx context.Context, args []string, cfg app.Config, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, skillsUsage)
		return errors.New("skills: no subcommand given (import, list, remove)")
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("skills "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.DatabaseURL, "database-url", cfg.DatabaseURL, "store: postgres://..., sqlite:PATH, or empty for "+dial.DefaultSQLitePath+" (DATABASE_URL)")
	fs.StringVar(&cfg.ConfigPath, "config", cfg.ConfigPath, "agents file (SWITCHBOARD_CONFIG)")
	agentName := fs.String("agent", "", "the agent whose skills these are (default: every agent of switchboard.yaml)")
	// Flags may come before or after the one argument.
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	want := map[string]int{"import": 1, "list": 0, "remove": 1}
	n, ok := want[sub]
	if !ok || len(pos) != n {
		fmt.Fprint(stderr, skillsUsage)
		return fmt.Errorf("skills %s: wrong arguments %q", sub, pos)
	}
	lib, agents, closeStore, err := app.OpenSkills(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	if *agentName != "" {
		if _, ok := agents.Find(*agentName); !ok {
			return fmt.Errorf("skills %s: no agent %q in %s", sub, *agentName, cfg.ConfigPath)
		}
	}
	switch sub {
	case "import":
		client := &http.Client{Timeout: time.Minute}
		skills, err := skill.Import(ctx, client, pos[0], skill.Limits{})
		if err != nil {
			return fmt.Errorf("skills import: %w", err)
		}
		rows, err := lib.Assign(ctx, *agentName, skills)
		if err != nil {
			return fmt.Errorf("skills import: %w", err)
		}
		for i, r := range rows {
			fmt.Fprintf(stdout, "imported %s for %s", r.Name, who(*agentName))
			if grants := skills[i].AllowedTools; len(grants) > 0 && *agentName != "" {
				fmt.Fprintf(stdout, "; it grants %s", strings.Join(grants, ", "))
			}
			fmt.Fprintln(stdout)
		}
		return nil
	case "remove":
		err := lib.Remove(ctx, pos[0], *agentName)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("skills remove: no skill %s imported for %s", pos[0], who(*agentName))
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed %s from %s\n", pos[0], who(*agentName))
		return nil
	}
	rows, err := lib.List(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tLAYER\tFOR\tFILES\tDESCRIPTION")
	for _, r := range rows {
		desc, _, _ := strings.Cut(r.Description, "\n")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", r.Name, r.Layer, cmp.Or(r.Scope, "everyone"), len(r.Files), desc)
	}
	return tw.Flush()
}

func who(agent string) string {
	if agent == "" {
		return "every agent of switchboard.yaml"
	}
	return "agent " + agent
}
