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

// auditFlags are the filters of `switchboard audit`, the same as those of
// GET /api/audit.
type auditFlags struct {
	values url.Values
	json   bool
}

func newAuditFlags(fs *flag.FlagSet) *auditFlags {
	f := &auditFlags{values: url.Values{}}
	for _, d := range []struct{ name, usage string }{
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
	} {
		fs.Func(d.name, d.usage, func(s string) error { f.values.Set(d.name, s); return nil })
	}
	fs.BoolVar(&f.json, "json", false, "print the page as JSON, as GET /api/audit answers")
	return f
}

// audit prints one page of the audit, newest first, read from the store.
func audit(ctx context.Context, cfg app.Config, f *auditFlags, stdout io.Writer) error {
	q, err := web.ParseAuditQuery(f.values)
	if err != nil {
		return err
	}
	st, err := dial.Open(ctx, dial.Options{DatabaseURL: cfg.DatabaseURL, Logger: cfg.Logger})
	if err != nil {
		return err
	}
	defer st.Close()
	page, err := web.ListAudit(ctx, st, q)
	if err != nil {
		return err
	}
	if f.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(page)
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
