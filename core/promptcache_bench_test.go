package core_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/headless"
	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// BenchmarkPromptCache runs 50-turn conversations against the fake
// Anthropic server, which caches prompts as the real API does, and reports
// the share of input tokens read from the cache from turn 3 on (the goal is
// at least 80 %), and the prompt and cache-write tokens per turn.
func BenchmarkPromptCache(b *testing.B) {
	const turns = 50
	st := testenv.SQLite(b)
	fake := modeltest.NewAnthropic(b)
	fake.Default(modeltest.Reply{Text: "Here is a considered answer of a sentence or two, as an agent in a chat would write, with a detail or two to go on."})
	agents := &agent.Config{Agents: []agent.Agent{{
		Name: "bench", Persona: "You answer questions about the tides, briefly and with care.", Model: "anthropic:claude-sonnet-4-5",
		MaxTokens: 1000, StepBudget: 25, Answers: agent.Answers{Default: true},
	}}}
	reg := tool.NewRegistry()
	if err := headless.RegisterBuiltins(reg); err != nil {
		b.Fatal(err)
	}
	svc, err := core.New(core.Options{
		Store: st, Agents: agents, Registry: reg,
		Tools: func(c tool.ContextName) []*tool.Tool { return headless.ToolsFor(reg, c) },
		Credentials: func(*agent.Agent) (model.Credentials, error) {
			return model.Credentials{APIKey: "bench-key", BaseURL: fake.URL}, nil
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := svc.Start(ctx); err != nil {
		b.Fatal(err)
	}
	var cached, prompt, written, calls int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		conv, err := svc.CreateConversation(ctx, "", "api", "u")
		if err != nil {
			b.Fatal(err)
		}
		for turn := 1; turn <= turns; turn++ {
			if _, err := svc.PostMessage(ctx, conv.ID, "u", fmt.Sprintf("Question %d: when is the next high tide at the harbour, and how high?", turn)); err != nil {
				b.Fatal(err)
			}
			items, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: "bench", Kinds: []string{core.WorkTurn}, Limit: 1, LeaseTTL: time.Minute, Now: time.Now()})
			if err != nil || len(items) != 1 {
				b.Fatalf("claim: %v, %d items", err, len(items))
			}
			if err := svc.RunTurn(ctx, items[0], core.TurnArgs{}); err != nil {
				b.Fatal(err)
			}
			if _, err := st.WorkComplete(ctx, &store.WorkLeaseParams{ID: items[0].ID, Worker: "bench", Now: time.Now()}); err != nil {
				b.Fatal(err)
			}
		}
		usage, err := st.UsageList(ctx, conv.ID)
		if err != nil || len(usage) != turns {
			b.Fatalf("usage rows = %d (%v), want one per turn", len(usage), err)
		}
		for _, u := range usage[2:] {
			cached += u.CachedTokens
			written += u.CacheWriteTokens
			prompt += u.InputTokens + u.CachedTokens + u.CacheWriteTokens
			calls++
		}
	}
	b.StopTimer()
	share := float64(cached) / float64(max(1, prompt))
	b.ReportMetric(100*share, "cached_%_from_turn3")
	b.ReportMetric(float64(prompt)/float64(max(1, calls)), "prompt_tokens/turn")
	b.ReportMetric(float64(written)/float64(max(1, calls)), "cache_write_tokens/turn")
	if share < 0.8 {
		b.Errorf("cached share of input tokens from turn 3 on = %.1f %%, want at least 80 %%", 100*share)
	}
}
