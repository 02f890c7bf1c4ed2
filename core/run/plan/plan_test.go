package plan

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

var roster = Roster{
	Agents: []string{"lead", "scout", "coder", "writer"},
	Roles:  map[string][]string{"specialist": {"scout", "coder"}, "research": {"scout"}},
}

const good = `{"goal": "ship it", "steps": [
  {"id": "find", "title": "Find the bug", "agent": "scout"},
  {"id": "fix", "title": "Fix it", "agent": "coder", "inputs": {"repo": "sb"}, "depends_on": ["find"]},
  {"id": "tell", "title": "Tell people", "role": "research", "depends_on": ["fix"]}
]}`

func TestScanPlan(t *testing.T) {
	cases := []struct {
		name, text string
	}{
		{"plain", good},
		{"fenced", "Here is my plan:\n```json\n" + good + "\n```\nThat's all."},
		{"prose wrapped, no fence", "Sure! I'll split this up. " + good + " Let me know if that works {ok}."},
		{"missing closing fence", "Plan:\n```json\n" + good},
		{"missing closing fence and brace", "Plan:\n```\n" + strings.TrimSuffix(strings.TrimSpace(good), "}")},
		{"trailing commas", strings.ReplaceAll(strings.ReplaceAll(good, `"scout"}`, `"scout",}`), `]}`, `],}`)},
		{"smart quotes", strings.ReplaceAll(strings.ReplaceAll(good, `"`, "\u201c"), "\u201c:", "\u201d:")},
		{"stray brace before", "Use {curly} braces? No. " + good},
		{"other object first", `{"note": "hi"} then ` + good},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse(c.text, roster)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(p.Steps) != 3 || p.Steps[1].ID != "fix" || p.Steps[1].Inputs["repo"] != "sb" || p.Steps[2].DependsOn[0] != "fix" {
				t.Fatalf("plan = %+v, want the three steps of good", p)
			}
			if got := roster.Resolve(p.Steps[2]); got != "scout" {
				t.Fatalf("role research resolved to %q, want scout", got)
			}
		})
	}
}

func TestScanKeepsSmartQuotesInsideStrings(t *testing.T) {
	raw, err := Scan(`{"steps": [{"id": "a", "title": "Say \u201chello\u201d", "agent": "scout"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if p.Steps[0].Title != "Say \u201chello\u201d" {
		t.Fatalf("title = %q", p.Steps[0].Title)
	}
}

func TestLooks(t *testing.T) {
	for text, want := range map[string]bool{
		good:                               true,
		"I will take three steps {maybe}.": false,
		`{"goal": "x"}`:                    false,
		"Plan: {\"steps\": [,]":            true,
	} {
		if got := Looks(text); got != want {
			t.Errorf("Looks(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestScanNoPlan(t *testing.T) {
	for _, text := range []string{"", "no json here", "}}}", "[1,2]", "{not json at all"} {
		if _, err := Scan(text); !errors.Is(err, ErrNoPlan) {
			t.Errorf("Scan(%q) = %v, want ErrNoPlan", text, err)
		}
	}
}

func TestValidateNamesTheField(t *testing.T) {
	cases := []struct {
		name, plan string
		want       []string
	}{
		{"unknown agent", `{"steps":[{"id":"a","title":"x","agent":"ghost"}]}`, []string{`steps[0].agent: no agent named "ghost"`}},
		{"unknown role", `{"steps":[{"id":"a","title":"x","role":"pilot"}]}`, []string{`steps[0].role: no agent has role or domain "pilot"`}},
		{"duplicate id", `{"steps":[{"id":"a","title":"x","agent":"scout"},{"id":"a","title":"y","agent":"coder"}]}`, []string{`steps[1].id: duplicate id "a" (also steps[0])`}},
		{"cycle", `{"steps":[{"id":"a","title":"x","agent":"scout","depends_on":["c"]},{"id":"b","title":"y","agent":"coder","depends_on":["a"]},{"id":"c","title":"z","agent":"coder","depends_on":["b"]}]}`, []string{`steps[0].depends_on: cycle: a → c → b → a`}},
		{"self", `{"steps":[{"id":"a","title":"x","agent":"scout","depends_on":["a"]}]}`, []string{`steps[0].depends_on[0]: step "a" depends on itself`}},
		{"missing dep", `{"steps":[{"id":"a","title":"x","agent":"scout","depends_on":["zz"]}]}`, []string{`steps[0].depends_on[0]: no step with id "zz"`}},
		{"no title, both", `{"steps":[{"id":"a","agent":"scout","role":"research"}]}`, []string{"steps[0].title: is required", "steps[0].agent: give agent or role, not both"}},
		{"unknown field", `{"steps":[{"id":"a","title":"x","agent":"scout","priority":1}]}`, []string{`plan: does not match the schema: json: unknown field "priority"`}},
		{"no steps", `{"goal":"x","steps":[]}`, []string{"steps: the plan has no steps"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.plan, roster)
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("Parse = %v, want Errors", err)
			}
			if len(errs) != len(c.want) {
				t.Fatalf("errors = %q, want %q", errs.Error(), c.want)
			}
			for i, w := range c.want {
				if !strings.HasPrefix(errs[i].Error(), w) {
					t.Errorf("error %d = %q, want %q", i, errs[i].Error(), w)
				}
			}
		})
	}
}

func TestExtractRetriesOnce(t *testing.T) {
	bad := `Plan: {"steps":[{"id":"a","title":"x","agent":"ghost"}]}`
	t.Run("corrected after one retry", func(t *testing.T) {
		var asked []string
		p, revised, err := Extract(context.Background(), bad, roster, func(_ context.Context, problems string) (string, error) {
			asked = append(asked, problems)
			return "Fixed:\n```json\n" + good + "\n```", nil
		})
		if err != nil || !revised || len(p.Steps) != 3 {
			t.Fatalf("Extract = %v, %v, %v; want the corrected plan after a retry", p, revised, err)
		}
		if len(asked) != 1 || !strings.Contains(asked[0], `steps[0].agent: no agent named "ghost"`) {
			t.Fatalf("the model was told %q, want one message naming steps[0].agent", asked)
		}
	})
	t.Run("fails again", func(t *testing.T) {
		calls := 0
		_, revised, err := Extract(context.Background(), bad, roster, func(context.Context, string) (string, error) {
			calls++
			return bad, nil
		})
		var errs Errors
		if !errors.As(err, &errs) || !revised || calls != 1 {
			t.Fatalf("Extract = %v (revised %v, %d calls), want Errors after exactly one retry", err, revised, calls)
		}
	})
	t.Run("valid needs no retry", func(t *testing.T) {
		_, revised, err := Extract(context.Background(), good, roster, func(context.Context, string) (string, error) {
			t.Fatal("asked again for a valid plan")
			return "", nil
		})
		if err != nil || revised {
			t.Fatalf("Extract = %v, %v", revised, err)
		}
	})
}

// FuzzScanPlan: Scan never panics, and what it returns is a JSON object.
func FuzzScanPlan(f *testing.F) {
	for _, s := range []string{good, "```json\n" + good, "text {\"steps\": [1,],} text", "{\u201csteps\u201d: []}", "{", "}{", `{"a":"\"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		raw, err := Scan(text)
		if err != nil {
			if !errors.Is(err, ErrNoPlan) {
				t.Fatalf("Scan error %v is not ErrNoPlan", err)
			}
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("Scan returned %q, not a JSON object: %v", raw, err)
		}
		// Whatever it found, validation must not panic either.
		if p, err := Decode(raw); err == nil {
			_ = Validate(p, roster)
		}
	})
}
