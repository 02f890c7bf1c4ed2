package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// seedDoc is longer than the guard's 200 characters, so halving it is the
// threshold that matters.
var seedDoc = "# Atlas\n\n" + strings.Repeat("I answer plainly, check my facts and say when I do not know. ", 8)

// TestPersonalitySeededOnce: the persona seeds version 1 when the agent has
// no document; a restart with another persona (or after a replacement)
// leaves the document as it is.
func TestPersonalitySeededOnce(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		ctx := context.Background()
		start := func(persona string) *core.Service {
			t.Helper()
			svc, err := core.New(core.Options{
				Store: st, Registry: tool.NewRegistry(), Tools: func(tool.ContextName) []*tool.Tool { return nil }, Logger: testenv.Logger(t), Now: newClock().Now,
				Agents: &config.Config{Agents: []config.Agent{{Name: "atlas", Persona: persona, Model: "scripted:" + writeScript(t, "turns:\n  - text: hi\n"), MaxTokens: 100, StepBudget: 5, Answers: config.Answers{Default: true}}}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.Start(ctx); err != nil {
				t.Fatalf("starting the service: %v", err)
			}
			return svc
		}
		p := start("  You plan trips.\n").Personalities()
		doc, err := p.Current(ctx, "atlas")
		if err != nil || doc.Version != 1 || doc.Text != "You plan trips." || doc.Author != core.PersonalitySeedAuthor {
			t.Fatalf("after the first start: %+v, %v; want version 1 seeded from the persona by config", doc, err)
		}
		p = start("You plan holidays.").Personalities()
		if doc, err := p.Current(ctx, "atlas"); err != nil || doc.Version != 1 || doc.Text != "You plan trips." {
			t.Fatalf("after a restart with another persona: %+v, %v; want the first seed kept", doc, err)
		}
		if _, err := p.Replace(ctx, &core.PersonalityReplaceParams{Agent: "atlas", Text: "Operator's.", Author: core.PersonalityOperatorAuthor}); err != nil {
			t.Fatalf("the operator's replacement: %v", err)
		}
		p = start("You plan trips.").Personalities()
		hist, err := p.History(ctx, "atlas", 0)
		if err != nil || len(hist) != 2 || hist[0].Text != "Operator's." || hist[1].Text != "You plan trips." {
			t.Fatalf("history after a replacement and a restart = %+v, %v; want the operator's then the seed, nothing more", hist, err)
		}
		if _, err := p.Current(ctx, "nobody"); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), `no agent named "nobody"`) {
			t.Fatalf("the document of an unknown agent: %v; want ErrNotFound naming it", err)
		}
	})
}

// TestPersonalityGuardOnlyForTheAgent: the agent's replacements are held to
// the guard, the operator's are not.
func TestPersonalityGuardOnlyForTheAgent(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}}
		in := s.start(t, "turns:\n  - text: hi\n")
		ctx := context.Background()
		p := in.svc.Personalities()
		if _, err := p.Replace(ctx, &core.PersonalityReplaceParams{Agent: "atlas", Text: seedDoc, Author: core.PersonalityOperatorAuthor}); err != nil {
			t.Fatal(err)
		}
		half := seedDoc[:len(seedDoc)/2-1]
		_, err := p.Replace(ctx, &core.PersonalityReplaceParams{Agent: "atlas", Text: half, Author: "agent:atlas", Guarded: true})
		if !errors.Is(err, core.ErrPersonalityRefused) || !strings.Contains(err.Error(), "under 50%") {
			t.Fatalf("the agent halving its document: %v; want refused, under 50%%", err)
		}
		_, err = p.Replace(ctx, &core.PersonalityReplaceParams{Agent: "atlas", Text: "Tiny.", Author: "agent:atlas", Guarded: true})
		if !errors.Is(err, core.ErrPersonalityRefused) || !strings.Contains(err.Error(), "fewer than the 200") {
			t.Fatalf("the agent shrinking its document to 5 characters: %v; want refused, fewer than 200", err)
		}
		doc, err := p.Replace(ctx, &core.PersonalityReplaceParams{Agent: "atlas", Text: "Tiny.", Author: core.PersonalityOperatorAuthor})
		if err != nil || doc.Text != "Tiny." {
			t.Fatalf("the operator shrinking it: %+v, %v; want it replaced", doc, err)
		}
	})
}

// TestUpdatePersonalityTool: in a scripted turn the agent's sharp cut is
// refused with a tool error that says why, and a replacement that keeps
// enough is stored as the next version by the agent.
func TestUpdatePersonalityTool(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := &setup{st: open(t), clock: newClock(), tools: &testTools{}}
		grown := seedDoc + "\nI keep a travel log."
		script := `turns:
  - when_last_user_contains: "forget yourself"
    tool_calls:
      - {id: call-cut, name: update_personality, input: {text: "I am nobody."}}
  - after_tool: update_personality
    once: true
    tool_calls:
      - {id: call-grow, name: update_personality, input: {text: ` + quoteYAML(grown) + `}}
  - after_tool: update_personality
    text: "Done."
`
		in := s.startWith(t, script, func(r *tool.Registry) {
			if err := core.RegisterPersonalityTools(r, core.NewPersonalities(s.st, nil, s.clock.Now)); err != nil {
				t.Fatal(err)
			}
		})
		ctx := context.Background()
		p := in.svc.Personalities()
		if _, err := p.Replace(ctx, &core.PersonalityReplaceParams{Agent: "atlas", Text: seedDoc, Author: core.PersonalityOperatorAuthor}); err != nil {
			t.Fatal(err)
		}
		conv, err := in.svc.CreateConversation(ctx, "", "api", "alice")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.svc.PostMessage(ctx, conv.ID, "alice", "please forget yourself"); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, s.st, conv.ID, store.ConversationIdle)
		var results []core.ToolResultContent
		for _, e := range entries(t, s.st, conv.ID, true) {
			if e.Kind == store.EntryToolResult {
				results = append(results, decodeEntry[core.ToolResultContent](t, e))
			}
		}
		if len(results) != 2 {
			t.Fatalf("tool results = %+v; want the refused cut and the stored replacement", results)
		}
		if !results[0].IsError || !strings.Contains(string(results[0].Output), "fewer than the 200") {
			t.Errorf("the cut's result = %s (error %v); want a tool error saying it is under 200 characters", results[0].Output, results[0].IsError)
		}
		if results[1].IsError || !strings.Contains(string(results[1].Output), `"version":3`) {
			t.Errorf("the replacement's result = %s (error %v); want version 3", results[1].Output, results[1].IsError)
		}
		doc, err := p.Current(ctx, "atlas")
		if err != nil || doc.Version != 3 || doc.Text != grown || doc.Author != "agent:atlas" {
			t.Fatalf("current document = %+v, %v; want the agent's replacement as version 3", doc, err)
		}
	})
}

func quoteYAML(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

func decodeEntry[T any](t *testing.T, e *store.Entry) T {
	t.Helper()
	v, err := core.Decode[T](e)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
