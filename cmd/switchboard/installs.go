package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/app"
)

// installsCommand is `switchboard installs [list]`: the Slack workspaces
// and Enterprise Grid organisations the app was installed in through the
// OAuth flow, read from the store as GET /api/slack/installs answers: who
// installed it, the scopes, when the token expires and whether its renewal
// works, and the last event.
func installsCommand(ctx context.Context, args []string, cfg app.Config, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "list" {
		args = args[1:]
	}
	fs := flag.NewFlagSet("installs list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.DatabaseURL, "database-url", cfg.DatabaseURL, "the store (DATABASE_URL)")
	asJSON := fs.Bool("json", false, "print JSON, as the API answers")
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return fmt.Errorf("installs: unexpected %q (installs [list] [-json])", positional[0])
	}
	st, err := dialStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	all := &core.SlackInstallList{Installs: []core.SlackInstall{}}
	for after := ""; ; {
		page, err := core.ReadSlackInstalls(ctx, st, after, 0)
		if err != nil {
			return err
		}
		all.Installs = append(all.Installs, page.Installs...)
		if after = page.Next; after == "" {
			break
		}
	}
	if *asJSON {
		return printJSON(stdout, all)
	}
	if len(all.Installs) == 0 {
		fmt.Fprintln(stdout, "no Slack workspace installed the app through /slack/install")
		return nil
	}
	when := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.UTC().Format(time.RFC3339)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tINSTALLED IN\tINSTALLED BY\tSCOPES\tTOKEN EXPIRES\tRENEWAL\tLAST EVENT")
	for _, in := range all.Installs {
		where := cmp.Or(in.TeamName, in.Key)
		switch {
		case in.OrgWide:
			where = cmp.Or(in.EnterpriseName, in.Key) + " (organisation-wide)"
		case in.EnterpriseName != "":
			where += " (" + in.EnterpriseName + ")"
		}
		renewal := cmp.Or(in.Renewal, "does not expire")
		if in.RenewalError != "" {
			renewal += ": " + in.RenewalError
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", in.Key, where, cmp.Or(in.InstalledBy, "-"), len(in.Scopes),
			when(in.TokenExpiresAt), strings.ReplaceAll(renewal, "\t", " "), when(in.LastEventAt))
	}
	return tw.Flush()
}
