package run

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func steps(spec ...string) []*store.RunStep {
	// spec: "key:status:dep,dep"
	var out []*store.RunStep
	for _, s := range spec {
		parts := strings.Split(s, ":")
		st := &store.RunStep{Key: parts[0], Status: store.StepStatus(parts[1]), Agent: "a", Title: parts[0]}
		if len(parts) > 2 && parts[2] != "" {
			st.DependsOn = strings.Split(parts[2], ",")
		}
		out = append(out, st)
	}
	return out
}

func keys(ss []*store.RunStep) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Key)
	}
	return out
}

func TestReadyAndOutcome(t *testing.T) {
	cases := []struct {
		name   string
		steps  []*store.RunStep
		ready  []string
		over   bool
		status store.RunStatus
	}{
		{"fresh: roots ready", steps("a:pending", "b:pending:a", "c:pending"), []string{"a", "c"}, false, store.RunStatusRunning},
		{"dependency done", steps("a:done", "b:pending:a", "c:working"), []string{"b"}, false, store.RunStatusRunning},
		{"waits on two", steps("a:done", "b:working", "c:pending:a,b"), nil, false, store.RunStatusRunning},
		{"all done", steps("a:done", "b:done:a"), nil, true, store.RunStatusDone},
		{"failed, dependents stuck", steps("a:done", "b:failed:a", "c:pending:b"), nil, true, store.RunStatusFailed},
		{"failed but another branch can go on", steps("a:failed", "b:pending"), []string{"b"}, false, store.RunStatusRunning},
		{"failed while another works", steps("a:failed", "b:working"), nil, false, store.RunStatusRunning},
		{"cancelled", steps("a:cancelled", "b:pending:a"), nil, true, store.RunStatusFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := keys(Ready(c.steps)); !slices.Equal(got, c.ready) {
				t.Errorf("Ready = %v, want %v", got, c.ready)
			}
			if over, status := Outcome(c.steps); over != c.over || status != c.status {
				t.Errorf("Outcome = %v %s, want %v %s", over, status, c.over, c.status)
			}
		})
	}
}

func TestNarrowOnlyNarrows(t *testing.T) {
	cases := []struct {
		parent, own, want []string
	}{
		{nil, nil, nil},                                         // both may use every tool
		{nil, []string{"a"}, []string{"a"}},                     // the step's own list
		{[]string{"a", "b"}, nil, []string{"a", "b"}},           // at most the parent's
		{[]string{"a", "b"}, []string{"b", "c"}, []string{"b"}}, // c is not the parent's
		{[]string{"a"}, []string{"c"}, []string{}},              // nothing in common: no tools
	}
	for _, c := range cases {
		if got := Narrow(c.parent, c.own); !slices.Equal(got, c.want) || (c.want != nil && got == nil) {
			t.Errorf("Narrow(%v, %v) = %#v, want %#v", c.parent, c.own, got, c.want)
		}
	}
	if Budget(10, 25) != 10 || Budget(25, 10) != 10 || Budget(0, 7) != 7 || Budget(5, 0) != 5 {
		t.Error("Budget must be the lower of the two, a zero meaning unset")
	}
}

func TestStepMessageCarriesInputsAndDependencies(t *testing.T) {
	ss := steps("find:done", "fix:pending:find")
	ss[0].Output, ss[0].Agent = "it is in parser.go", "scout"
	ss[1].Inputs = map[string]string{"repo": "sb", "branch": "main"}
	msg := StepMessage(&store.Run{ID: uuid.New(), Goal: "ship"}, ss[1], ss)
	for _, want := range []string{`Step "fix" of a run (goal: ship): fix`, "- branch: main\n- repo: sb", `Output of step "find" (scout):` + "\nit is in parser.go"} {
		if !strings.Contains(msg, want) {
			t.Errorf("step message %q lacks %q", msg, want)
		}
	}
}

func TestChangesLine(t *testing.T) {
	st := &store.RunStep{Key: "fix", Title: "Fix", Agent: "coder", Status: store.StepDone,
		Changes: []byte(`{"branch":"switchboard/run-1a2b3c4d-fix","stat":"1 file changed, 2 insertions(+), 0 deletions(-)","pushed":true,"pull_request":{"number":4,"url":"http://127.0.0.1:1/pull/4"},"diff_url":"http://127.0.0.1:1/?view=artifacts&artifact=x"}`)}
	want := "switchboard/run-1a2b3c4d-fix · 1 file changed, 2 insertions(+), 0 deletions(-) · pull request #4 http://127.0.0.1:1/pull/4 · diff: http://127.0.0.1:1/?view=artifacts&artifact=x"
	if got := ChangesLine(st); got != want {
		t.Errorf("ChangesLine = %q\nwant %q", got, want)
	}
	if got := Summary(&store.Run{Status: store.RunStatusDone}, []*store.RunStep{st}); !strings.Contains(got, "\n   ↳ "+want+"\n") {
		t.Errorf("the summary does not show the change:\n%s", got)
	}
	if got := ChangesLine(&store.RunStep{}); got != "" {
		t.Errorf("a step without changes: %q", got)
	}
}
