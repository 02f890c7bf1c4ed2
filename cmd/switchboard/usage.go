package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/internal/app"
	"github.com/switchboardhq/switchboard/store/dial"
)

// usageFlags are the parameters of `switchboard usage`, the same as those
// of GET /api/usage.
type usageFlags struct {
	values url.Values
	json   bool
}

func newUsageFlags(fs *flag.FlagSet) *usageFlags {
	f := &usageFlags{values: url.Values{}}
	for _, d := range []struct{ name, usage string }{
		{"since", "only calls made at or after this time (RFC 3339)"},
		{"days", "only calls of the last N days, today included (UTC)"},
		{"limit", "at most this many rows per table (the costliest)"},
	} {
		fs.Func(d.name, d.usage, func(s string) error { f.values.Set(d.name, s); return nil })
	}
	fs.BoolVar(&f.json, "json", false, "print the report as JSON, as GET /api/usage answers")
	return f
}

// usageReport prints what the model calls cost, per agent, per
// conversation and per day, read from the store.
func usageReport(ctx context.Context, cfg app.Config, f *usageFlags, stdout io.Writer) error {
	q, err := web.ParseUsageQuery(f.values, time.Now())
	if err != nil {
		return err
	}
	st, err := dial.Open(ctx, dial.Options{DatabaseURL: cfg.DatabaseURL, Logger: cfg.Logger})
	if err != nil {
		return err
	}
	defer st.Close()
	r, err := web.ReadUsage(ctx, st, q)
	if err != nil {
		return err
	}
	if f.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	table := func(title string, rows []web.UsageRow) {
		fmt.Fprintf(tw, "%s\tCALLS\tINPUT\tCACHED\tCACHE WRITE\tOUTPUT\tHIT RATE\tCOST USD\t\n", title)
		for _, row := range rows {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%.1f%%\t%.4f\t\n", dash(row.Key), row.Calls, row.InputTokens,
				row.CachedTokens, row.CacheWriteTokens, row.OutputTokens, 100*row.CacheHitRate, row.CostUSD)
		}
		fmt.Fprintln(tw, "\t\t\t\t\t\t\t\t")
	}
	table("AGENT", r.Agents)
	table("CONVERSATION", r.Conversations)
	table("DAY", r.Days)
	table("TOTAL", []web.UsageRow{r.Total})
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "INPUT is uncached input; HIT RATE is CACHED over INPUT + CACHED + CACHE WRITE.")
	return nil
}
