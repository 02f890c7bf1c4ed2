package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

func routine(name, spec string) ScheduleParams {
	return ScheduleParams{
		Kind: store.ScheduleRoutine, Agent: "ops", Name: name, Owner: "U1",
		Target: Target{Platform: "slack", Workspace: "T1", Channel: "C1"},
		Spec:   spec, Instruction: "report on " + name,
	}
}

// Two scheduler instances on one Postgres database, both believing they
// lead (the worst case of a leadership hand-over), dispatch concurrently on
// every tick for simulated hours: every occurrence is fired exactly once.
func TestTwoInstancesFireEachOccurrenceOnce(t *testing.T) {
	t.Parallel()
	schema := testenv.PostgresSchema(t)
	clock := clockwork.NewFakeClockAt(t0)
	a := newEnv(t, testenv.Postgres(t, schema), clock, func(o *Options) { o.InstanceID = "a" })
	b := newEnv(t, testenv.Postgres(t, schema), clock, func(o *Options) { o.InstanceID = "b" })
	ctx := context.Background()

	specs := map[string]string{"r1": "every 1m", "r2": "every 7m", "r3": "cron */5 * * * *", "r4": "every 1h"}
	for name, spec := range specs {
		must(a.sched.CreateSchedule(ctx, routine(name, spec)))(t)
	}
	var reminders []*store.Schedule
	for i := range 5 {
		reminders = append(reminders, must(b.sched.Remind(ctx, RemindParams{
			Agent: "ops", Owner: "U1", Platform: "slack", Workspace: "T1",
			At: t0.Add(time.Duration(7*i+3) * time.Minute), Text: fmt.Sprint("r", i),
		}))(t))
	}

	const span = 3 * time.Hour
	for clock.Now().Before(t0.Add(span)) {
		clock.Advance(20 * time.Second)
		var wg sync.WaitGroup
		for _, e := range []*env{a, b, a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := e.sched.Tick(ctx); err != nil {
					t.Errorf("tick: %v", err)
				}
			}()
		}
		wg.Wait()
	}

	fires := a.fires()
	byKey := map[string]int{}
	for _, f := range fires {
		byKey[*f.UniqueKey]++
	}
	want := 0
	for name, text := range specs {
		sc := must(a.sched.Find(ctx, "ops", store.ScheduleRoutine, name))(t)
		spec := must(ParseSpec(text, ""))(t)
		n := 0
		for at := spec.First(t0); !at.After(t0.Add(span)); at = spec.Next(at) {
			n++
			if byKey[fireKey(sc.ID, at)] != 1 {
				t.Fatalf("routine %s: occurrence %s fired %d times, want exactly once", name, at.Format(time.RFC3339), byKey[fireKey(sc.ID, at)])
			}
		}
		want += n
	}
	for _, r := range reminders {
		if byKey[fireKey(r.ID, *r.NextRunAt)] != 1 {
			t.Fatalf("reminder %s fired %d times, want once", r.Name, byKey[fireKey(r.ID, *r.NextRunAt)])
		}
		want++
	}
	if len(fires) != want {
		t.Fatalf("fire items: want %d (one per occurrence), got %d", want, len(fires))
	}
	for k, n := range byKey {
		if n != 1 {
			t.Fatalf("unique key %s appears %d times", k, n)
		}
	}

	// The fires run in both instances' workers: each routine occurrence is
	// one conversation in C1, each reminder one DM.
	var wg sync.WaitGroup
	for _, e := range []*env{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); e.runWork() }()
	}
	wg.Wait()
	routineRuns := len(a.boundTo("slack", "T1", "C1"))
	if routineRuns != want-len(reminders) {
		t.Fatalf("routine conversations in C1: want %d, got %d", want-len(reminders), routineRuns)
	}
	if got := a.dms("slack", "T1", "U1"); len(got) != len(reminders) {
		t.Fatalf("reminder DMs: want %d, got %d: %q", len(reminders), len(got), got)
	}
}

// The leadership lease: one instance leads; the other takes over when it
// stops (at once) or dies (after the lease's TTL).
func TestLeadership(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		clock := clockwork.NewFakeClockAt(t0)
		ctx := context.Background()
		a := newEnv(t, st, clock, func(o *Options) { o.InstanceID = "a" })
		b := newEnv(t, st, clock, func(o *Options) { o.InstanceID = "b" })
		if !a.sched.IsLeader(ctx) {
			t.Fatal("the first instance to ask must lead")
		}
		if b.sched.IsLeader(ctx) {
			t.Fatal("a second instance must not lead while the first holds the lease")
		}
		// a dies: it stops renewing; b takes over once the lease expired.
		clock.Advance(10 * time.Second)
		if b.sched.IsLeader(ctx) {
			t.Fatal("b must not lead before a's lease expired")
		}
		clock.Advance(6 * time.Second)
		if !b.sched.IsLeader(ctx) {
			t.Fatal("b must lead once a's lease expired")
		}
		if a.sched.IsLeader(ctx) {
			t.Fatal("a must know it no longer leads")
		}
		// b stops cleanly: a leads at once.
		b.sched.elector.release(ctx)
		clock.Advance(6 * time.Second) // a asks the store again after a third of the TTL
		if !a.sched.IsLeader(ctx) {
			t.Fatal("a must lead once b released the lease")
		}
	})
}

// A reminder fires at its time, within one tick, as a DM to its owner in the
// workspace it was set in, without a model call.
func TestReminderFiresAsDM(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(testing.TB) store.Store) {
		e := newEnv(t, open(t), nil)
		conv := e.conversation("C1", "U1")
		e.runWork() // the greeting's turn
		calls := e.backend.Calls()

		res := e.callTool(conv, "U1", ToolRemind, RemindInput{Text: "stand up and stretch", In: "90m"})
		if res.IsError {
			t.Fatalf("remind tool failed: %s", res.Output)
		}
		due := t0.Add(90 * time.Minute)
		e.clock.Advance(90*time.Minute - time.Second)
		if n := e.tick(); n != 0 {
			t.Fatalf("a reminder must not fire a second early: %d fires", n)
		}
		e.clock.Advance(time.Second)
		if n := e.tick(); n != 1 {
			t.Fatalf("the reminder must fire at its time: want 1 fire, got %d", n)
		}
		fires := e.fires()
		if len(fires) != 1 || !fires[0].RunAt.Equal(due) {
			t.Fatalf("want one fire enqueued at %s, got %d (%v)", due, len(fires), fires)
		}
		e.runWork()

		dms := e.dms("slack", "T1", "U1")
		if len(dms) != 1 || dms[0] != "⏰ Reminder: stand up and stretch" {
			t.Fatalf("DMs to U1 in T1: want the reminder once, got %q", dms)
		}
		if other := e.dms("slack", "T2", "U1"); len(other) != 0 {
			t.Fatalf("a reminder set in T1 must not reach T2: %q", other)
		}
		dm := e.boundTo("slack", "T1", "user:U1")
		if e.delivered[dm[0]] != 1 {
			t.Fatalf("the reminder's conversation must be delivered once, got %d", e.delivered[dm[0]])
		}
		if got := e.backend.Calls(); got != calls {
			t.Fatalf("a reminder makes no model call: %d calls before, %d after", calls, got)
		}
		// Fired once: later ticks and a retried fire change nothing.
		e.clock.Advance(time.Hour)
		if n := e.tick(); n != 0 {
			t.Fatalf("a fired reminder fired again: %d", n)
		}
		if err := e.handlers().Run(context.Background(), fires[0]); err != nil {
			t.Fatalf("retrying the fire: %v", err)
		}
		if dms := e.dms("slack", "T1", "U1"); len(dms) != 1 {
			t.Fatalf("a retried fire must not post again: %q", dms)
		}
		list := must(e.sched.st.ScheduleList(context.Background(), &store.ScheduleListParams{Kind: store.ScheduleReminder}))(t)
		if len(list) != 1 || list[0].State != store.ScheduleDone {
			t.Fatalf("want one reminder, done once fired; got %d: %+v", len(list), list)
		}
	})
}

// Through gocron: Start dispatches on the fake clock, and a reminder fires
// within one tick of its time.
func TestStartDispatchesOnTheClock(t *testing.T) {
	t.Parallel()
	e := newEnv(t, newSQLite(t), nil)
	ctx := context.Background()
	sc := must(e.sched.Remind(ctx, RemindParams{Agent: "ops", Owner: "U1", Platform: "slack", Workspace: "T1",
		At: t0.Add(5 * time.Second), Text: "tea"}))(t)
	if err := e.sched.Start(ctx); err != nil {
		t.Fatalf("starting: %v", err)
	}
	defer e.sched.Stop()
	// Step the clock a second at a time. After each step the dispatch job
	// gets real time to finish (gocron skips a run that would overlap a
	// running one, which a loaded machine could otherwise cause), and the
	// loop stops at the first fire.
	for i := 0; i < 15 && len(e.fires()) == 0; i++ {
		// Two gocron jobs wait on the clock between runs.
		if err := e.clock.BlockUntilContext(ctx, 2); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Second)
		settle := time.Now().Add(300 * time.Millisecond)
		for len(e.fires()) == 0 && time.Now().Before(settle) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFor(t, "the reminder's fire", func() bool { return len(e.fires()) == 1 })
	f := e.fires()[0]
	if lag := f.CreatedAt.Sub(*sc.NextRunAt); lag < 0 || lag > time.Second {
		t.Fatalf("the fire was enqueued %s after the reminder's time; want within a second", lag)
	}
}

func TestRoutineLimit(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(testing.TB) store.Store) {
		e := newEnv(t, open(t), nil)
		ctx := context.Background()
		for i := range DefaultMaxRoutines {
			must(e.sched.CreateSchedule(ctx, routine(fmt.Sprintf("r%d", i), "every 1h")))(t)
		}
		_, err := e.sched.CreateSchedule(ctx, routine("r10", "every 1h"))
		wantErr(t, err, ErrTooMany, "creating an eleventh routine")
		if !strings.Contains(err.Error(), "already has 10 routines") {
			t.Fatalf("the error must say the limit: %v", err)
		}
		// Through the agent's tool, the model reads the same clear error.
		conv := e.conversation("C1", "U1")
		res := e.callTool(conv, "U1", ToolRoutineCreate, RoutineInput{Name: "r10", Every: "1h", Instruction: "x"})
		if !res.IsError || !strings.Contains(string(res.Output), "already has 10 routines") {
			t.Fatalf("routine_create past the limit: want an error result naming the limit, got %s", res.Output)
		}
		// Pulses and loops do not count; another agent has its own ten.
		p := routine("other", "every 1h")
		p.Agent = "lite"
		must(e.sched.CreateSchedule(ctx, p))(t)
		// Deleting one makes room.
		sc := must(e.sched.Find(ctx, "ops", store.ScheduleRoutine, "r3"))(t)
		if err := e.sched.Delete(ctx, sc); err != nil {
			t.Fatal(err)
		}
		must(e.sched.CreateSchedule(ctx, routine("r10", "every 1h")))(t)
	})
}

// A routine run is a real turn of the owning agent in a conversation of its
// own, in the routine's channel and workspace; a retried fire starts
// nothing twice.
func TestRoutineRunsATurnWhereItBelongs(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(testing.TB) store.Store) {
		e := newEnv(t, open(t), nil)
		ctx := context.Background()
		e.backend.setRespond(func(req *model.Request) *model.Response { return textResponse("Morning digest: all quiet.") })
		p := routine("digest", "cron 0 8 * * 1-5")
		p.TimeZone = "America/New_York"
		sc := must(e.sched.CreateSchedule(ctx, p))(t)
		want := time.Date(2026, 3, 2, 13, 0, 0, 0, time.UTC) // Monday 08:00 EST
		if !sc.NextRunAt.Equal(want) {
			t.Fatalf("first run: want %s, got %s", want, sc.NextRunAt)
		}
		e.clock.Advance(want.Sub(e.clock.Now()))
		if n := e.tick(); n != 1 {
			t.Fatalf("want one fire at 08:00, got %d", n)
		}
		e.runWork()
		convs := e.boundTo("slack", "T1", "C1")
		if len(convs) != 1 {
			t.Fatalf("want one run conversation in C1, got %d", len(convs))
		}
		if msgs := e.messages(convs[0]); len(msgs) != 1 || msgs[0] != "Morning digest: all quiet." {
			t.Fatalf("the run's reply: got %q", msgs)
		}
		if e.backend.Calls() != 1 {
			t.Fatalf("one model call for one run, got %d", e.backend.Calls())
		}
		if err := e.handlers().Run(ctx, e.fires()[0]); err != nil {
			t.Fatalf("retrying the fire: %v", err)
		}
		e.runWork()
		if n := len(e.boundTo("slack", "T1", "C1")); n != 1 || e.backend.Calls() != 1 {
			t.Fatalf("a retried fire must not start a second run: %d conversations, %d model calls", n, e.backend.Calls())
		}
		// Next run is Tuesday 08:00 EST; a week later the clocks changed and
		// it is 08:00 EDT.
		if got := e.schedule(sc.ID).NextRunAt; !got.Equal(want.Add(24 * time.Hour)) {
			t.Fatalf("next run after Monday: got %s", got)
		}
	})
}

// A fire missed while nothing ran happens once at start (run_once), or not
// at all (skip); either way the schedule moves on to its next occurrence.
func TestMissedFireRunsOnceAtStart(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		clock := clockwork.NewFakeClockAt(t0)
		ctx := context.Background()
		before := newEnv(t, st, clock)
		once := must(before.sched.CreateSchedule(ctx, routine("hourly", "every 1h")))(t)
		skipP := routine("skipper", "every 1h")
		skipP.Missed = store.MissedSkip
		skip := must(before.sched.CreateSchedule(ctx, skipP))(t)

		// Nothing runs for five and a half hours.
		clock.Advance(5*time.Hour + 30*time.Minute)
		after := newEnv(t, st, clock, func(o *Options) { o.InstanceID = "restarted" })
		if err := after.sched.Start(ctx); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the first dispatch at start", func() bool {
			for _, sc := range []*store.Schedule{once, skip} {
				if next := after.schedule(sc.ID).NextRunAt; next == nil || !next.Equal(t0.Add(6*time.Hour)) {
					return false
				}
			}
			return true
		})
		after.sched.Stop()
		if n := len(after.fires()); n != 1 {
			t.Fatalf("want one fire at start, got %d", n)
		}
		fires := after.fires()
		if *fires[0].UniqueKey != fireKey(once.ID, t0.Add(5*time.Hour)) {
			t.Fatalf("want one fire for the latest missed occurrence (%s), got %s", t0.Add(5*time.Hour), *fires[0].UniqueKey)
		}
		after.runWork()
		if n := len(after.boundTo("slack", "T1", "C1")); n != 1 {
			t.Fatalf("five missed runs must run once, got %d conversations", n)
		}
		for _, sc := range []*store.Schedule{once, skip} {
			if got := after.schedule(sc.ID).NextRunAt; !got.Equal(t0.Add(6 * time.Hour)) {
				t.Fatalf("%s: next run after the restart: want %s, got %s", sc.Name, t0.Add(6*time.Hour), got)
			}
		}
		if runs := must(after.sched.st.ScheduleRunList(ctx, &store.ScheduleRunListParams{ScheduleID: skip.ID, Limit: 0}))(t); len(runs) != 0 {
			t.Fatalf("a skip routine must not run for missed fires, got %d runs", len(runs))
		}
	})
}

func TestSweepExpiresApprovals(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(testing.TB) store.Store) {
		e := newEnv(t, open(t), nil)
		ctx := context.Background()
		conv := e.conversation("C1", "U1")
		e.runWork()
		must(e.st.ConversationSetStatus(ctx, &store.ConversationStatusParams{ConversationID: conv, Status: store.ConversationPaused, Now: e.clock.Now()}))(t)
		ap := must(e.st.ApprovalCreate(ctx, &store.ApprovalCreateParams{
			ConversationID: conv, CallID: "c1", Tool: "x", Kind: store.ApprovalConfirm, Risk: "high",
			ExpiresAt: e.clock.Now().Add(time.Hour), Now: e.clock.Now(),
		}))(t)
		res := must(e.sched.Sweep(ctx))(t)
		if res.Spine.ApprovalsExpired != 0 {
			t.Fatalf("an approval before its expiry must stay: %+v", res)
		}
		e.clock.Advance(2 * time.Hour)
		res = must(e.sched.Sweep(ctx))(t)
		if res.Spine.ApprovalsExpired != 1 {
			t.Fatalf("want one approval expired, got %+v", res)
		}
		if got := must(e.st.ApprovalGet(ctx, ap.ID))(t); got.Status != store.ApprovalExpired {
			t.Fatalf("approval status: want expired, got %s", got.Status)
		}
		turns := must(e.st.WorkList(ctx, &store.WorkListParams{ConversationID: &conv, Kind: "turn", States: []store.WorkState{store.WorkAvailable}}))(t)
		if len(turns) != 1 {
			t.Fatalf("the paused conversation must get one turn to learn nobody answered, got %d", len(turns))
		}
		must(e.sched.Sweep(ctx))(t)
		turns = must(e.st.WorkList(ctx, &store.WorkListParams{ConversationID: &conv, Kind: "turn", States: []store.WorkState{store.WorkAvailable}}))(t)
		if len(turns) != 1 {
			t.Fatalf("a second sweep must not queue another turn, got %d", len(turns))
		}
	})
}

// TestSweepPrunesFinishedWork: a finished keyed item (a fire) is deleted once
// WorkRetention has passed, and not before.
func TestSweepPrunesFinishedWork(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(testing.TB) store.Store) {
		e := newEnv(t, open(t), nil)
		ctx := context.Background()
		key := "fire:pruned:" + t.Name()
		res := must(e.st.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "prune-me", UniqueKey: &key, Now: e.clock.Now()}))(t)
		items := must(e.st.WorkClaim(ctx, &store.WorkClaimParams{Worker: "w", Kinds: []string{"prune-me"}, Limit: 1, LeaseTTL: time.Minute, Now: e.clock.Now()}))(t)
		if len(items) != 1 {
			t.Fatalf("want the item claimed, got %d", len(items))
		}
		must(e.st.WorkComplete(ctx, &store.WorkLeaseParams{ID: res.Item.ID, Worker: "w", Now: e.clock.Now()}))(t)

		e.clock.Advance(store.DefaultWorkRetention - time.Minute)
		must(e.sched.Sweep(ctx))(t)
		if _, err := e.st.WorkGet(ctx, res.Item.ID); err != nil {
			t.Fatalf("a finished item within WorkRetention must stay: %v", err)
		}
		e.clock.Advance(2 * time.Minute)
		sw := must(e.sched.Sweep(ctx))(t)
		if sw.Spine.Store.Work < 1 {
			t.Fatalf("want the finished keyed item pruned, got %+v", sw)
		}
		if _, err := e.st.WorkGet(ctx, res.Item.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("after WorkRetention the finished keyed item must be gone, got %v", err)
		}
	})
}

// The remind tool reads "tomorrow 9:00" in the zone of the person it is
// for when the model gives none; someone the store does not know, or an
// explicit time_zone, keeps the old reading.
func TestRemindToolUsesPersonZone(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(testing.TB) store.Store) {
		e := newEnv(t, open(t), nil)
		ctx := context.Background()
		if _, err := e.sched.st.PersonCreate(ctx, &store.PersonCreateParams{
			Identity: store.Identity{Platform: "slack", Workspace: "T1", UserID: "U1"}, DisplayName: "Ana", TimeZone: "Asia/Tokyo", Now: t0,
		}); err != nil {
			t.Fatalf("creating U1's person: %v", err)
		}
		tokyo := must(time.LoadLocation("Asia/Tokyo"))(t)
		newYork := must(time.LoadLocation("America/New_York"))(t)
		tomorrowAt9 := func(loc *time.Location) time.Time {
			d := t0.In(loc).AddDate(0, 0, 1)
			return time.Date(d.Year(), d.Month(), d.Day(), 9, 0, 0, 0, loc)
		}
		for _, tc := range []struct {
			name, user, zone string
			want             time.Time
		}{
			{"known person", "U1", "", tomorrowAt9(tokyo)},
			{"unknown person", "U2", "", tomorrowAt9(time.UTC)},
			{"zone given", "U1", "America/New_York", tomorrowAt9(newYork)},
		} {
			t.Run(tc.name, func(t *testing.T) {
				conv := e.conversation("C-"+tc.user+tc.zone, tc.user)
				res := e.callTool(conv, tc.user, ToolRemind, RemindInput{Text: "standup", At: "tomorrow 9:00", TimeZone: tc.zone})
				if res.IsError {
					t.Fatalf("remind tool failed: %s", res.Output)
				}
				var out RemindOutput
				if err := json.Unmarshal(res.Output, &out); err != nil {
					t.Fatalf("decoding %s: %v", res.Output, err)
				}
				sc := must(e.sched.Find(ctx, "ops", store.ScheduleReminder, out.Reminder))(t)
				if sc.NextRunAt == nil || !sc.NextRunAt.Equal(tc.want) {
					t.Fatalf("the reminder fires at %v; want %v", sc.NextRunAt, tc.want)
				}
				if !strings.Contains(out.At, "09:00") {
					t.Errorf("the tool answers %q; want 09:00 in the zone used", out.At)
				}
			})
		}
	})
}

// Other parts' jobs (memory upkeep) run on the leader through gocron: not
// at start, then once per interval.
func TestStartRunsJobsEachInterval(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	e := newEnv(t, newSQLite(t), nil, func(o *Options) {
		o.Jobs = []Job{{Name: "upkeep", Every: time.Minute, Run: func(context.Context) error { runs.Add(1); return nil }}}
	})
	ctx := context.Background()
	if err := e.sched.Start(ctx); err != nil {
		t.Fatalf("starting: %v", err)
	}
	defer e.sched.Stop()
	// The dispatch, the sweep and the job wait on the clock.
	if err := e.clock.BlockUntilContext(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if n := runs.Load(); n != 0 {
		t.Fatalf("the job ran %d times at start; want its first run one interval later", n)
	}
	for i := 0; i < 60 && runs.Load() == 0; i++ {
		if err := e.clock.BlockUntilContext(ctx, 3); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Second)
		settle := time.Now().Add(100 * time.Millisecond)
		for runs.Load() == 0 && time.Now().Before(settle) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFor(t, "the job's first run", func() bool { return runs.Load() >= 1 })
}
