package core_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/internal/bench"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// BenchmarkLongFirstTurn measures the first turn of a conversation of
// 50,000 entries that has no summary yet (one imported, forked or filled
// by channel history) against a turn in a conversation of 10, in the same
// run, on a zero-latency scripted model (the goal is at most 1.5x). The
// long one's turns read a window of its newest entries and leave the
// summary to the item they queue, which never runs here: every turn of it
// comes before its first summary. The agent has the smallest budget the
// settings allow (bench.LongLogContext), so the window is a few dozen
// entries: the ratio is the cost of the log's length, not of a longer
// context. -short uses 5,000 entries.
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
			svc := benchService(b, st, func(a *config.Agent) { a.Context = bench.LongLogContext })
			ctx := context.Background()
			conv, err := svc.CreateConversation(ctx, "", "api", "u")
			if err != nil {
				b.Fatal(err)
			}
			if err := bench.LongLog(ctx, st, conv.ID, long); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			shorts, longs, err := bench.FirstTurns(ctx, svc, conv.ID, b.N)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			ps, pl := bench.Quantile(shorts, 0.5), bench.Quantile(longs, 0.5)
			b.ReportMetric(float64(ps.Microseconds())/1000, "turn_10_p50_ms")
			b.ReportMetric(float64(pl.Microseconds())/1000, fmt.Sprintf("turn_%d_p50_ms", long))
			ratio := float64(pl) / float64(max(1, ps))
			b.ReportMetric(ratio, "long/short_p50")
			if b.N >= 20 && ratio > 1.5 {
				b.Errorf("a first turn of %d entries takes %.2fx one of 10 (p50 %s against %s); want at most 1.5x", long, ratio, pl, ps)
			}
			if _, err := st.EntryLatestSummary(ctx, conv.ID); !errors.Is(err, store.ErrNotFound) {
				b.Fatalf("EntryLatestSummary = %v; want every measured turn to come before the first summary", err)
			}
		})
	}
}
