package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// TestBudgetsCommand: switchboard budgets lists each declared budget's day
// and month from the store; extend adds to today's limit (or the month's),
// is recorded in the audit, and a key no budget has is refused naming it.
func TestBudgetsCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := filepath.Join(dir, "switchboard.yaml")
	if err := os.WriteFile(config, []byte("agents:\n  - name: atlas\n    model: scripted:demo\nbudgets:\n  - {agent: atlas, daily_usd: 5, monthly_usd: 100}\n  - {person: U0ALICE, daily_tokens: 20000}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := env(map[string]string{"DATABASE_URL": "sqlite:" + filepath.Join(dir, "sb.db"), "SWITCHBOARD_CONFIG": config})
	ctx := context.Background()
	cmd := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(ctx, append([]string{"budgets"}, args...), e, nil, &out, &errOut)
		return out.String(), err
	}
	var errOut bytes.Buffer
	if err := run(ctx, []string{"migrate", "-log-level", "error"}, e, nil, &bytes.Buffer{}, &errOut); err != nil {
		t.Fatalf("migrate: %v\n%s", err, errOut.String())
	}
	out, err := cmd()
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{`agent:atlas\s+day:\d{4}-\d\d-\d\d\s+\$0\.0000 \(0 tokens\)\s+\$0\.0000\s+\$5\.00\s+0%`,
		`agent:atlas\s+month:\d{4}-\d\d\s+.*\$100\.00\s+0%`, `person:U0ALICE\s+day:.*20000 tokens\s+0%`} {
		if !regexp.MustCompile(row).MatchString(out) {
			t.Errorf("budgets printed:\n%s\nwant a row matching %s", out, row)
		}
	}
	if out, err = cmd("extend", "agent:atlas", "-usd", "2.5"); err != nil || !strings.Contains(out, "extended agent:atlas for day:") || !strings.Contains(out, "$7.50 ($2.50 extended)") {
		t.Fatalf("budgets extend printed %q, %v", out, err)
	}
	if out, err = cmd("extend", "-monthly", "-usd", "10", "agent:atlas"); err != nil || !strings.Contains(out, "for month:") || !strings.Contains(out, "$110.00") {
		t.Fatalf("budgets extend -monthly printed %q, %v", out, err)
	}
	out, err = cmd("-json")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Budgets []core.BudgetStatus `json:"budgets"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Budgets) != 3 || list.Budgets[0].ExtraUSD != 2.5 || list.Budgets[1].ExtraUSD != 10 {
		t.Fatalf("budgets -json = %s, %v: want the day extended by 2.5 and the month by 10", out, err)
	}
	var audit bytes.Buffer
	if err := run(ctx, []string{"audit", "-log-level", "error"}, e, nil, &audit, &errOut); err != nil || strings.Count(audit.String(), "budget_extend") != 2 {
		t.Errorf("the audit lists:\n%s\n%v; want both extensions", audit.String(), err)
	}
	for args, want := range map[string]string{
		"extend agent:scout -usd 1":    `no such budget: "agent:scout"`,
		"extend agent:atlas":           "give usd or tokens, positive",
		"extend person:U0ALICE -usd 1": "", // tokens only: a dollar extension still adds to the period's row
		"extend":                       "name one budget by its key",
	} {
		_, err := cmd(strings.Fields(args)...)
		if want == "" {
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("budgets %s: %v, want an error saying %q", args, err, want)
		}
	}
}
