package core_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/internal/bench"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// TestSummaryKeepsUpWhenItsItemCannotRun: turns of one conversation run
// one after another and the summary item they queue never gets its turn
// (as under a steady stream of messages, where a turn is always waiting
// before it). The turns queue one summary item between them, not one each,
// and the turn that finds the context past the budget and a fifth writes
// the summary itself before its model call.
func TestSummaryKeepsUpWhenItsItemCannotRun(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		ctx := context.Background()
		script, err := bench.WriteScript(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		svc, err := bench.TurnService(ctx, st, script, func(a *config.Agent) {
			a.Context = config.ContextSettings{SummarizeAt: 1000, KeepRecent: 200}
		})
		if err != nil {
			t.Fatal(err)
		}
		hs := core.NewHandlers()
		core.AddHandler(hs, svc.RunTurn)
		core.AddHandler(hs, svc.RunSummarize)
		conv, err := svc.CreateConversation(ctx, "", "api", "u")
		if err != nil {
			t.Fatal(err)
		}
		queued := func() int {
			items, err := st.WorkList(ctx, &store.WorkListParams{
				States: []store.WorkState{store.WorkAvailable}, Kind: core.WorkSummarize, ConversationID: &conv.ID,
			})
			if err != nil {
				t.Fatal(err)
			}
			return len(items)
		}
		// About 100 tokens a message: the budget is passed after ten turns,
		// the limit after twelve.
		text := strings.Repeat("The harbour gauge read 3.4 m at dawn. ", 10)
		var most int
		for i := range 30 {
			if _, err := svc.PostMessage(ctx, conv.ID, "u", text); err != nil {
				t.Fatal(err)
			}
			items, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: "test", Kinds: []string{core.WorkTurn}, Limit: 1, LeaseTTL: time.Minute, Now: time.Now()})
			if err != nil || len(items) != 1 {
				t.Fatalf("claiming turn %d: %v (%d items)", i+1, err, len(items))
			}
			if err := hs.Run(ctx, items[0]); err != nil {
				t.Fatalf("running turn %d: %v", i+1, err)
			}
			if _, err := st.WorkComplete(ctx, &store.WorkLeaseParams{ID: items[0].ID, Worker: "test", Now: time.Now()}); err != nil {
				t.Fatal(err)
			}
			most = max(most, queued())
		}
		if most != 1 {
			t.Errorf("up to %d summary items were queued at once; want the turns over the budget to queue one between them", most)
		}
		summary, err := st.EntryLatestSummary(ctx, conv.ID)
		if err != nil {
			t.Fatalf("no summary after 30 turns whose summary item never ran: %v; want the turns to write it", err)
		}
		item, err := st.WorkGet(ctx, *summary.TurnID)
		if err != nil || item.Kind != core.WorkTurn {
			t.Errorf("the summary was written by %v (%v); want a turn", item, err)
		}
	})
}
