package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// anthropicAgent points the agent at a fake Anthropic server.
func anthropicAgent(fake *modeltest.Fake) func(*core.Options) {
	return func(o *core.Options) {
		o.Agents.Agents[0].Model = "anthropic:claude-sonnet-4-5"
		o.Credentials = func(*config.Agent) (model.Credentials, error) {
			return model.Credentials{APIKey: "cache-test-key", BaseURL: fake.URL}, nil
		}
	}
}

// TestPromptPrefixIsCached: across the two steps of a turn (a tool call,
// then the answer) and into the next turn, everything the model is sent
// before the per-turn block is byte-identical, the fake Anthropic server
// sees cache_control on the stable block and on the end of the history,
// and so each later call reads what the one before wrote. The cache reads
// and writes are stored with usage and priced as Anthropic does.
func TestPromptPrefixIsCached(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		fake := modeltest.NewAnthropic(t)
		fake.Push(
			modeltest.Reply{ToolCalls: []modeltest.ToolCall{{Name: "lookup", Input: `{"query":"tides"}`}}},
			modeltest.Reply{Text: "High tide is at noon."},
			modeltest.Reply{Text: "Low tide is at six."},
		)
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}, configure: func(o *core.Options) {
			anthropicAgent(fake)(o)
			o.StableParts = []core.StablePartFunc{func(context.Context, *store.Conversation, *config.Agent) (string, error) {
				return "Rulebook: cite the tide tables.", nil
			}}
		}}
		in := s.start(t, "turns: []\n")
		ctx := context.Background()
		conv, err := in.svc.CreateConversation(ctx, "", "api", "alice")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.svc.PostMessage(ctx, conv.ID, "alice", "When is high tide?"); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, s.st, conv.ID, store.ConversationIdle)
		s.clock.Advance(5*time.Minute + 17*time.Second)
		if _, err := in.svc.PostMessage(ctx, conv.ID, "alice", "And low tide?"); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, s.st, conv.ID, store.ConversationIdle)

		reqs := fake.Requests()
		if len(reqs) != 3 {
			t.Fatalf("model requests = %d, want 3 (two steps, then the next turn)", len(reqs))
		}
		var prefixes [][]byte
		var turns []string
		for i, r := range reqs {
			blocks := r.AnthropicPrompt()
			last := blocks[len(blocks)-1]
			var turn struct {
				Block struct{ Text string } `json:"block"`
			}
			if err := json.Unmarshal(last.JSON, &turn); err != nil || !strings.HasPrefix(turn.Block.Text, "Current time: ") {
				t.Fatalf("request %d ends with %s, want the per-turn block last", i, last.JSON)
			}
			turns = append(turns, turn.Block.Text)
			var marks []string
			for j, b := range blocks {
				if b.Breakpoint {
					marks = append(marks, string(b.JSON[:min(len(b.JSON), 40)]))
					if j == len(blocks)-1 {
						t.Errorf("request %d: the per-turn block carries cache_control", i)
					}
				}
			}
			if len(marks) != 3 || !blocks[len(blocks)-2].Breakpoint {
				t.Errorf("request %d breakpoints = %q, want three: the last tool, the stable block and the end of the history", i, marks)
			}
			system := r.JSON()["system"].([]any)
			if len(system) != 1 || !strings.Contains(system[0].(map[string]any)["text"].(string), "Rulebook: cite the tide tables.") {
				t.Errorf("request %d system = %v, want one stable block with the StableParts in it", i, system)
			}
			var prefix []byte
			for _, b := range blocks[:len(blocks)-1] {
				prefix = append(prefix, b.JSON...)
			}
			prefixes = append(prefixes, prefix)
		}
		for i := 1; i < len(prefixes); i++ {
			if !bytes.HasPrefix(prefixes[i], prefixes[i-1]) {
				t.Errorf("request %d does not start with request %d's prompt before the per-turn block", i, i-1)
			}
		}
		if turns[0] != "Current time: Mon, 02 Nov 2026 09:00 UTC. The latest message is from alice." || turns[0] != turns[1] {
			t.Errorf("per-turn blocks of the two steps = %q, %q; want the same, to the minute", turns[0], turns[1])
		}
		if turns[2] != "Current time: Mon, 02 Nov 2026 09:05 UTC. The latest message is from alice." {
			t.Errorf("next turn's per-turn block = %q, want the new time to the minute", turns[2])
		}

		usage, err := s.st.UsageList(ctx, conv.ID)
		if err != nil || len(usage) != 3 {
			t.Fatalf("usage rows = %d (%v), want 3", len(usage), err)
		}
		if u := usage[0]; u.CachedTokens != 0 || u.CacheWriteTokens == 0 {
			t.Errorf("first call: %d cached, %d written; want the prompt written to the cache", u.CachedTokens, u.CacheWriteTokens)
		}
		for i := 1; i < 3; i++ {
			prev, u := usage[i-1], usage[i]
			if u.CachedTokens != prev.CachedTokens+prev.CacheWriteTokens {
				t.Errorf("call %d read %d cached tokens, want the %d the call before read and wrote", i, u.CachedTokens, prev.CachedTokens+prev.CacheWriteTokens)
			}
		}
		// claude-sonnet-4-5: $3 input, $15 output, reads at 0.1x, writes at
		// 1.25x the input rate, per million tokens (micro-dollars per token).
		for i, u := range usage {
			want := int64(math.Round(float64(u.InputTokens)*3 + float64(u.OutputTokens)*15 +
				float64(u.CachedTokens)*0.3 + float64(u.CacheWriteTokens)*3.75))
			if u.CostMicroUSD != want || u.CacheWriteTokens == 0 {
				t.Errorf("call %d cost = %d micro-dollars for %+v, want %d with cache writes at 1.25x", i, u.CostMicroUSD, *u, want)
			}
		}
	})
}

// TestPromptOrderWithRulebookAndSummary: with a rulebook set and the
// conversation summarised, the prompt is the stable block (personality,
// house rules, then the rulebook, apart from the personality), the summary,
// the history after the seq the summary covers, and the per-turn block
// last. The breakpoints stay on the stable block and the end of the
// history, and the bytes before the per-turn block are identical from one
// turn to the next while the rulebook and the summary do not change.
func TestPromptOrderWithRulebookAndSummary(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		fake := modeltest.NewAnthropic(t)
		long := strings.Repeat("The tide tables for the harbour list two highs and two lows a day. ", 30) // ~500 tokens
		fake.Push(
			modeltest.Reply{Text: "Noted the first table."},
			modeltest.Reply{Text: "Noted the second table."},
			modeltest.Reply{Text: "- Alice shared two tide tables; the agent noted both."},
			modeltest.Reply{Text: "High tide is at noon."},
			modeltest.Reply{Text: "Low tide is at six."},
		)
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}, configure: func(o *core.Options) {
			anthropicAgent(fake)(o)
			o.Agents.Agents[0].Context = config.ContextSettings{SummarizeAt: 1000, KeepRecent: 300}
		}}
		in := s.start(t, "turns: []\n")
		ctx := context.Background()
		conv, err := in.svc.CreateConversation(ctx, "", "api", "alice")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.svc.SetRulebook(ctx, conv.ID, "Answer in one sentence.", "user:alice"); err != nil {
			t.Fatal(err)
		}
		for _, text := range []string{"First table: " + long, "Second table: " + long, "When is high tide?", "And low tide?"} {
			if _, err := in.svc.PostMessage(ctx, conv.ID, "alice", text); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the conversation's work to finish", func() bool {
				items, err := s.st.WorkList(ctx, &store.WorkListParams{ConversationID: &conv.ID, States: []store.WorkState{store.WorkAvailable, store.WorkRunning}})
				return err == nil && len(items) == 0
			})
		}
		reqs := fake.Requests()
		if len(reqs) != 5 {
			t.Fatalf("model requests = %d, want 5 (two turns, a summary, two turns)", len(reqs))
		}
		if !strings.Contains(string(reqs[2].Body), "You keep the running summary") {
			t.Fatalf("request 3 is not the summary request: %.200s", reqs[2].Body)
		}
		var prefixes [][]byte
		for i, r := range reqs[3:] {
			system := r.JSON()["system"].([]any)
			if len(system) != 2 {
				t.Fatalf("turn %d system has %d blocks, want the stable block and the summary", i+3, len(system))
			}
			stable, summary := system[0].(map[string]any), system[1].(map[string]any)
			if _, ok := stable["cache_control"]; !ok {
				t.Errorf("turn %d: the stable block has no cache_control", i+3)
			}
			if _, ok := summary["cache_control"]; ok {
				t.Errorf("turn %d: the summary block carries cache_control; the end of the history caches it", i+3)
			}
			text := stable["text"].(string)
			persona, rules, book := strings.Index(text, "You test things."), strings.Index(text, "How you work:"), strings.Index(text, core.RulebookHeading+"\nAnswer in one sentence.")
			if persona < 0 || rules < persona || book < rules {
				t.Errorf("turn %d stable block = %q; want the personality, the house rules, then the rulebook", i+3, text)
			}
			if st := summary["text"].(string); !strings.Contains(st, "Alice shared two tide tables") {
				t.Errorf("turn %d summary block = %q, want the summary", i+3, st)
			}
			if strings.Contains(string(r.Body), "First table:") {
				t.Errorf("turn %d still sends the summarised first table", i+3)
			}
			blocks := r.AnthropicPrompt()
			var marks int
			for _, b := range blocks {
				if b.Breakpoint {
					marks++
				}
			}
			if marks != 3 || !blocks[len(blocks)-2].Breakpoint {
				t.Errorf("turn %d has %d breakpoints, want three: the last tool, the stable block and the end of the history", i+3, marks)
			}
			var prefix []byte
			for _, b := range blocks[:len(blocks)-1] {
				prefix = append(prefix, b.JSON...)
			}
			prefixes = append(prefixes, prefix)
		}
		if !bytes.HasPrefix(prefixes[1], prefixes[0]) {
			t.Error("the turn after does not start with the turn before's prompt (before the per-turn block)")
		}
		sums := entries(t, s.st, conv.ID, false)
		var summaries int
		for _, e := range sums {
			if e.Kind == store.EntrySummary {
				summaries++
			}
		}
		if summaries != 1 || len(sums) != 9 {
			t.Errorf("log = %s; want the four exchanges and one summary, every entry kept", kinds(sums))
		}
	})
}
