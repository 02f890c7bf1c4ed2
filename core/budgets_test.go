package core_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// TestBudgetHoldsAcrossInstances: two instances answer 20 messages at once
// against an agent's daily budget of $0.50, each call priced at about
// $0.04 (worst case about $0.06). What is spent never passes the budget;
// every message gets either its answer or one line naming the budget; the
// owner is told once that it passed 80 %; no reservation is left.
func TestBudgetHoldsAcrossInstances(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		ctx := context.Background()
		s := &setup{st: st, clock: newClock(), tools: &testTools{}}
		s.configure = func(o *core.Options) {
			a := &o.Agents.Agents[0]
			a.MaxTokens = 40
			o.Agents.Prices = map[string]config.Price{a.Model: {Input: 0, Output: 1538}}
			o.Agents.Budgets = []config.Budget{{Agent: "atlas", DailyUSD: 0.5, Owner: "UOWNER"}}
		}
		// 100 characters: 26 output tokens, $0.04 a call.
		script := "fallback:\n  text: \"" + strings.Repeat("x", 100) + "\"\n"
		first := s.start(t, script)
		s.workerID = "second"
		second := s.start(t, script)
		const messages = 20
		convs := make([]uuid.UUID, messages)
		var wg sync.WaitGroup
		for i := range messages {
			svc := first.svc
			if i%2 == 1 {
				svc = second.svc
			}
			wg.Go(func() {
				in := slackMessage(fmt.Sprintf("EvBudget%d", i), fmt.Sprintf("U%d", i), "tell me something")
				in.Thread = fmt.Sprintf("1700000000.%06d", i+1)
				res, err := svc.Submit(ctx, in)
				if err != nil {
					t.Error(err)
					return
				}
				convs[i] = res.ConversationID
			})
		}
		wg.Wait()
		answered, refused := 0, 0
		for _, c := range convs {
			conv := c
			waitStatus(t, st, conv, store.ConversationIdle)
			es := entries(t, st, conv, true)
			switch got := kinds(es); got {
			case "user,assistant":
				answered++
			case "user,error":
				refused++
				msg, err := core.Decode[core.ErrorContent](es[1])
				if err != nil || !strings.Contains(msg.Message, "daily budget of agent atlas ($0.50") || !strings.Contains(msg.Message, "resets 3 Nov 00:00 UTC") {
					t.Errorf("refusal %q, %v: want one line naming the budget and its reset", msg.Message, err)
				}
			default:
				t.Errorf("conversation %s: log %s, want an answer or one refusal line", c, got)
			}
		}
		b, err := st.BudgetGet(ctx, &store.BudgetGetParams{Key: "agent:atlas", Period: "day:2026-11-02", Now: s.clock.Now()})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d answered, %d refused; spent %d µ$ of 500000", answered, refused, b.SpentMicroUSD)
		if b.SpentMicroUSD > 500_000 {
			t.Errorf("spent %d µ$: past the $0.50 budget", b.SpentMicroUSD)
		}
		if refused == 0 || answered < 8 {
			t.Errorf("%d answered, %d refused: want the budget to run out after at least 8 answers", answered, refused)
		}
		if b.ReservedMicroUSD != 0 {
			t.Errorf("%d µ$ still reserved after every turn ended", b.ReservedMicroUSD)
		}
		if b.WarnedAt == nil {
			t.Error("the budget passed 80 % and is not marked warned")
		}
		usage, err := st.UsageSummary(ctx, &store.UsageSummaryParams{By: store.UsageByAgent})
		if err != nil || len(usage) != 1 || usage[0].CostMicroUSD != b.SpentMicroUSD || usage[0].Calls != int64(answered) {
			t.Errorf("usage %+v, %v: want %d calls costing what the budget says was spent (%d)", usage, err, answered, b.SpentMicroUSD)
		}
		dm := store.DM("slack", "T1", "UOWNER")
		dm.Run = "budget:agent:atlas:day:2026-11-02"
		bind, err := st.BindingFind(ctx, &store.BindingFindParams{Place: dm})
		if err != nil {
			t.Fatalf("the owner's notice: %v", err)
		}
		notes := entries(t, st, bind.ConversationID, false)
		if len(notes) != 1 || !strings.Contains(textOf(t, notes[0]), "Budget notice: agent atlas has used over 80 % of its daily budget today") {
			t.Errorf("the owner's DM holds %s, want one notice", kinds(notes))
		}
	})
}
