package core_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/run"
	"github.com/switchboardhq/switchboard/core/run/coding"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// The sweep removes coding worktrees of runs over: a done or cancelled
// run's at once (a crash between the end and the removal left them), a
// failed run's after runs.keep_failed_worktrees, one of no known run once
// it is as old; a running run's stays.
func TestSweepWorktrees(t *testing.T) {
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		ctx := context.Background()
		clk := newClock()
		root := t.TempDir()
		repos, err := coding.New(coding.Options{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		svc, err := core.New(core.Options{
			Store: st, Registry: tool.NewRegistry(), Tools: func(tool.ContextName) []*tool.Tool { return nil }, Logger: testenv.Logger(t), Now: clk.Now,
			Agents: &config.Config{
				Agents: []config.Agent{{Name: "atlas", Persona: "p", Model: "scripted:" + writeScript(t, "turns:\n  - text: hi\n"), MaxTokens: 100, StepBudget: 5, Answers: config.Answers{Default: true}}},
				Runs:   config.Runs{KeepFailedWorktrees: 6 * time.Hour},
			},
			Coding: repos,
		})
		if err != nil {
			t.Fatal(err)
		}
		conv, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{Now: clk.Now()})
		if err != nil {
			t.Fatal(err)
		}
		worktree := func(r *store.Run) string {
			name := "run-" + run.ShortID(r) + "-fix"
			if err := os.MkdirAll(filepath.Join(root, "worktrees", name), 0o700); err != nil {
				t.Fatal(err)
			}
			return name
		}
		newRun := func(status store.RunStatus) *store.Run {
			r, err := st.RunCreate(ctx, &store.RunCreateParams{ConversationID: conv.ID, LeadAgent: "atlas", Check: json.RawMessage(`{}`),
				Steps: []store.RunStepSpec{{Key: "fix", Title: "Fix", Agent: "atlas", Class: "coding", Inputs: map[string]string{"repo": "/srv/app.git"}}}, Now: clk.Now()})
			if err != nil {
				t.Fatal(err)
			}
			if status != store.RunStatusRunning {
				if r, err = st.RunFinish(ctx, &store.RunFinishParams{ID: r.ID, Status: status, Result: "x", Now: clk.Now()}); err != nil {
					t.Fatal(err)
				}
			}
			return r
		}
		oldFailed, running, done := worktree(newRun(store.RunStatusFailed)), worktree(newRun(store.RunStatusRunning)), worktree(newRun(store.RunStatusDone))
		clk.Advance(5 * time.Hour)
		newFailed := worktree(newRun(store.RunStatusFailed))
		clk.Advance(2 * time.Hour) // oldFailed ended 7h ago, newFailed 2h ago

		res, err := svc.Sweep(ctx)
		if err != nil {
			t.Fatal(err)
		}
		left, _ := repos.Worktrees()
		var names []string
		for n := range left {
			names = append(names, n)
		}
		slices.Sort(names)
		want := []string{newFailed, running}
		slices.Sort(want)
		if res.Worktrees != 2 || !slices.Equal(names, want) {
			t.Errorf("swept %d, left %v; want 2 swept (%s, %s), left %v", res.Worktrees, names, oldFailed, done, want)
		}
	})
}
