package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/app"
)

// newUsageFlags are the parameters of `switchboard usage`, the same as
// those of GET /api/usage.
func newUsageFlags(fs *flag.FlagSet) *queryFlags {
	return newQueryFlags(fs, []queryParam{
		{"since", "only calls made at or after this time (RFC 3339)"},
		{"days", "only calls of the last N days, today included (UTC)"},
		{"limit", "at most this many rows per table (the costliest)"},
	}, "print the report as JSON, as GET /api/usage answers")
}

// usageReport prints what the model calls cost, per agent, per
// conversation and per day, read from the store.
func usageReport(ctx context.Context, cfg app.Config, f *queryFlags, stdout io.Writer) error {
	q, err := web.ParseUsageQuery(f.values, time.Now())
	if err != nil {
		return err
	}
	st, err := dialStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	u, err := core.ReadUsage(ctx, st, q.Since, q.Limit)
	if err != nil {
		return err
	}
	r := web.UsageReportOf(q, u)
	if f.json {
		return printJSON(stdout, r)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	table := func(title string, rows []web.UsageRow) {
		fmt.Fprintf(tw, "%s\tCALLS\tINPUT\tCACHED\tCACHE WRITE\tOUTPUT\tHIT RATE\tCOST USD\t👍\t👎\t\n", title)
		for _, row := range rows {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%.1f%%\t%.4f\t%d\t%d\t\n", dash(row.Key), row.Calls, row.InputTokens,
				row.CachedTokens, row.CacheWriteTokens, row.OutputTokens, 100*row.CacheHitRate, row.CostUSD, row.FeedbackUp, row.FeedbackDown)
		}
		fmt.Fprintln(tw, "\t\t\t\t\t\t\t\t\t\t")
	}
	table("AGENT", r.Agents)
	table("CONVERSATION", r.Conversations)
	table("DAY", r.Days)
	table("TOTAL", []web.UsageRow{r.Total})
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "INPUT is uncached input; HIT RATE is CACHED over INPUT + CACHED + CACHE WRITE; 👍 and 👎 count the feedback buttons on replies.")
	return nil
}
