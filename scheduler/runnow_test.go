package scheduler

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/store"
)

// "Run now" fires a routine once through the normal fire path: one run in
// its own conversation, its next occurrence unmoved; a second request in
// the same minute queues nothing; a paused routine, a reminder and a loop
// are refused with a reason.
func TestRunNow(t *testing.T) {
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
		rem := must(e.sched.Remind(ctx, RemindParams{Agent: "ops", Owner: "U1", Platform: "slack", Workspace: "T1", At: e.clock.Now().Add(time.Hour), Text: "stretch"}))(t)
		_, err = e.sched.RunNow(ctx, rem)
		wantErr(t, err, ErrInvalid, "running a reminder now")
	})
}
