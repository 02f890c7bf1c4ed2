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

// newAuditFlags are the parameters of `switchboard audit`, the same as
// those of GET /api/audit.
func newAuditFlags(fs *flag.FlagSet) *queryFlags {
	return newQueryFlags(fs, []queryParam{
		{"workspace", "only calls in this platform workspace (Slack team id, Discord guild id)"},
		{"agent", "only calls of this agent"},
		{"conversation", "only calls of this conversation (id)"},
		{"tool", "only calls of this tool"},
		{"decision", "only calls the guard decided so: auto, notify, confirm or deny"},
		{"outcome", "only calls that ended so: pending, ok, failed, denied, expired or cancelled"},
		{"from", "only calls made at or after this time (RFC 3339)"},
		{"to", "only calls made before this time (RFC 3339)"},
		{"limit", fmt.Sprintf("rows per page, 1 to %d (default %d)", web.MaxAuditPage, web.DefaultAuditPage)},
		{"cursor", "continue after the page that printed this cursor"},
	}, "print the page as JSON, as GET /api/audit answers")
}

// audit prints one page of the audit, newest first, read from the store.
func audit(ctx context.Context, cfg app.Config, f *queryFlags, stdout io.Writer) error {
	q, err := web.ParseAuditQuery(f.values)
	if err != nil {
		return err
	}
	st, err := dialStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	rows, err := core.ListAudit(ctx, st, q)
	if err != nil {
		return err
	}
	page := web.AuditPageOf(rows)
	if f.json {
		return printJSON(stdout, page)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tAGENT\tTOOL\tDECISION\tOUTCOME\tDECIDED BY\tCONVERSATION\tCALL")
	for _, r := range page.Records {
		conv := "-"
		if r.ConversationID != nil {
			conv = r.ConversationID.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.CreatedAt.Format(time.RFC3339), dash(r.Agent), r.Tool,
			dash(r.Decision), r.Outcome, dash(r.DecidedBy), conv, dash(r.CallID))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if page.NextCursor != "" {
		fmt.Fprintf(stdout, "more: switchboard audit --cursor %s (with the same filters)\n", page.NextCursor)
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
