package core_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/headless"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

const zeroLatencyScript = "chunk_delay: 0s\nfallback:\n  text: A short scripted answer in a few words.\n"

// benchService is a service with one agent on a zero-latency scripted
// model; configure, when given, adjusts the agent.
func benchService(b *testing.B, st store.Store, configure ...func(*agent.Agent)) *core.Service {
	b.Helper()
	agents := &agent.Config{Agents: []agent.Agent{{
		Name: "bench", Persona: "You answer.", Model: "scripted:" + writeScriptB(b, zeroLatencyScript),
		MaxTokens: 1000, StepBudget: 25, Answers: agent.Answers{Default: true},
	}}}
	for _, f := range configure {
		f(&agents.Agents[0])
	}
	reg := tool.NewRegistry()
	if err := headless.RegisterBuiltins(reg); err != nil {
		b.Fatal(err)
	}
	svc, err := core.New(core.Options{
		Store: st, Agents: agents, Registry: reg,
		Tools: func(c tool.ContextName) []*tool.Tool { return headless.ToolsFor(reg, c) },
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	return svc
}

func writeScriptB(b *testing.B, body string) string {
	b.Helper()
	p := b.TempDir() + "/script.yaml"
	if err := writeFile(p, body); err != nil {
		b.Fatal(err)
	}
	return p
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(float64(len(s))*p))]
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
				conv, err := svc.CreateConversation(ctx, "", "api", "u")
				if err != nil {
					b.Fatal(err)
				}
				if _, err := svc.PostMessage(ctx, conv.ID, "u", "hello"); err != nil {
					b.Fatal(err)
				}
				items, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: "bench", Kinds: []string{core.WorkTurn}, Limit: 1, LeaseTTL: time.Minute, Now: time.Now()})
				if err != nil || len(items) != 1 {
					b.Fatalf("claim: %v, %d items", err, len(items))
				}
				start := time.Now()
				if err := svc.RunTurn(ctx, items[0], core.TurnArgs{}); err != nil {
					b.Fatal(err)
				}
				turns = append(turns, time.Since(start))
				if _, err := st.WorkComplete(ctx, &store.WorkLeaseParams{ID: items[0].ID, Worker: "bench", Now: time.Now()}); err != nil {
					b.Fatal(err)
				}

				// Baseline: the two writes every turn makes at least.
				start = time.Now()
				if _, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: conv.ID, Kind: store.EntryAssistant, Author: "agent:bench", Content: []byte(`{"text":"A short scripted answer in a few words."}`), Now: time.Now()}); err != nil {
					b.Fatal(err)
				}
				if err := st.UsageRecord(ctx, &store.Usage{ConversationID: conv.ID, Provider: "scripted", Model: "x", CreatedAt: time.Now()}); err != nil {
					b.Fatal(err)
				}
				base = append(base, time.Since(start))
			}
			p50, p99 := percentile(turns, 0.5), percentile(turns, 0.99)
			b.ReportMetric(float64(p50.Microseconds())/1000, "turn_p50_ms")
			b.ReportMetric(float64(p99.Microseconds())/1000, "turn_p99_ms")
			b.ReportMetric(float64(percentile(base, 0.5).Microseconds())/1000, "baseline_p50_ms")
			b.ReportMetric(float64(p50)/float64(max(1, percentile(base, 0.5))), "turn/baseline_p50")
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
