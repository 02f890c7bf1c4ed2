package scheduler

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/store"
)

func TestDecideLoop(t *testing.T) {
	t.Parallel()
	deadline := t0.Add(time.Hour)
	cont := func(summary string, work ...string) *ProgressReport {
		return &ProgressReport{Status: ProgressContinue, Summary: summary, NewWork: work}
	}
	tests := []struct {
		name    string
		cfg     LoopConfig
		reports []*ProgressReport
		tokens  int64
		now     time.Time
		want    loopAction
		reason  string
	}{
		{"continue", LoopConfig{}, []*ProgressReport{cont("a", "x")}, 0, t0, loopContinue, ""},
		{"complete", LoopConfig{}, []*ProgressReport{{Status: ProgressComplete, Summary: "done it"}}, 0, t0, loopComplete, "done it"},
		{"blocked", LoopConfig{}, []*ProgressReport{{Status: ProgressBlocked, Needs: "the API key"}}, 0, t0, loopBlocked, "the API key"},
		{"complete wins over limits", LoopConfig{MaxIterations: 1}, []*ProgressReport{{Status: ProgressComplete}}, 1e9, deadline, loopComplete, ""},
		{"max iterations", LoopConfig{MaxIterations: 2}, []*ProgressReport{cont("a", "x"), cont("b", "y")}, 0, t0, loopStopped, "limit of 2 iterations"},
		{"token budget", LoopConfig{TokenBudget: 1000}, []*ProgressReport{cont("a", "x")}, 1000, t0, loopStopped, "1000 tokens"},
		{"deadline", LoopConfig{Deadline: &deadline}, []*ProgressReport{cont("a", "x")}, 0, deadline, loopStopped, "deadline"},
		{"before the deadline", LoopConfig{Deadline: &deadline}, []*ProgressReport{cont("a", "x")}, 0, deadline.Add(-time.Second), loopContinue, ""},
		{"no progress", LoopConfig{}, []*ProgressReport{cont("x", "w"), cont("Same  thing"), cont("same thing")}, 0, t0, loopStopped, "no progress"},
		{"same summary but new work", LoopConfig{}, []*ProgressReport{cont("same", "a"), cont("same", "b")}, 0, t0, loopContinue, ""},
		{"no new work but moving summary", LoopConfig{}, []*ProgressReport{cont("one"), cont("two")}, 0, t0, loopContinue, ""},
		{"two missing reports", LoopConfig{}, []*ProgressReport{nil, nil}, 0, t0, loopStopped, "no progress"},
		{"one missing report", LoopConfig{}, []*ProgressReport{cont("a", "x"), nil}, 0, t0, loopContinue, ""},
		{"no-progress limit of 3", LoopConfig{NoProgress: 3}, []*ProgressReport{cont("s"), cont("s")}, 0, t0, loopContinue, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := decideLoop(tc.cfg, tc.reports, tc.tokens, tc.now)
			if d.Action != tc.want || !strings.Contains(d.Reason, tc.reason) {
				t.Fatalf("want %s (reason containing %q), got %s (%q)", tc.want, tc.reason, d.Action, d.Reason)
			}
		})
	}
	d := decideLoop(LoopConfig{Interval: Duration(30 * time.Minute)}, []*ProgressReport{cont("a", "x")}, 0, t0)
	if !d.NextAt.Equal(t0.Add(30 * time.Minute)) {
		t.Fatalf("an interval loop continues after its interval: want %s, got %s", t0.Add(30*time.Minute), d.NextAt)
	}
}

// loopScript answers each iteration with report_progress(report(n)) for the
// nth iteration, then ends the turn.
type loopScript struct {
	mu     sync.Mutex
	n      int
	report func(n int) *ProgressReport
}

func (l *loopScript) respond(req *model.Request) *model.Response {
	if afterToolResult(req) {
		return textResponse("done")
	}
	l.mu.Lock()
	l.n++
	n := l.n
	l.mu.Unlock()
	r := l.report(n)
	if r == nil {
		return textResponse("I forgot to report.")
	}
	return toolResponse(ToolReportProgress, r)
}

// runLoop drives a loop: tick, run the work, move the clock, until the loop
// is no longer active or rounds run out. It returns the schedule.
func runLoop(t *testing.T, e *env, sc *store.Schedule, step time.Duration) *store.Schedule {
	t.Helper()
	for range 30 {
		e.tick()
		e.runWork()
		cur := e.schedule(sc.ID)
		if cur.State != store.ScheduleActive {
			return cur
		}
		e.clock.Advance(step)
	}
	t.Fatal("the loop did not end in 30 rounds")
	return nil
}

func goal(name string, lc LoopConfig, spec string) ScheduleParams {
	return ScheduleParams{
		Kind: store.ScheduleLoop, Agent: "ops", Name: name, Owner: "U1",
		Target: Target{Platform: "slack", Workspace: "T1"}, Spec: spec,
		Instruction: "get the flaky test fixed", Loop: &lc,
	}
}

// A loop stops on each guardrail, tells its owner why, and runs another
// iteration only when the server decided so.
func TestLoopGuardrails(t *testing.T) {
	deadlineIn := func(d time.Duration) *time.Time { x := t0.Add(d); return &x }
	tests := []struct {
		name       string
		cfg        LoopConfig
		spec       string
		report     func(n int) *ProgressReport
		iterations int
		state      store.ScheduleState
		dm         string
	}{
		{
			name: "complete", spec: "continuous",
			report: func(n int) *ProgressReport {
				if n == 3 {
					return &ProgressReport{Status: ProgressComplete, Summary: "The test is fixed."}
				}
				return &ProgressReport{Status: ProgressContinue, Summary: fmt.Sprint("step ", n), NewWork: []string{fmt.Sprint("did ", n)}}
			},
			iterations: 3, state: store.ScheduleDone, dm: "is complete. The test is fixed.",
		},
		{
			name: "blocked", spec: "continuous",
			report: func(n int) *ProgressReport {
				return &ProgressReport{Status: ProgressBlocked, Summary: "stuck", Needs: "access to the CI logs"}
			},
			iterations: 1, state: store.ScheduleBlocked, dm: "needs you: access to the CI logs",
		},
		{
			name: "max iterations", spec: "continuous", cfg: LoopConfig{MaxIterations: 4},
			report: func(n int) *ProgressReport {
				return &ProgressReport{Status: ProgressContinue, Summary: fmt.Sprint("step ", n), NewWork: []string{"more"}}
			},
			iterations: 4, state: store.ScheduleDone, dm: "limit of 4 iterations",
		},
		{
			// Each iteration costs 220 tokens (two model calls of 110).
			name: "token budget", spec: "continuous", cfg: LoopConfig{TokenBudget: 500},
			report: func(n int) *ProgressReport {
				return &ProgressReport{Status: ProgressContinue, Summary: fmt.Sprint("step ", n), NewWork: []string{"more"}}
			},
			iterations: 3, state: store.ScheduleDone, dm: "its budget is 500",
		},
		{
			name: "deadline", spec: "every 1h", cfg: LoopConfig{Deadline: deadlineIn(150 * time.Minute)},
			report: func(n int) *ProgressReport {
				return &ProgressReport{Status: ProgressContinue, Summary: fmt.Sprint("step ", n), NewWork: []string{"more"}}
			},
			iterations: 3, state: store.ScheduleDone, dm: "deadline",
		},
		{
			name: "no progress", spec: "continuous",
			report: func(n int) *ProgressReport {
				return &ProgressReport{Status: ProgressContinue, Summary: "Still looking into it."}
			},
			iterations: 2, state: store.ScheduleDone, dm: "2 iterations in a row made no progress",
		},
		{
			name: "no reports", spec: "continuous",
			report:     func(n int) *ProgressReport { return nil },
			iterations: 2, state: store.ScheduleDone, dm: "made no progress",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, newSQLite(t), nil)
			script := &loopScript{report: tc.report}
			e.backend.setRespond(script.respond)
			sc, err := e.sched.CreateSchedule(context.Background(), goal("fix-flaky", tc.cfg, tc.spec))
			if err != nil {
				t.Fatal(err)
			}
			end := runLoop(t, e, sc, time.Hour)
			if end.State != tc.state {
				t.Fatalf("loop state: want %s, got %s (%s)", tc.state, end.State, end.StateReason)
			}
			runs, err := e.sched.st.ScheduleRunList(context.Background(), &store.ScheduleRunListParams{ScheduleID: sc.ID, Limit: 0})
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != tc.iterations {
				t.Fatalf("iterations: want %d, got %d", tc.iterations, len(runs))
			}
			dms := e.dms("slack", "T1", "U1")
			if len(dms) != 1 || !strings.Contains(dms[0], tc.dm) {
				t.Fatalf("the owner must be told once why the loop ended (%q), got %q", tc.dm, dms)
			}
			// Ended means ended: time passing starts nothing more.
			e.clock.Advance(24 * time.Hour)
			e.tick()
			e.runWork()
			if after, _ := e.sched.st.ScheduleRunList(context.Background(), &store.ScheduleRunListParams{ScheduleID: sc.ID, Limit: 0}); len(after) != tc.iterations {
				t.Fatalf("an ended loop ran again: %d iterations", len(after))
			}
		})
	}
}

// The agent saying continue is not enough: the next iteration starts only
// when the server sets it, and a loop resumed after a block goes on.
func TestLoopContinuesOnlyWhenTheServerSaysSo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, newSQLite(t), nil)
	ctx := context.Background()
	script := &loopScript{report: func(n int) *ProgressReport {
		if n == 1 {
			return &ProgressReport{Status: ProgressBlocked, Needs: "a decision on the API"}
		}
		return &ProgressReport{Status: ProgressComplete, Summary: "shipped"}
	}}
	e.backend.setRespond(script.respond)
	sc, err := e.sched.CreateSchedule(ctx, goal("ship", LoopConfig{}, "every 2h"))
	if err != nil {
		t.Fatal(err)
	}
	e.tick()
	e.runWork()
	cur := e.schedule(sc.ID)
	if cur.State != store.ScheduleBlocked || cur.NextRunAt != nil {
		t.Fatalf("after a blocked report: want blocked with nothing scheduled, got %s next %v", cur.State, cur.NextRunAt)
	}
	e.clock.Advance(10 * time.Hour)
	e.tick()
	e.runWork()
	if runs, _ := e.sched.st.ScheduleRunList(ctx, &store.ScheduleRunListParams{ScheduleID: sc.ID, Limit: 0}); len(runs) != 1 {
		t.Fatalf("a blocked loop must not run on the clock: %d iterations", len(runs))
	}
	if _, err := e.sched.Resume(ctx, e.schedule(sc.ID)); err != nil {
		t.Fatalf("resuming the blocked loop: %v", err)
	}
	e.tick()
	e.runWork()
	if cur := e.schedule(sc.ID); cur.State != store.ScheduleDone || !strings.Contains(cur.StateReason, "complete") {
		t.Fatalf("after resuming, the loop completes: got %s (%s)", cur.State, cur.StateReason)
	}
	// report_progress outside a loop is refused.
	conv := e.conversation("C1", "U1")
	res := e.callTool(conv, "U1", ToolReportProgress, ProgressReport{Status: ProgressComplete, Summary: "x"})
	if !res.IsError || !strings.Contains(string(res.Output), "only for loop runs") {
		t.Fatalf("report_progress outside a loop: want a clear error, got %s", res.Output)
	}
}
