package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/headless"
	"github.com/switchboardhq/switchboard/store"
)

// ZeroLatencyScript is a scripted model that answers every message at once,
// in a few words: what is left of a turn's time is the engine's own.
const ZeroLatencyScript = "chunk_delay: 0s\nfallback:\n  text: A short scripted answer in a few words.\n"

// WriteScript writes the zero-latency script into dir and returns its path.
func WriteScript(dir string) (string, error) {
	p := filepath.Join(dir, "zero-latency.yaml")
	if err := os.WriteFile(p, []byte(ZeroLatencyScript), 0o600); err != nil {
		return "", fmt.Errorf("writing the bench model script: %w", err)
	}
	return p, nil
}

// TurnService is a started core.Service on st with one agent, "bench", on
// the zero-latency scripted model at scriptPath, and the built-in tools;
// configure, when given, adjusts the agent.
func TurnService(ctx context.Context, st store.Store, scriptPath string, configure ...func(*config.Agent)) (*core.Service, error) {
	agents := &config.Config{Agents: []config.Agent{{
		Name: "bench", Persona: "You answer.", Model: "scripted:" + scriptPath,
		MaxTokens: 1000, StepBudget: 25, Answers: config.Answers{Default: true},
	}}}
	for _, f := range configure {
		f(&agents.Agents[0])
	}
	reg := tool.NewRegistry()
	if err := headless.RegisterBuiltins(reg); err != nil {
		return nil, err
	}
	svc, err := core.New(core.Options{
		Store: st, Agents: agents, Registry: reg,
		Tools: func(c tool.ContextName) []*tool.Tool { return headless.ToolsFor(reg, c) },
	})
	if err != nil {
		return nil, err
	}
	if err := svc.Start(ctx); err != nil {
		return nil, err
	}
	return svc, nil
}

// TurnOnce posts a message to a new conversation and runs its turn, as a
// worker would (claim, RunTurn, complete), returning the time RunTurn took.
// base is then measured: the store work every turn does at least (one entry
// append and one usage row), in the same conversation.
func TurnOnce(ctx context.Context, svc *core.Service) (turn, base time.Duration, err error) {
	st := svc.Store()
	conv, err := svc.CreateConversation(ctx, "", "api", "u")
	if err != nil {
		return 0, 0, err
	}
	if _, err := svc.PostMessage(ctx, conv.ID, "u", "hello"); err != nil {
		return 0, 0, err
	}
	items, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: "bench", Kinds: []string{core.WorkTurn}, Limit: 1, LeaseTTL: time.Minute, Now: time.Now()})
	if err != nil {
		return 0, 0, err
	}
	if len(items) != 1 {
		return 0, 0, fmt.Errorf("claimed %d turns, want 1", len(items))
	}
	start := time.Now()
	if err := svc.RunTurn(ctx, items[0], core.TurnArgs{}); err != nil {
		return 0, 0, err
	}
	turn = time.Since(start)
	if _, err := st.WorkComplete(ctx, &store.WorkLeaseParams{ID: items[0].ID, Worker: "bench", Now: time.Now()}); err != nil {
		return 0, 0, err
	}
	start = time.Now()
	if _, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: conv.ID, Kind: store.EntryAssistant, Author: "agent:bench",
		Content: []byte(`{"text":"A short scripted answer in a few words."}`), Now: time.Now()}); err != nil {
		return 0, 0, err
	}
	if err := st.UsageRecord(ctx, &store.Usage{ConversationID: conv.ID, Provider: "scripted", Model: "x", CreatedAt: time.Now()}); err != nil {
		return 0, 0, err
	}
	return turn, time.Since(start), nil
}

func runTurn(ctx context.Context, e *env) (*Result, error) {
	n := e.opts.size(300, 5)
	script, err := WriteScript(e.dir)
	if err != nil {
		return nil, err
	}
	svc, err := TurnService(ctx, e.st, script)
	if err != nil {
		return nil, err
	}
	turns, bases := make([]time.Duration, 0, n), make([]time.Duration, 0, n)
	for range n {
		t, b, err := TurnOnce(ctx, svc)
		if err != nil {
			return nil, err
		}
		turns, bases = append(turns, t), append(bases, b)
	}
	return &Result{
		Metric: "turn p50", Value: ms(Quantile(turns, 0.5)), Unit: "ms",
		Baseline: "append + usage row p50", BaselineValue: ms(Quantile(bases, 0.5)),
		Extra: map[string]float64{"turn_p99_ms": ms(Quantile(turns, 0.99)), "n": float64(n)},
	}, nil
}
