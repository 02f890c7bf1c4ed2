// Package run holds the pure parts of runs: which steps are ready, how a
// run stands once its steps have moved, what a step's agent is told, what
// a delegated step may use, and how a run reads as text. The service in
// package core moves runs (core/runs.go); the store keeps them.
//
// A run's life:
//
//	plan ──► run (running) ──► steps start when their dependencies are done
//	                          and their class has a free slot
//	step:  pending ──► working ──► done ──► its output feeds its dependents
//	                      │
//	                      └──► failed ──(retry)──► pending
//	run:   every step done ──► completion check ──► done | failed
//	       a step failed, nothing else can run ──► failed
//	       cancel ──► cancelled (working steps' model calls are stopped)
//
// What happens on failure: a step whose turn fails (model error, step
// budget) is failed with the error; the run fails once nothing else can
// run, and its result says which step failed and why. Retry puts the
// failed and cancelled steps back to pending and the run back to running;
// each attempt runs in a fresh conversation of the step's agent.
package run

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// Ready returns the pending steps whose dependencies are all done, in plan
// order.
func Ready(steps []*store.RunStep) []*store.RunStep {
	status := map[string]store.StepStatus{}
	for _, s := range steps {
		status[s.Key] = s.Status
	}
	var out []*store.RunStep
	for _, s := range steps {
		if s.Status != store.StepPending {
			continue
		}
		ok := true
		for _, d := range s.DependsOn {
			if status[d] != store.StepDone {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}

// Outcome says whether a run with these steps is over and how: done when
// every step is done; failed when a step failed or was cancelled and no
// step is working or can still start. A run whose steps still move is not
// over.
func Outcome(steps []*store.RunStep) (over bool, status store.RunStatus) {
	done, broken := 0, 0
	for _, s := range steps {
		switch s.Status {
		case store.StepDone:
			done++
		case store.StepWorking:
			return false, store.RunStatusRunning
		case store.StepFailed, store.StepCancelled:
			broken++
		}
	}
	if done == len(steps) {
		return true, store.RunStatusDone
	}
	if broken > 0 && len(Ready(steps)) == 0 {
		return true, store.RunStatusFailed
	}
	return false, store.RunStatusRunning
}

// StepMessage is what the step's agent is told: the step, its inputs, and
// the output of each step it depends on.
func StepMessage(r *store.Run, s *store.RunStep, steps []*store.RunStep) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Step %q of a run", s.Key)
	if r.Goal != "" {
		fmt.Fprintf(&b, " (goal: %s)", r.Goal)
	}
	fmt.Fprintf(&b, ": %s\n", s.Title)
	if len(s.Inputs) > 0 {
		keys := make([]string, 0, len(s.Inputs))
		for k := range s.Inputs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("\nInputs:\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "- %s: %s\n", k, s.Inputs[k])
		}
	}
	for _, d := range s.DependsOn {
		i := slices.IndexFunc(steps, func(x *store.RunStep) bool { return x.Key == d })
		if i < 0 {
			continue
		}
		fmt.Fprintf(&b, "\nOutput of step %q (%s):\n%s\n", d, steps[i].Agent, strings.TrimSpace(steps[i].Output))
	}
	b.WriteString("\nDo this step and answer with its result.")
	return b.String()
}

// Narrow is what a step may use of the tools its parent may: nil means
// every tool. A step gets at most its parent's tools: its own list within
// the parent's, or the parent's when it has none.
func Narrow(parent, own []string) []string {
	switch {
	case len(parent) == 0:
		return own
	case len(own) == 0:
		return slices.Clone(parent)
	}
	out := []string{}
	for _, t := range own {
		if slices.Contains(parent, t) {
			out = append(out, t)
		}
	}
	return out
}

// Budget is a step's step budget: at most its parent's.
func Budget(parent, own int) int {
	if parent > 0 && (own == 0 || parent < own) {
		return parent
	}
	return own
}

// Mark is a step status as one character-wide sign, for the text views.
func Mark(s store.StepStatus) string {
	switch s {
	case store.StepWorking:
		return "⏳"
	case store.StepDone:
		return "✅"
	case store.StepFailed:
		return "❌"
	case store.StepCancelled:
		return "⏹"
	}
	return "▫️"
}

// Cost formats micro-dollars.
func Cost(micro int64) string { return fmt.Sprintf("$%.4f", float64(micro)/1e6) }

// Summary is a run as text: its status, each step with its agent, status,
// tokens and cost, and the result.
func Summary(r *store.Run, steps []*store.RunStep) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Run %s: %s", ShortID(r), r.Status)
	if r.Goal != "" {
		fmt.Fprintf(&b, " — %s", r.Goal)
	}
	b.WriteString("\n")
	var cost int64
	for _, s := range steps {
		fmt.Fprintf(&b, "%s %s: %s (%s) %s", Mark(s.Status), s.Key, s.Title, s.Agent, s.Status)
		if s.InputTokens+s.OutputTokens > 0 || s.CostMicroUSD > 0 {
			fmt.Fprintf(&b, " · %d in / %d out tokens · %s", s.InputTokens, s.OutputTokens, Cost(s.CostMicroUSD))
		}
		if s.Error != "" {
			fmt.Fprintf(&b, " · %s", firstLine(s.Error))
		}
		b.WriteString("\n")
		if line := ChangesLine(s); line != "" {
			fmt.Fprintf(&b, "   ↳ %s\n", line)
		}
		cost += s.CostMicroUSD
	}
	fmt.Fprintf(&b, "Total cost %s", Cost(cost))
	if r.Result != "" {
		fmt.Fprintf(&b, "\n\n%s", r.Result)
	}
	return b.String()
}

// ChangesLine is a coding step's change in one line: its branch, the
// diff's size, where it was delivered and the diff's page; "" for a step
// with no change yet. (The record is core.StepChanges; the fields read
// here are its JSON.)
func ChangesLine(s *store.RunStep) string {
	if len(s.Changes) == 0 {
		return ""
	}
	var c struct {
		Branch      string `json:"branch"`
		Stat        string `json:"stat"`
		Pushed      bool   `json:"pushed"`
		DiffURL     string `json:"diff_url"`
		PullRequest *struct {
			Number int    `json:"number"`
			URL    string `json:"url"`
		} `json:"pull_request"`
	}
	if json.Unmarshal(s.Changes, &c) != nil || c.Branch == "" {
		return ""
	}
	parts := []string{c.Branch}
	if c.Stat != "" {
		parts = append(parts, c.Stat)
	}
	switch {
	case c.PullRequest != nil:
		parts = append(parts, fmt.Sprintf("pull request #%d %s", c.PullRequest.Number, c.PullRequest.URL))
	case c.Pushed:
		parts = append(parts, "pushed")
	}
	if c.DiffURL != "" {
		parts = append(parts, "diff: "+c.DiffURL)
	}
	return strings.Join(parts, " · ")
}

// ShortID is the last eight characters of the run's id, as people type
// it (!run ID accepts it) and as its coding steps' branches are named.
// Not the first eight: a version 7 id starts with its time in
// milliseconds, so runs started within about a minute share them; the
// last ones are random.
func ShortID(r *store.Run) string { return ShortOf(r.ID) }

// ShortOf is ShortID of a run id.
func ShortOf(id uuid.UUID) string {
	s := id.String()
	return s[len(s)-8:]
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > 120 {
		return string(r[:119]) + "…"
	}
	return s
}
