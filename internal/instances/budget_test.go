package instances_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/store"
)

// TestBudgetAcrossInstances runs two `switchboard serve` processes on one
// Postgres against a daily budget of $0.50, the fake model charging $0.02
// a call (1,000 output tokens at $20 per million; the worst case a turn
// reserves is max_tokens, 4,096, at that price: $0.08).
//
//  1. kill -9 of the instance whose call holds a reservation: the other
//     takes the turn over once the lease is out and answers it once, and
//     nothing stays reserved.
//  2. 40 mentions at once over both: the recorded spend never passes the
//     budget, each thread gets either its answer or one line naming the
//     budget, and the owner (alice) gets exactly one 80 % notice.
func TestBudgetAcrossInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two service processes")
	}
	w := newWorld(t, false)
	config := filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(config, []byte(`access:
  dm_policy: open
prices:
  "anthropic:claude-sonnet-4-5": {input: 0, output: 20}
budgets:
  - {agent: switchboard, daily_usd: 0.5, owner: `+alice+`}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(w.env, "SWITCHBOARD_CONFIG="+config)
	usage := &modeltest.Usage{OutputTokens: 1000}
	w.model.Default(modeltest.Reply{Text: reply, Usage: usage})
	instances := map[string]*instance{"instance-a": start(t, "instance-a", env), "instance-b": start(t, "instance-b", env)}
	w.openStore()
	ctx := context.Background()
	budget := func() *store.BudgetState {
		t.Helper()
		st, err := w.st.BudgetGet(ctx, &store.BudgetGetParams{Key: "agent:switchboard", Period: "day:" + time.Now().UTC().Format("2006-01-02"), Now: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}

	// 1. A call that hangs holding its reservation; its instance dies.
	block := make(chan struct{})
	defer close(block)
	w.model.Push(modeltest.Reply{Text: reply, Usage: usage, Block: block})
	first := w.mention(instances["instance-a"].addr, "the first question")
	if !poll(waitLong, func() bool { return budget().ReservedMicroUSD > 0 }) {
		t.Fatal("no reservation while the model call hangs")
	}
	items, err := w.st.WorkList(ctx, &store.WorkListParams{Kind: "turn", States: []store.WorkState{store.WorkRunning}})
	if err != nil || len(items) != 1 {
		t.Fatalf("running turns: %v, %v", items, err)
	}
	victim := items[0].ClaimedBy
	instances[victim].kill()
	killed := time.Now()
	t.Logf("killed %s holding %d µ$ reserved", victim, budget().ReservedMicroUSD)
	w.waitAnswered([]string{first}, waitLong)
	if b := budget(); b.ReservedMicroUSD != 0 || b.SpentMicroUSD != 20_000 {
		t.Fatalf("after the takeover (%s after the kill, lease %s): %d µ$ reserved, %d spent; want nothing held and one call's $0.02 spent",
			time.Since(killed).Round(time.Millisecond), leaseTTL, b.ReservedMicroUSD, b.SpentMicroUSD)
	}
	instances[victim] = start(t, victim, env)

	// 2. 40 mentions at once, over both instances.
	var chs []string
	for i := range 40 {
		addr := instances["instance-a"].addr
		if i%2 == 1 {
			addr = instances["instance-b"].addr
		}
		chs = append(chs, w.mention(addr, fmt.Sprintf("question %d", i)))
	}
	if !poll(waitLong, func() bool {
		for _, ch := range chs {
			if r := w.replies(ch); len(r) == 0 || strings.HasSuffix(r[0], "(still streaming)") {
				return false
			}
		}
		return true
	}) {
		t.Fatal("not every thread was answered or refused")
	}
	w.waitIdle()
	answered, refused := 0, 0
	for _, ch := range chs {
		r := w.replies(ch)
		switch {
		case len(r) != 1:
			t.Errorf("%s: %d messages %q, want one", ch, len(r), r)
		case r[0] == reply:
			answered++
		case strings.Contains(r[0], "daily budget of agent switchboard ($0.50") && strings.Contains(r[0], "resets"):
			refused++
		default:
			t.Errorf("%s: %q, want the answer or one line naming the budget", ch, r[0])
		}
	}
	b := budget()
	t.Logf("%d answered, %d refused; spent %d µ$ of 500000, %d reserved", answered, refused, b.SpentMicroUSD, b.ReservedMicroUSD)
	if b.SpentMicroUSD > 500_000 {
		t.Errorf("spent %d µ$, past the $0.50 budget", b.SpentMicroUSD)
	}
	if want := int64(20_000 * (answered + 1)); b.SpentMicroUSD != want {
		t.Errorf("spent %d µ$, want %d: $0.02 for each answered call", b.SpentMicroUSD, want)
	}
	if b.ReservedMicroUSD != 0 {
		t.Errorf("%d µ$ still reserved", b.ReservedMicroUSD)
	}
	if refused == 0 || answered < 15 {
		t.Errorf("%d answered, %d refused: want the budget to run out after at least 15 answers", answered, refused)
	}
	var notices int
	for _, m := range w.replies(dmAlice) {
		if strings.HasPrefix(m, "Budget notice: agent switchboard has used over 80 %") {
			notices++
		}
	}
	if notices != 1 {
		t.Errorf("the owner got %d budget notices, want 1: %q", notices, w.replies(dmAlice))
	}
}
