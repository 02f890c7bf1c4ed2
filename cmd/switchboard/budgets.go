package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/internal/app"
)

// budgetsCommand is `switchboard budgets`: each budget's spend today and
// this month against its limits (list, the default), or a one-off
// extension of one (extend KEY -usd N | -tokens N [-monthly]), read and
// written in the store with switchboard.yaml's budgets, as GET
// /api/budgets and POST /api/budgets/extend do.
func budgetsCommand(ctx context.Context, args []string, cfg app.Config, stdout, stderr io.Writer) error {
	sub := "list"
	if len(args) > 0 && (args[0] == "list" || args[0] == "extend") {
		sub, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("budgets "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.DatabaseURL, "database-url", cfg.DatabaseURL, "the store (DATABASE_URL)")
	fs.StringVar(&cfg.ConfigPath, "config", cfg.ConfigPath, "agents file, which declares the budgets (SWITCHBOARD_CONFIG)")
	asJSON := fs.Bool("json", false, "print JSON, as the API answers")
	var e core.BudgetExtension
	if sub == "extend" {
		fs.Float64Var(&e.USD, "usd", 0, "dollars to add to the budget's current period")
		fs.Int64Var(&e.Tokens, "tokens", 0, "tokens to add to the budget's current period")
		fs.BoolVar(&e.Monthly, "monthly", false, "extend this month's limit (default today's)")
	}
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	agents, err := config.Load(cfg.ConfigPath, cfg.Env)
	if err != nil {
		return err
	}
	if len(agents.Budgets) == 0 {
		return fmt.Errorf("budgets: %s declares no budgets (budgets: in switchboard.yaml; see docs/operate.md#budgets)", cmp.Or(cfg.ConfigPath, "the configuration"))
	}
	st, err := dialStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	if sub == "extend" {
		if len(positional) != 1 {
			return fmt.Errorf("budgets extend: name one budget by its key, as in agent:atlas (switchboard budgets lists them)")
		}
		e.Key, e.By = positional[0], "operator:cli"
		ast, err := cliAuditStore(st, agents, cfg.Env)
		if err != nil {
			return err
		}
		got, err := core.ExtendBudgetIn(ctx, ast, agents, e, time.Now())
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, got)
		}
		fmt.Fprintf(stdout, "extended %s for %s: now %s\n", got.Key, got.Period, budgetLimit(*got))
		return nil
	}
	if len(positional) > 0 {
		return fmt.Errorf("budgets: unexpected %q (budgets [list] | budgets extend KEY -usd N)", positional[0])
	}
	bs, err := core.ReadBudgets(ctx, st, agents, time.Now())
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, map[string]any{"budgets": bs})
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BUDGET\tPERIOD\tSPENT\tRESERVED\tLIMIT\tUSED\tRESETS")
	for _, b := range bs {
		used := "-"
		if lim := b.LimitUSD + b.ExtraUSD; lim > 0 {
			used = fmt.Sprintf("%.0f%%", 100*b.SpentUSD/lim)
		} else if lim := b.LimitTokens + b.ExtraTokens; lim > 0 {
			used = fmt.Sprintf("%.0f%%", 100*float64(b.SpentTokens)/float64(lim))
		}
		fmt.Fprintf(tw, "%s\t%s\t$%.4f (%d tokens)\t$%.4f\t%s\t%s\t%s\n", b.Key, b.Period, b.SpentUSD, b.SpentTokens, b.ReservedUSD,
			budgetLimit(b), used, b.ResetsAt.Format(time.RFC3339))
	}
	return tw.Flush()
}

// budgetLimit is a budget's limits with their extensions.
func budgetLimit(b core.BudgetStatus) string {
	var s string
	if b.LimitUSD > 0 {
		s = fmt.Sprintf("$%.2f", b.LimitUSD+b.ExtraUSD)
		if b.ExtraUSD > 0 {
			s += fmt.Sprintf(" ($%.2f extended)", b.ExtraUSD)
		}
	}
	if b.LimitTokens > 0 {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("%d tokens", b.LimitTokens+b.ExtraTokens)
	}
	return s
}
