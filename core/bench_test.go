package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/internal/bench"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// benchService is the zero-latency turn service `switchboard bench turn`
// measures (internal/bench); configure, when given, adjusts the agent.
func benchService(b *testing.B, st store.Store, configure ...func(*config.Agent)) *core.Service {
	b.Helper()
	script, err := bench.WriteScript(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	svc, err := bench.TurnService(context.Background(), st, script, configure...)
	if err != nil {
		b.Fatal(err)
	}
	return svc
}

// BenchmarkTurn measures the orchestrator's own cost per turn on Postgres with
// a zero-latency scripted model: load the log, build the prompt, run the
// model, append the reply, record usage, set the conversation's state. The
// baseline, run in the same benchmark, is the store work a turn cannot avoid
// (one entry append plus one usage row), so the ratio is the engine's
// overhead over the bare writes.
func BenchmarkTurn(b *testing.B) {
	for _, d := range []struct {
		name string
		open func(testing.TB) store.Store
	}{
		{"postgres", func(tb testing.TB) store.Store { return testenv.Postgres(tb, "") }},
		{"sqlite", testenv.SQLite},
	} {
		b.Run(d.name, func(b *testing.B) {
			st := d.open(b)
			svc := benchService(b, st)
			ctx := context.Background()
			var turns, base []time.Duration
			for i := 0; i < b.N; i++ {
				turn, bare, err := bench.TurnOnce(ctx, svc)
				if err != nil {
					b.Fatal(err)
				}
				turns, base = append(turns, turn), append(base, bare)
			}
			p50, p99 := bench.Quantile(turns, 0.5), bench.Quantile(turns, 0.99)
			b.ReportMetric(float64(p50.Microseconds())/1000, "turn_p50_ms")
			b.ReportMetric(float64(p99.Microseconds())/1000, "turn_p99_ms")
			b.ReportMetric(float64(bench.Quantile(base, 0.5).Microseconds())/1000, "baseline_p50_ms")
			b.ReportMetric(float64(p50)/float64(max(1, bench.Quantile(base, 0.5))), "turn/baseline_p50")
		})
	}
}

// BenchmarkTurnsThroughput measures turns per second end to end on Postgres:
// messages submitted to many conversations, claimed and run by one worker of
// concurrency 8, woken by NOTIFY.
func BenchmarkTurnsThroughput(b *testing.B) {
	st := testenv.Postgres(b, "")
	svc := benchService(b, st)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	handlers := core.NewHandlers()
	core.AddHandler(handlers, svc.RunTurn)
	w, err := core.NewWorker(core.WorkerOptions{
		Store: st, WorkerID: "bench", Concurrency: 8, PollInterval: 50 * time.Millisecond,
		Handlers: handlers,
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer w.Stop(context.Background())
	n := max(b.N, 50)
	convs := make([]uuid.UUID, n)
	for i := range convs {
		c, err := svc.CreateConversation(ctx, "", "api", "u")
		if err != nil {
			b.Fatal(err)
		}
		convs[i] = c.ID
	}
	b.ResetTimer()
	start := time.Now()
	for _, c := range convs {
		if _, err := svc.PostMessage(ctx, c, "u", "hello"); err != nil {
			b.Fatal(err)
		}
	}
	for {
		items, err := st.WorkList(ctx, &store.WorkListParams{States: []store.WorkState{store.WorkAvailable, store.WorkRunning}, Limit: 1})
		if err != nil {
			b.Fatal(err)
		}
		if len(items) == 0 {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(n)/elapsed.Seconds(), "turns/s")
}
