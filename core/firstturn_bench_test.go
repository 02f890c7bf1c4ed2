package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/internal/bench"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// BenchmarkLongFirstTurn measures the first turn of a conversation of
// 50,000 entries that has no summary yet (one imported, forked or filled by
// channel history) against a turn in one of 10, in the same run, on a
// zero-latency scripted model (the goal is at most 1.5x). The long one's
// turns read a window of the newest entries, its budget's worth, and leave
// the summary to the item they queue, which this benchmark never runs: every
// turn of the long conversation is one before its first summary.
func BenchmarkLongFirstTurn(b *testing.B) {
	long := 50000
	if testing.Short() {
		long = 5000
	}
	for _, d := range []struct {
		name string
		open func(testing.TB) store.Store
	}{
		{"sqlite", testenv.SQLite},
		{"postgres", func(tb testing.TB) store.Store { return testenv.Postgres(tb, "") }},
	} {
		b.Run(d.name, func(b *testing.B) {
			st := d.open(b)
			svc := benchService(b, st, func(a *agent.Agent) {
				a.Context = agent.ContextSettings{SummarizeAt: 1000, KeepRecent: 200}
			})
			hs := core.NewHandlers()
			core.AddHandler(hs, svc.RunTurn)
			ctx := context.Background()
			newConv := func(n int) uuid.UUID {
				c, err := svc.CreateConversation(ctx, "", "api", "u")
				if err != nil {
					b.Fatal(err)
				}
				for done := 0; done < n; done += 5000 {
					seedLog(b, st, c.ID, min(n-done, 5000))
				}
				return c.ID
			}
			turn := func(conv uuid.UUID) time.Duration {
				if _, err := svc.PostMessage(ctx, conv, "u", "hello"); err != nil {
					b.Fatal(err)
				}
				_, took, ok := runOne(b, st, hs, core.WorkTurn)
				if !ok {
					b.Fatal("no turn queued")
				}
				return took
			}
			// The long conversation's turns all come before its first
			// summary, whose item never runs here; each short one is new,
			// so it stays at 10 entries. Each has had a turn before the
			// measured one (the agent has joined it, it has a title).
			longConv := newConv(long)
			turn(longConv)
			var shorts, longs []time.Duration
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				shortConv := newConv(8)
				turn(shortConv)
				b.StartTimer()
				shorts = append(shorts, turn(shortConv))
				longs = append(longs, turn(longConv))
			}
			b.StopTimer()
			ps, pl := bench.Quantile(shorts, 0.5), bench.Quantile(longs, 0.5)
			b.ReportMetric(float64(ps.Microseconds())/1000, "turn_10_p50_ms")
			b.ReportMetric(float64(pl.Microseconds())/1000, "turn_50000_p50_ms")
			ratio := float64(pl) / float64(max(1, ps))
			b.ReportMetric(ratio, "long/short_p50")
			if b.N >= 20 && ratio > 1.5 {
				b.Errorf("a first turn of %d entries takes %.2fx one of 10 (p50 %s against %s); want at most 1.5x", long, ratio, pl, ps)
			}
			if _, err := st.EntryLatestSummary(ctx, longConv); err == nil {
				b.Fatal("the long conversation was summarised; want every measured turn to come before its first summary")
			}
		})
	}
}
