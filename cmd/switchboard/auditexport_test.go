package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	auditsink "github.com/switchboardhq/switchboard/core/audit"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

// TestAuditExportCommand: two budget extensions from the CLI are each
// queued for the webhook sink with their row, and `audit export` prints
// both as JSON lines in the sinks' shape, oldest first, to standard output
// or a file; a bad bound names its flag.
func TestAuditExportCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := filepath.Join(dir, "switchboard.yaml")
	if err := os.WriteFile(config, []byte(`agents:
  - name: atlas
    model: scripted:demo
budgets:
  - {agent: atlas, daily_usd: 5}
audit:
  sinks:
    - {webhook: "http://127.0.0.1:9/hook", secret_env: AUDIT_HMAC_KEY}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	db := "sqlite:" + filepath.Join(dir, "sb.db")
	e := env(map[string]string{"DATABASE_URL": db, "SWITCHBOARD_CONFIG": config, "AUDIT_HMAC_KEY": "k"})
	ctx := context.Background()
	sb := func(args ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		err := run(ctx, args, e, nil, &out, &errOut)
		return out.String(), errOut.String(), err
	}
	if _, errOut, err := sb("migrate", "-log-level", "error"); err != nil {
		t.Fatalf("migrate: %v\n%s", err, errOut)
	}
	for _, usd := range []string{"1", "2"} {
		if _, errOut, err := sb("budgets", "extend", "agent:atlas", "-usd", usd); err != nil {
			t.Fatalf("budgets extend: %v\n%s", err, errOut)
		}
	}
	out, errOut, err := sb("audit", "export", "-since", "1h")
	if err != nil {
		t.Fatalf("audit export: %v\n%s", err, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("audit export printed %d lines, want the two extensions:\n%s", len(lines), out)
	}
	var evs []auditsink.Event
	for _, l := range lines {
		var ev auditsink.Event
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.Schema != auditsink.Schema || ev.Action != "budget_extend" || ev.Actor != "operator:cli" || ev.ID != "" {
			t.Fatalf("line %s (%v): want a budget_extend event of the operator, without an event id", l, err)
		}
		evs = append(evs, ev)
	}
	if evs[1].CreatedAt.Before(evs[0].CreatedAt) {
		t.Errorf("the export is not oldest first: %s", out)
	}
	file := filepath.Join(dir, "audit.jsonl")
	if _, errOut, err := sb("audit", "export", "-since", "2000-01-01", "-o", file); err != nil || !strings.Contains(errOut, "wrote 2 audit rows") {
		t.Fatalf("audit export -o: %v, %q", err, errOut)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != out {
		t.Fatalf("the -o file holds %q (%v), want what standard output got", b, err)
	}
	if out, _, err := sb("audit", "export", "-until", "2000-01-01"); err != nil || out != "" {
		t.Fatalf("an export before the rows: %q, %v; want nothing", out, err)
	}
	if _, _, err := sb("audit", "export", "-since", "yesterday"); err == nil || !strings.Contains(err.Error(), "-since") {
		t.Fatalf("a bad -since: %v, want an error naming it", err)
	}

	// Each row's delivery waits in the queue for the service.
	st, err := dial.Open(ctx, dial.Options{DatabaseURL: db})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	items, err := st.WorkList(ctx, &store.WorkListParams{Kind: core.WorkAuditDeliver})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, it := range items {
		var args core.AuditDeliverArgs
		if err := json.Unmarshal(it.Payload, &args); err != nil || args.Sink != auditsink.SinkID("http://127.0.0.1:9/hook") {
			t.Fatalf("delivery %s: %v", it.Payload, err)
		}
		rows[args.Event.RowID.String()] = true
	}
	if len(items) != 2 || len(rows) != 2 || !rows[evs[0].RowID.String()] || !rows[evs[1].RowID.String()] {
		t.Fatalf("queued deliveries %d of rows %v; want one for each extension", len(items), rows)
	}
}
