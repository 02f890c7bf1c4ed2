package scheduler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// "Run now" fires a routine once through the normal fire path: one run in
// its own conversation, its next occurrence unmoved; a second request in
// the same minute queues nothing; a paused routine is refused with a
// reason.
func TestRunNow(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(testing.TB) store.Store) {
		e := newEnv(t, open(t), nil)
		ctx := context.Background()
		e.backend.setRespond(func(req *model.Request) *model.Response { return textResponse("Ran early: all quiet.") })
		sc := must(e.sched.CreateSchedule(ctx, routine("digest", "every 4h")))(t)
		next := *sc.NextRunAt
		e.clock.Advance(90 * time.Second)

		res := must(e.sched.RunNow(ctx, sc))(t)
		if !res.Fired || !res.Due.Equal(e.clock.Now().Truncate(time.Minute)) {
			t.Fatalf("first run now: want a fire due %s, got %+v", e.clock.Now().Truncate(time.Minute), res)
		}
		// A double click, seconds later: the same occurrence, no second fire.
		e.clock.Advance(10 * time.Second)
		again := must(e.sched.RunNow(ctx, sc))(t)
		if again.Fired {
			t.Fatalf("a second run now in the same minute must not fire again: %+v", again)
		}
		if n := len(e.fires()); n != 1 {
			t.Fatalf("want one fire item, got %d", n)
		}
		e.runWork()
		convs := e.boundTo("slack", "T1", "C1")
		if len(convs) != 1 {
			t.Fatalf("want one run conversation in C1, got %d", len(convs))
		}
		if msgs := e.messages(convs[0]); len(msgs) != 1 || msgs[0] != "Ran early: all quiet." {
			t.Fatalf("the run's reply: got %q", msgs)
		}
		got := e.schedule(sc.ID)
		if got.Runs != 1 {
			t.Fatalf("the run is counted: want runs 1, got %d", got.Runs)
		}
		if got.NextRunAt == nil || !got.NextRunAt.Equal(next) {
			t.Fatalf("run now must not move the next occurrence %s, got %v", next, got.NextRunAt)
		}
		// The clock's own fire still comes, once.
		e.clock.Advance(next.Sub(e.clock.Now()))
		if n := e.tick(); n != 1 {
			t.Fatalf("the scheduled fire after run now: want 1, got %d", n)
		}
		e.runWork()
		if got := e.schedule(sc.ID); got.Runs != 2 {
			t.Fatalf("want runs 2 after the scheduled fire, got %d", got.Runs)
		}
		if e.backend.Calls() != 2 {
			t.Fatalf("two runs, two model calls; got %d", e.backend.Calls())
		}

		// A minute later it may run again.
		e.clock.Advance(time.Minute)
		if res := must(e.sched.RunNow(ctx, e.schedule(sc.ID)))(t); !res.Fired {
			t.Fatalf("run now a minute later must fire: %+v", res)
		}

		paused := must(e.sched.Pause(ctx, e.schedule(sc.ID), "testing"))(t)
		_, err := e.sched.RunNow(ctx, paused)
		wantErr(t, err, ErrInvalid, "running a paused routine now")
		if !strings.Contains(err.Error(), "resume it") {
			t.Fatalf("the refusal must say what to do: %v", err)
		}
		if got := e.schedule(sc.ID); got.State != store.SchedulePaused {
			t.Fatalf("a refused run now leaves the routine paused, got %s", got.State)
		}
	})
}

// A reminder run now is delivered at once and is then done: its own time
// comes and goes without a second DM, and asking again sends nothing.
func TestRunNowReminder(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(testing.TB) store.Store) {
		e := newEnv(t, open(t), nil)
		ctx := context.Background()
		at := t0.Add(2 * time.Hour)
		rem := must(e.sched.Remind(ctx, RemindParams{Agent: "ops", Owner: "U1", Platform: "slack", Workspace: "T1", At: at, Text: "water the plants"}))(t)
		e.clock.Advance(10 * time.Minute)

		res := must(e.sched.RunNow(ctx, rem))(t)
		if !res.Fired || !res.Due.Equal(at) || res.Next != nil {
			t.Fatalf("run now of a reminder: want it fired for its time %s with nothing next, got %+v", at, res)
		}
		if res.Schedule == nil || res.Schedule.State != store.ScheduleDone {
			t.Fatalf("the result carries the reminder done, got %+v", res.Schedule)
		}
		if got := e.schedule(rem.ID); got.State != store.ScheduleDone || got.NextRunAt != nil {
			t.Fatalf("a reminder run now is done with nothing scheduled, got %s next %v", got.State, got.NextRunAt)
		}
		// A double click before the fire ran: the same occurrence, nothing new.
		again := must(e.sched.RunNow(ctx, rem))(t)
		if again.Fired || !strings.Contains(again.Note, "already") {
			t.Fatalf("a second run now must not fire again and must say so: %+v", again)
		}
		e.runWork()
		want := []string{"⏰ Reminder: water the plants"}
		if dms := e.dms("slack", "T1", "U1"); !slices.Equal(dms, want) {
			t.Fatalf("DMs after run now: want %q, got %q", want, dms)
		}
		if runs := must(e.st.ScheduleRunList(ctx, &store.ScheduleRunListParams{ScheduleID: rem.ID}))(t); len(runs) != 1 || runs[0].Status != store.RunFinished {
			t.Fatalf("want one finished run recorded, got %+v", runs)
		}

		// Its own time passes: no fire, no second DM.
		e.clock.Advance(at.Sub(e.clock.Now()) + time.Minute)
		if n := e.tick(); n != 0 {
			t.Fatalf("a reminder run now fired again at its time: %d fires", n)
		}
		e.runWork()
		if dms := e.dms("slack", "T1", "U1"); len(dms) != 1 {
			t.Fatalf("want the reminder delivered once, got %q", dms)
		}
		if n := len(e.fires()); n != 1 {
			t.Fatalf("want one fire item in all, got %d", n)
		}
		if after := must(e.sched.RunNow(ctx, e.schedule(rem.ID)))(t); after.Fired {
			t.Fatalf("run now of a delivered reminder must not fire: %+v", after)
		}

		// A paused reminder is refused, and stays where it was.
		later := must(e.sched.Remind(ctx, RemindParams{Agent: "ops", Owner: "U1", Platform: "slack", Workspace: "T1", At: e.clock.Now().Add(time.Hour), Text: "stretch"}))(t)
		paused := must(e.sched.Pause(ctx, later, "testing"))(t)
		_, err := e.sched.RunNow(ctx, paused)
		wantErr(t, err, ErrInvalid, "running a paused reminder now")
		if !strings.Contains(err.Error(), "resume it") {
			t.Fatalf("the refusal must say what to do: %v", err)
		}
		if got := e.schedule(later.ID); got.State != store.SchedulePaused || got.NextRunAt == nil || !got.NextRunAt.Equal(*later.NextRunAt) {
			t.Fatalf("a refused run now leaves the reminder as it was, got %s next %v", got.State, got.NextRunAt)
		}
	})
}

// A reminder that repeats (its spec changed to an interval) run now sends
// its pending occurrence at once and moves on to the one after: the
// pending one's time passes without a DM, the next one fires.
func TestRunNowRepeatingReminder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, newSQLite(t), nil)
	ctx := context.Background()
	rem := must(e.sched.Remind(ctx, RemindParams{Agent: "ops", Owner: "U1", Platform: "slack", Workspace: "T1", At: t0.Add(time.Hour), Text: "drink water"}))(t)
	every := "every 2h"
	rem = must(e.sched.Update(ctx, rem, Change{Spec: &every}))(t)
	due := *rem.NextRunAt // t0+2h
	res := must(e.sched.RunNow(ctx, rem))(t)
	if !res.Fired || !res.Due.Equal(due) || res.Next == nil || !res.Next.Equal(due.Add(2*time.Hour)) {
		t.Fatalf("want the occurrence of %s fired and the next at %s, got %+v", due, due.Add(2*time.Hour), res)
	}
	e.runWork()
	e.clock.Advance(due.Sub(e.clock.Now()))
	if n := e.tick(); n != 0 {
		t.Fatalf("the occurrence run now fired again at its time: %d", n)
	}
	e.clock.Advance(2 * time.Hour)
	if n := e.tick(); n != 1 {
		t.Fatalf("the following occurrence must fire: %d", n)
	}
	e.runWork()
	if dms := e.dms("slack", "T1", "U1"); len(dms) != 2 {
		t.Fatalf("want two DMs (run now, then the next occurrence), got %q", dms)
	}
	if got := e.schedule(rem.ID); got.State != store.ScheduleActive || got.NextRunAt == nil || !got.NextRunAt.Equal(due.Add(4*time.Hour)) {
		t.Fatalf("the repeating reminder goes on: got %s next %v", got.State, got.NextRunAt)
	}
}

// Run now racing the clock's fire of a due reminder, on one instance
// (SQLite: two schedulers on one store) or two (Postgres: two stores on one
// schema), and racing another run now from a copy read before the race:
// each reminder is delivered exactly once.
func TestRunNowRacesTheClock(t *testing.T) {
	pairs := []struct {
		name string
		open func(t *testing.T) (store.Store, store.Store)
	}{
		{"sqlite", func(t *testing.T) (store.Store, store.Store) { st := newSQLite(t); return st, st }},
		{"postgres", func(t *testing.T) (store.Store, store.Store) {
			schema := testenv.PostgresSchema(t)
			return testenv.Postgres(t, schema), testenv.Postgres(t, schema)
		}},
	}
	for _, pair := range pairs {
		t.Run(pair.name, func(t *testing.T) {
			t.Parallel()
			sa, sb := pair.open(t)
			clock := clockwork.NewFakeClockAt(t0)
			a := newEnv(t, sa, clock, func(o *Options) { o.InstanceID = "a" })
			b := newEnv(t, sb, clock, func(o *Options) { o.InstanceID = "b" })
			ctx := context.Background()
			const n = 12
			var rems []*store.Schedule
			for i := range n {
				rems = append(rems, must(a.sched.Remind(ctx, RemindParams{Agent: "ops", Owner: "U1", Platform: "slack", Workspace: "T1",
					At: t0.Add(time.Minute), Text: fmt.Sprint("reminder ", i)}))(t))
			}
			// The copies the console read before the reminders fell due.
			clock.Advance(time.Minute)
			var (
				wg     sync.WaitGroup
				mu     sync.Mutex
				ticked int
				ranNow int
			)
			for _, e := range []*env{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					k, err := e.sched.Tick(ctx)
					if err != nil {
						t.Errorf("tick: %v", err)
					}
					mu.Lock()
					ticked += k
					mu.Unlock()
				}()
			}
			for i, r := range rems {
				for _, e := range []*env{b, a} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						res, err := e.sched.RunNow(ctx, r)
						if err != nil {
							t.Errorf("run now of reminder %d: %v", i, err)
							return
						}
						if res.Fired {
							mu.Lock()
							ranNow++
							mu.Unlock()
						}
					}()
				}
			}
			wg.Wait()
			if ticked+ranNow != n {
				t.Fatalf("fires: %d by the clock and %d by run now, want %d in all", ticked, ranNow, n)
			}
			byKey := map[string]int{}
			for _, f := range a.fires() {
				byKey[*f.UniqueKey]++
			}
			for i, r := range rems {
				if k := byKey[fireKey(r.ID, *r.NextRunAt)]; k != 1 || len(byKey) != n {
					t.Fatalf("reminder %d: %d fire items for its occurrence (%d keys in all), want exactly one", i, k, len(byKey))
				}
			}
			for _, e := range []*env{a, b} {
				wg.Add(1)
				go func() { defer wg.Done(); e.runWork() }()
			}
			wg.Wait()
			dms := a.dms("slack", "T1", "U1")
			slices.Sort(dms)
			if len(dms) != n || len(slices.Compact(slices.Clone(dms))) != n {
				t.Fatalf("want %d distinct reminder DMs, got %d: %q", n, len(dms), dms)
			}
			for _, r := range rems {
				if got := a.schedule(r.ID); got.State != store.ScheduleDone {
					t.Fatalf("reminder %s: want done, got %s", r.Name, got.State)
				}
			}
		})
	}
}

// A loop run now runs its next iteration at once and its pace restarts
// from there: the next iteration is one interval later, the tick it
// replaced passes without one, a second request while the iteration runs
// starts nothing, and the iteration limit still ends it. A paused loop and
// an ended one are refused with the reason.
func TestRunNowLoop(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(testing.TB) store.Store) {
		e := newEnv(t, open(t), nil)
		ctx := context.Background()
		script := &loopScript{report: func(n int) *ProgressReport {
			return &ProgressReport{Status: ProgressContinue, Summary: fmt.Sprint("step ", n), NewWork: []string{fmt.Sprint("did ", n)}}
		}}
		e.backend.setRespond(script.respond)
		sc := must(e.sched.CreateSchedule(ctx, goal("fix-flaky", LoopConfig{MaxIterations: 3}, "every 1h")))(t)
		iterations := func() int {
			return len(must(e.st.ScheduleRunList(ctx, &store.ScheduleRunListParams{ScheduleID: sc.ID}))(t))
		}
		e.tick()
		e.runWork()
		cur := e.schedule(sc.ID)
		if iterations() != 1 || cur.NextRunAt == nil || !cur.NextRunAt.Equal(t0.Add(time.Hour)) {
			t.Fatalf("after the first iteration: want 1 iteration and the next at %s, got %d and %v", t0.Add(time.Hour), iterations(), cur.NextRunAt)
		}

		e.clock.Advance(10 * time.Minute)
		ranAt := e.clock.Now()
		res := must(e.sched.RunNow(ctx, cur))(t)
		if !res.Fired || res.Next != nil || !strings.Contains(res.Note, "iteration 2") {
			t.Fatalf("run now of a loop: want iteration 2 fired, nothing scheduled until it ends; got %+v", res)
		}
		// A second click while it is queued: no second iteration.
		again := must(e.sched.RunNow(ctx, e.schedule(sc.ID)))(t)
		if again.Fired || !strings.Contains(again.Note, "under way") {
			t.Fatalf("run now while an iteration is under way must start nothing and say so: %+v", again)
		}
		e.runWork()
		cur = e.schedule(sc.ID)
		if iterations() != 2 {
			t.Fatalf("run now runs one iteration: want 2 in all, got %d", iterations())
		}
		if want := ranAt.Add(time.Hour); cur.NextRunAt == nil || !cur.NextRunAt.Equal(want) {
			t.Fatalf("the loop's pace restarts from run now: want its next at %s, got %v", want, cur.NextRunAt)
		}
		// The tick run now replaced passes without an iteration.
		e.clock.Advance(t0.Add(time.Hour).Sub(e.clock.Now()))
		if n := e.tick(); n != 0 {
			t.Fatalf("the replaced tick fired: %d", n)
		}
		e.runWork()
		if iterations() != 2 {
			t.Fatalf("no iteration at the old tick: got %d", iterations())
		}
		// A paused loop is refused.
		paused := must(e.sched.Pause(ctx, e.schedule(sc.ID), "testing"))(t)
		_, err := e.sched.RunNow(ctx, paused)
		wantErr(t, err, ErrInvalid, "running a paused loop now")
		if !strings.Contains(err.Error(), "resume it") {
			t.Fatalf("the refusal must say what to do: %v", err)
		}
		must(e.sched.Resume(ctx, paused))(t)
		// The third iteration reaches the limit: the loop ends, once.
		e.tick()
		e.runWork()
		cur = e.schedule(sc.ID)
		if iterations() != 3 || cur.State != store.ScheduleDone {
			t.Fatalf("the third iteration ends the loop: got %d iterations, %s (%s)", iterations(), cur.State, cur.StateReason)
		}
		_, err = e.sched.RunNow(ctx, cur)
		wantErr(t, err, ErrInvalid, "running an ended loop now")
		if !strings.Contains(err.Error(), "limit of 3 iterations") || !strings.Contains(err.Error(), "does not run again") {
			t.Fatalf("the refusal must say the loop ended and why: %v", err)
		}
		e.runWork()
		if iterations() != 3 {
			t.Fatalf("a refused run now ran an iteration: %d", iterations())
		}
		if dms := e.dms("slack", "T1", "U1"); len(dms) != 1 || !strings.Contains(dms[0], "limit of 3 iterations") {
			t.Fatalf("the owner is told once that the loop stopped: %q", dms)
		}
	})
}
