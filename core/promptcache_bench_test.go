package core_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/headless"
	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// BenchmarkPromptCache runs 50-turn conversations against the fake
// Anthropic server, which caches prompts as the real API does, with the
// whole log sent every turn and with summarising on (a small budget, so it
// starts within the 50 turns). For each it reports the share of the turns'
// input tokens read from the cache from turn 3 on (the goal, for the whole
// log, is at least 80 %), the turns' prompt and cache-write tokens per turn,
// and with summaries the summary calls' tokens and all input per turn.
func BenchmarkPromptCache(b *testing.B) {
	for _, v := range []struct {
		name    string
		context config.ContextSettings
	}{
		{"whole_log", config.ContextSettings{SummarizeAt: -1}},
		{"summarised", config.ContextSettings{SummarizeAt: 1500, KeepRecent: 300}},
	} {
		b.Run(v.name, func(b *testing.B) { benchPromptCache(b, v.context) })
	}
}

func benchPromptCache(b *testing.B, cs config.ContextSettings) {
	const turns = 50
	st := testenv.SQLite(b)
	fake := modeltest.NewAnthropic(b)
	fake.Default(modeltest.Reply{Text: "Here is a considered answer of a sentence or two, as an agent in a chat would write, with a detail or two to go on."})
	agents := &config.Config{Agents: []config.Agent{{
		Name: "bench", Persona: "You answer questions about the tides, briefly and with care.", Model: "anthropic:claude-sonnet-4-5",
		MaxTokens: 1000, StepBudget: 25, Answers: config.Answers{Default: true}, Context: cs,
	}}}
	reg := tool.NewRegistry()
	if err := headless.RegisterBuiltins(reg); err != nil {
		b.Fatal(err)
	}
	svc, err := core.New(core.Options{
		Store: st, Agents: agents, Registry: reg,
		Tools: func(c tool.ContextName) []*tool.Tool { return headless.ToolsFor(reg, c) },
		Credentials: func(*config.Agent) (model.Credentials, error) {
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
	hs := core.NewHandlers()
	core.AddHandler(hs, svc.RunTurn)
	core.AddHandler(hs, svc.RunSummarize)
	run := func(kind string) bool {
		items, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: "bench", Kinds: []string{kind}, Limit: 1, LeaseTTL: time.Minute, Now: time.Now()})
		if err != nil {
			b.Fatal(err)
		}
		if len(items) == 0 {
			return false
		}
		if err := hs.Run(ctx, items[0]); err != nil {
			b.Fatal(err)
		}
		if _, err := st.WorkComplete(ctx, &store.WorkLeaseParams{ID: items[0].ID, Worker: "bench", Now: time.Now()}); err != nil {
			b.Fatal(err)
		}
		return true
	}
	var cached, prompt, written, calls, summaryIn, summaryCalls, allIn int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		conv, err := svc.CreateConversation(ctx, "", "api", "u")
		if err != nil {
			b.Fatal(err)
		}
		turnIDs := map[uuid.UUID]int{}
		for turn := 1; turn <= turns; turn++ {
			if _, err := svc.PostMessage(ctx, conv.ID, "u", fmt.Sprintf("Question %d: when is the next high tide at the harbour, and how high?", turn)); err != nil {
				b.Fatal(err)
			}
			items, err := st.WorkList(ctx, &store.WorkListParams{ConversationID: &conv.ID, Kind: core.WorkTurn, States: []store.WorkState{store.WorkAvailable}})
			if err != nil || len(items) != 1 {
				b.Fatalf("queued turns: %v, %d items", err, len(items))
			}
			turnIDs[items[0].ID] = turn
			if !run(core.WorkTurn) {
				b.Fatal("no turn to run")
			}
			for run(core.WorkSummarize) {
			}
		}
		usage, err := st.UsageList(ctx, conv.ID)
		if err != nil {
			b.Fatal(err)
		}
		for _, u := range usage {
			in := u.InputTokens + u.CachedTokens + u.CacheWriteTokens
			allIn += in
			turn, isTurn := turnIDs[*u.TurnID]
			if !isTurn {
				summaryIn += in
				summaryCalls++
				continue
			}
			if turn >= 3 {
				cached += u.CachedTokens
				written += u.CacheWriteTokens
				prompt += in
				calls++
			}
		}
	}
	b.StopTimer()
	share := float64(cached) / float64(max(1, prompt))
	b.ReportMetric(100*share, "cached_%_from_turn3")
	b.ReportMetric(float64(prompt)/float64(max(1, calls)), "prompt_tokens/turn")
	b.ReportMetric(float64(written)/float64(max(1, calls)), "cache_write_tokens/turn")
	b.ReportMetric(float64(summaryCalls)/float64(b.N), "summary_calls/conversation")
	b.ReportMetric(float64(summaryIn)/float64(b.N*turns), "summary_input_tokens/turn")
	b.ReportMetric(float64(allIn)/float64(b.N*turns), "all_input_tokens/turn")
	if _, _, on := agents.Agents[0].Context.Budget(); !on && share < 0.8 {
		b.Errorf("cached share of input tokens from turn 3 on = %.1f %%, want at least 80 %%", 100*share)
	}
}
