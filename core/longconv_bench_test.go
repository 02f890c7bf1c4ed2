package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/internal/bench"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// seedLog appends n alternating messages and answers to conv in one
// transaction.
func seedLog(b *testing.B, st store.Store, conv uuid.UUID, n int) {
	b.Helper()
	ctx := context.Background()
	err := st.InTx(ctx, func(q store.Queries) error {
		for i := 1; i <= n; i++ {
			kind, author, content := store.EntryUser, store.UserAuthor("u"), any(core.UserContent{Text: fmt.Sprintf("Message %d: the harbour gauge read 3.%d m this morning.", i, i%10), UserID: "u"})
			if i%2 == 0 {
				kind, author, content = store.EntryAssistant, store.AgentAuthor("bench"), core.AssistantContent{Text: fmt.Sprintf("Reply %d: noted.", i)}
			}
			raw, _ := json.Marshal(content)
			if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: conv, Kind: kind, Author: author, Content: raw}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatalf("seeding %d entries: %v", n, err)
	}
}

// runOne claims and runs the next item of kinds, as the worker would.
func runOne(b *testing.B, st store.Store, hs *core.Handlers, kinds ...string) (*store.WorkItem, time.Duration, bool) {
	b.Helper()
	ctx := context.Background()
	items, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: "bench", Kinds: kinds, Limit: 1, LeaseTTL: time.Minute, Now: time.Now()})
	if err != nil {
		b.Fatal(err)
	}
	if len(items) == 0 {
		return nil, 0, false
	}
	start := time.Now()
	if err := hs.Run(ctx, items[0]); err != nil {
		b.Fatalf("running %s item: %v", items[0].Kind, err)
	}
	took := time.Since(start)
	if _, err := st.WorkComplete(ctx, &store.WorkLeaseParams{ID: items[0].ID, Worker: "bench", Now: time.Now()}); err != nil {
		b.Fatal(err)
	}
	return items[0], took, true
}

// BenchmarkLongConversationTurn measures a turn in a conversation of
// 10,000 entries against one in a conversation of 10, in the same run, on a
// zero-latency scripted model (the goal is at most 1.5x). The long one was
// summarised by the real summary path first, so its turn reads the latest
// summary and the entries after it, not 10,000 rows. The agent keeps about
// as many tokens verbatim after a summary (keep_recent 200) as the short
// conversation holds, so the two send contexts of a size and the ratio is
// the cost of the log's length alone.
func BenchmarkLongConversationTurn(b *testing.B) {
	for _, d := range []struct {
		name string
		open func(testing.TB) store.Store
	}{
		{"sqlite", testenv.SQLite},
		{"postgres", func(tb testing.TB) store.Store { return testenv.Postgres(tb, "") }},
	} {
		b.Run(d.name, func(b *testing.B) {
			st := d.open(b)
			svc := benchService(b, st, func(a *config.Agent) {
				a.Context = config.ContextSettings{SummarizeAt: 2000, KeepRecent: 200}
			})
			hs := core.NewHandlers()
			core.AddHandler(hs, svc.RunTurn)
			core.AddHandler(hs, svc.RunSummarize)
			ctx := context.Background()
			short, err := svc.CreateConversation(ctx, "", "api", "u")
			if err != nil {
				b.Fatal(err)
			}
			long, err := svc.CreateConversation(ctx, "", "api", "u")
			if err != nil {
				b.Fatal(err)
			}
			// summarize runs the queued summaries, as the worker does after
			// a turn, and says how many.
			summarize := func() int {
				n := 0
				for {
					if _, _, ok := runOne(b, st, hs, core.WorkSummarize); !ok {
						return n
					}
					n++
				}
			}
			seedLog(b, st, short.ID, 10)
			seedLog(b, st, long.ID, 10000)
			// One turn over the budget, then its summary (in rounds).
			if _, err := svc.PostMessage(ctx, long.ID, "u", "hello"); err != nil {
				b.Fatal(err)
			}
			runOne(b, st, hs, core.WorkTurn)
			if summarize() == 0 {
				b.Fatal("a turn of 10,000 entries queued no summary")
			}
			if _, err := st.EntryLatestSummary(ctx, long.ID); err != nil {
				b.Fatalf("the long conversation has no summary: %v", err)
			}

			turn := func(conv uuid.UUID) time.Duration {
				if _, err := svc.PostMessage(ctx, conv, "u", "hello"); err != nil {
					b.Fatal(err)
				}
				_, took, ok := runOne(b, st, hs, core.WorkTurn)
				if !ok {
					b.Fatal("no turn queued")
				}
				b.StopTimer()
				summarize()
				b.StartTimer()
				return took
			}
			var shorts, longs []time.Duration
			b.ResetTimer()
			for range b.N {
				shorts = append(shorts, turn(short.ID))
				longs = append(longs, turn(long.ID))
			}
			b.StopTimer()
			ps, pl := bench.Quantile(shorts, 0.5), bench.Quantile(longs, 0.5)
			b.ReportMetric(float64(ps.Microseconds())/1000, "turn_10_p50_ms")
			b.ReportMetric(float64(pl.Microseconds())/1000, "turn_10000_p50_ms")
			ratio := float64(pl) / float64(max(1, ps))
			b.ReportMetric(ratio, "long/short_p50")
			if b.N >= 20 && ratio > 1.5 {
				b.Errorf("a turn of 10,000 entries takes %.2fx one of 10 (p50 %s against %s); want at most 1.5x", ratio, pl, ps)
			}
		})
	}
}
