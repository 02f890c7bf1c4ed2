package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/scheduler"
	"github.com/switchboardhq/switchboard/store"
)

// schedulesLater is the scheduler handed to the API before it exists: the
// scheduler needs the service that start builds.
type schedulesLater struct{ *scheduler.Scheduler }

type runNowOut struct {
	Schedule struct {
		State     string     `json:"state"`
		NextRunAt *time.Time `json:"next_run_at"`
	} `json:"schedule"`
	Due       *time.Time `json:"due"`
	Fired     bool       `json:"fired"`
	NextRunAt *time.Time `json:"next_run_at"`
	Note      string     `json:"note"`
}

// POST /api/schedules/{id}/run works for every kind and says what it did:
// a reminder is sent now and done (a second click sends nothing), a loop
// runs its next iteration (a second click while it runs starts nothing), a
// routine runs with its next occurrence kept; a paused schedule and an
// ended loop get 409 with the reason.
func TestScheduleRunNowThroughTheAPI(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		ctx := context.Background()
		clk := newClock()
		sl := &schedulesLater{}
		s := start(t, st, clk, writeScript(t, echoScript), web.Options{Token: "op-token", Schedules: sl})
		sched, err := scheduler.New(scheduler.Options{Store: st, Service: s.svc, Clock: clockwork.NewFakeClockAt(clk.Now()), Logger: testenv.Logger(t)})
		if err != nil {
			t.Fatal(err)
		}
		sl.Scheduler = sched
		op := http.Header{"Authorization": {"Bearer op-token"}}
		run := func(id string, want int) (runNowOut, string) {
			t.Helper()
			var out runNowOut
			got, raw := s.call(t, http.MethodPost, "/api/schedules/"+id+"/run", "{}", op, &out)
			if got != want {
				t.Fatalf("POST /api/schedules/%s/run = %d %s; want %d", id, got, raw, want)
			}
			return out, raw
		}

		at := clk.Now().Add(2 * time.Hour)
		rem, err := sched.Remind(ctx, scheduler.RemindParams{Agent: "atlas", Owner: "U1", Platform: "slack", Workspace: "T1", At: at, Text: "water the plants"})
		if err != nil {
			t.Fatal(err)
		}
		if got, raw := s.call(t, http.MethodPost, "/api/schedules/"+rem.ID.String()+"/run", "{}", nil, nil); got != http.StatusUnauthorized {
			t.Fatalf("run now without the operator token = %d %s; want 401", got, raw)
		}
		first, raw := run(rem.ID.String(), http.StatusAccepted)
		if !first.Fired || first.Due == nil || !first.Due.Equal(at) || first.NextRunAt != nil || first.Schedule.State != "done" || !strings.Contains(first.Note, "done") {
			t.Fatalf("run now of a reminder = %s; want it fired for %s, done, nothing next", raw, at)
		}
		fires, err := st.WorkList(ctx, &store.WorkListParams{Kind: scheduler.WorkFire})
		if err != nil {
			t.Fatal(err)
		}
		if len(fires) != 1 {
			t.Fatalf("want one fire queued for the reminder, got %d", len(fires))
		}
		if again, raw := run(rem.ID.String(), http.StatusAccepted); again.Fired || !strings.Contains(again.Note, "already") {
			t.Fatalf("a second run now of the reminder = %s; want nothing fired and a note saying so", raw)
		}

		loop, err := sched.CreateSchedule(ctx, scheduler.ScheduleParams{
			Kind: store.ScheduleLoop, Agent: "atlas", Name: "ship", Owner: "U1", Target: scheduler.Target{Platform: "slack", Workspace: "T1"},
			Spec: "every 1h", Instruction: "ship the release",
		})
		if err != nil {
			t.Fatal(err)
		}
		it, raw := run(loop.ID.String(), http.StatusAccepted)
		if !it.Fired || it.NextRunAt != nil || it.Schedule.NextRunAt != nil || !strings.Contains(it.Note, "iteration 1") {
			t.Fatalf("run now of a loop = %s; want iteration 1 fired and nothing scheduled until it ends", raw)
		}
		if again, raw := run(loop.ID.String(), http.StatusAccepted); again.Fired || !strings.Contains(again.Note, "under way") {
			t.Fatalf("run now of a loop whose iteration runs = %s; want nothing fired, saying why", raw)
		}
		if _, err := sched.StopLoop(ctx, loop, "enough"); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, s, http.MethodPost, "/api/schedules/"+loop.ID.String()+"/run", "op-token", "{}", http.StatusConflict, "does not run again")

		routine, err := sched.CreateSchedule(ctx, scheduler.ScheduleParams{
			Kind: store.ScheduleRoutine, Agent: "atlas", Name: "digest", Owner: "U1", Target: scheduler.Target{Platform: "slack", Workspace: "T1", Channel: "C1"},
			Spec: "every 4h", Instruction: "summarise",
		})
		if err != nil {
			t.Fatal(err)
		}
		r, raw := run(routine.ID.String(), http.StatusAccepted)
		if !r.Fired || r.NextRunAt == nil || !r.NextRunAt.Equal(*routine.NextRunAt) || r.Schedule.State != "active" {
			t.Fatalf("run now of a routine = %s; want it fired with its next run kept at %s", raw, routine.NextRunAt)
		}
		if _, err := sched.Pause(ctx, routine, "testing"); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, s, http.MethodPost, "/api/schedules/"+routine.ID.String()+"/run", "op-token", "{}", http.StatusConflict, "resume it")
	})
}
