package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// RunSchedule runs the conformance tests of store.Queries against h's
// stores. Every store h makes must implement store.Queries, and so must
// the Queries its InTx hands out.
func RunSchedule(t *testing.T, h Harness) {
	if err := h.validate(); err != nil {
		t.Fatal(err)
	}
	s := suite{h: h}
	tests := []namedTest{
		{"CreateAndRead", s.testScheduleCreateAndRead},
		{"Upsert", s.testScheduleUpsert},
		{"PerAgentLimit", s.testScheduleLimit},
		{"Update", s.testScheduleUpdate},
		{"AdvanceIsCompareAndSet", s.testScheduleAdvance},
		{"AdvanceAndEnqueueInOneTx", s.testScheduleAdvanceInTx},
		{"ConcurrentAdvanceFiresOnce", s.testScheduleConcurrentAdvance},
		{"Runs", s.testScheduleRuns},
		{"RunSettleIsCompareAndSet", s.testScheduleRunSettleOnce},
		{"UsageTotal", s.testScheduleUsage},
		{"Sweep", s.testSweep},
		{"SweepKeepsUp", s.testSweepKeepsUp},
		{"SweepRetention", s.testSweepRetention},
		{"Prune", s.testSchedulePrune},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t)
		})
	}
}

func schedulesOf(t testing.TB, q store.Queries) store.Queries { return q }

func newRoutine(t testing.TB, ss store.Queries, clk *clock, agent, name string, next time.Time) *store.Schedule {
	t.Helper()
	sc, err := ss.ScheduleCreate(ctxFor(t), &store.ScheduleCreateParams{
		Kind: store.ScheduleRoutine, Agent: agent, Name: name, Owner: "U1",
		Place: store.Place{Platform: "slack", Workspace: "T1", Channel: "C1"},
		Spec:  "every 1h", Instruction: "do " + name, NextRunAt: &next, Now: clk.Now(),
	})
	noErr(t, err, "creating routine %s/%s", agent, name)
	return sc
}

func (s suite) testScheduleCreateAndRead(t *testing.T) {
	st := s.newStore(t)
	ss := schedulesOf(t, st)
	ctx, clk := ctxFor(t), newClock()
	next := clk.Now().Add(time.Hour)
	created, err := ss.ScheduleCreate(ctx, &store.ScheduleCreateParams{
		Kind: store.SchedulePulse, Agent: "ops", Name: "morning", Owner: "U1",
		Place: store.DM("slack", "T1", "U1"),
		Spec:  "cron 0 8 * * 1-5", TimeZone: "America/New_York", Instruction: "check things",
		Config: json.RawMessage(`{"checklist":[{"item":"inbox","source":"day"}]}`),
		Missed: store.MissedSkip, Source: "config", NextRunAt: &next, Now: clk.Now(),
	})
	noErr(t, err, "creating a pulse")
	got, err := ss.ScheduleGet(ctx, created.ID)
	noErr(t, err, "getting the pulse")
	for _, sc := range []*store.Schedule{created, got} {
		eq(t, sc.Kind, store.SchedulePulse, "kind")
		eq(t, sc.Agent, "ops", "agent")
		eq(t, sc.Place, store.DM("slack", "T1", "U1"), "place")
		eq(t, sc.TimeZone, "America/New_York", "time zone")
		eq(t, sc.Missed, store.MissedSkip, "missed policy")
		eq(t, sc.State, store.ScheduleActive, "state of a new schedule")
		jsonEq(t, sc.Config, json.RawMessage(`{"checklist":[{"item":"inbox","source":"day"}]}`), "config")
		jsonEq(t, sc.Data, json.RawMessage(`{}`), "data of a new schedule")
		timePtrEq(t, sc.NextRunAt, next, "next run")
		isTrue(t, sc.LastRunAt == nil, "a new schedule has no last run, got %v", sc.LastRunAt)
		timeEq(t, sc.CreatedAt, clk.Now(), "created at")
	}
	found, err := ss.ScheduleFind(ctx, &store.ScheduleFindParams{Agent: "ops", Kind: store.SchedulePulse, Name: "morning"})
	noErr(t, err, "finding the pulse by name")
	eq(t, found.ID, created.ID, "found id")
	_, err = ss.ScheduleFind(ctx, &store.ScheduleFindParams{Agent: "ops", Kind: store.ScheduleRoutine, Name: "morning"})
	errIs(t, err, store.ErrNotFound, "finding a routine under a pulse's name")
	_, err = ss.ScheduleGet(ctx, uuid.New())
	errIs(t, err, store.ErrNotFound, "getting a schedule that does not exist")

	_, err = ss.ScheduleCreate(ctx, &store.ScheduleCreateParams{
		Kind: store.SchedulePulse, Agent: "ops", Name: "morning", Spec: "every 1h", Now: clk.Now(),
	})
	errIs(t, err, store.ErrConflict, "creating a second pulse named morning for ops")

	for _, bad := range []store.ScheduleCreateParams{
		{Kind: "nope", Agent: "a", Name: "n", Spec: "every 1h"},
		{Kind: store.ScheduleRoutine, Name: "n", Spec: "every 1h"},
		{Kind: store.ScheduleRoutine, Agent: "a", Spec: "every 1h"},
		{Kind: store.ScheduleRoutine, Agent: "a", Name: "n"},
		{Kind: store.ScheduleRoutine, Agent: "a", Name: "n", Spec: "every 1h", Missed: "sometimes"},
		{Kind: store.ScheduleRoutine, Agent: "a", Name: "n", Spec: "every 1h", Config: json.RawMessage(`{`)},
	} {
		_, err := ss.ScheduleCreate(ctx, &bad)
		errIs(t, err, store.ErrInvalid, "creating with bad params %+v", bad)
	}

	newRoutine(t, ss, clk, "ops", "b", next)
	newRoutine(t, ss, clk, "dev", "c", next)
	list, err := ss.ScheduleList(ctx, &store.ScheduleListParams{Agent: "ops"})
	noErr(t, err, "listing ops's schedules")
	eq(t, len(list), 2, "schedules of ops")
	list, err = ss.ScheduleList(ctx, &store.ScheduleListParams{Kind: store.ScheduleRoutine})
	noErr(t, err, "listing routines")
	eq(t, len(list), 2, "routines of every agent")
	list, err = ss.ScheduleList(ctx, &store.ScheduleListParams{States: []store.ScheduleState{store.SchedulePaused}})
	noErr(t, err, "listing paused schedules")
	eq(t, len(list), 0, "paused schedules")
	list, err = ss.ScheduleList(ctx, &store.ScheduleListParams{Limit: 1})
	noErr(t, err, "listing with a limit")
	eq(t, len(list), 1, "schedules listed with Limit 1")
	eq(t, list[0].ID, created.ID, "the oldest schedule comes first")
}

func (s suite) testScheduleUpsert(t *testing.T) {
	st := s.newStore(t)
	ss := schedulesOf(t, st)
	ctx, clk := ctxFor(t), newClock()
	first := clk.Now().Add(time.Hour)
	p := store.ScheduleCreateParams{
		Kind: store.ScheduleRoutine, Agent: "ops", Name: "digest", Spec: "every 1h",
		Instruction: "v1", NextRunAt: &first, Upsert: true, Now: clk.Now(),
	}
	a, err := ss.ScheduleCreate(ctx, &p)
	noErr(t, err, "upserting a new routine")
	paused := store.SchedulePaused
	_, err = ss.ScheduleUpdate(ctx, &store.ScheduleUpdateParams{ID: a.ID, State: &paused, Data: json.RawMessage(`{"k":1}`), Now: clk.Now()})
	noErr(t, err, "pausing the routine")

	other := clk.Now().Add(2 * time.Hour)
	p.Instruction, p.NextRunAt = "v2", &other
	b, err := ss.ScheduleCreate(ctx, &p)
	noErr(t, err, "upserting the same routine with a new instruction")
	eq(t, b.ID, a.ID, "an upsert keeps the schedule's id")
	eq(t, b.Instruction, "v2", "instruction after upsert")
	eq(t, b.State, store.SchedulePaused, "an upsert keeps the state")
	jsonEq(t, b.Data, json.RawMessage(`{"k":1}`), "an upsert keeps the data")
	timePtrEq(t, b.NextRunAt, first, "an upsert with the same spec keeps the next run")

	p.Spec = "every 2h"
	c, err := ss.ScheduleCreate(ctx, &p)
	noErr(t, err, "upserting with a new spec")
	timePtrEq(t, c.NextRunAt, other, "an upsert with a new spec takes the new next run")
}

func (s suite) testScheduleLimit(t *testing.T) {
	st := s.newStore(t)
	ss := schedulesOf(t, st)
	ctx, clk := ctxFor(t), newClock()
	create := func(agent, name string, upsert bool) error {
		_, err := ss.ScheduleCreate(ctx, &store.ScheduleCreateParams{
			Kind: store.ScheduleRoutine, Agent: agent, Name: name, Spec: "every 1h",
			MaxPerAgent: 10, Upsert: upsert, Now: clk.Now(),
		})
		return err
	}
	for i := range 10 {
		noErr(t, create("ops", fmt.Sprintf("r%d", i), false), "creating routine %d of 10", i+1)
	}
	err := create("ops", "r10", false)
	errIs(t, err, store.ErrLimit, "creating an eleventh routine")
	errIs(t, err, store.ErrConflict, "ErrLimit also matches ErrConflict")
	noErr(t, create("dev", "r0", false), "another agent's routines do not count")
	noErr(t, create("ops", "r3", true), "upserting an existing routine at the limit")
	errIs(t, create("ops", "new", true), store.ErrLimit, "upserting a new routine past the limit")

	r0, err := ss.ScheduleFind(ctx, &store.ScheduleFindParams{Agent: "ops", Kind: store.ScheduleRoutine, Name: "r0"})
	noErr(t, err, "finding r0")
	noErr(t, ss.ScheduleDelete(ctx, r0.ID), "deleting r0")
	noErr(t, create("ops", "r10", false), "creating a routine after deleting one")
	errIs(t, ss.ScheduleDelete(ctx, r0.ID), store.ErrNotFound, "deleting r0 again")

	// Concurrent creates must not get past the limit together.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = create("race", fmt.Sprintf("r%d", i), false)
		}()
	}
	wg.Wait()
	list, err := ss.ScheduleList(ctx, &store.ScheduleListParams{Agent: "race"})
	noErr(t, err, "listing race's routines")
	eq(t, len(list), 8, "routines created concurrently under the limit")
	for i := range 8 {
		_, err := ss.ScheduleCreate(ctx, &store.ScheduleCreateParams{
			Kind: store.ScheduleRoutine, Agent: "race2", Name: fmt.Sprintf("r%d", i), Spec: "every 1h", MaxPerAgent: 3, Now: clk.Now(),
		})
		if i < 3 {
			noErr(t, err, "creating routine %d under a limit of 3", i+1)
		} else {
			errIs(t, err, store.ErrLimit, "creating routine %d past a limit of 3", i+1)
		}
	}
}

func (s suite) testScheduleUpdate(t *testing.T) {
	st := s.newStore(t)
	ss := schedulesOf(t, st)
	ctx, clk := ctxFor(t), newClock()
	sc := newRoutine(t, ss, clk, "ops", "a", clk.Now().Add(time.Hour))
	clk.Advance(time.Minute)
	spec, instr, place := "every 2h", "new words", store.Place{Platform: "slack", Workspace: "T2", Channel: "C2"}
	next := clk.Now().Add(2 * time.Hour)
	got, err := ss.ScheduleUpdate(ctx, &store.ScheduleUpdateParams{
		ID: sc.ID, Spec: &spec, Instruction: &instr, Place: &place, NextRunAt: &next,
		Config: json.RawMessage(`{"template":"briefing"}`), Now: clk.Now(),
	})
	noErr(t, err, "updating the routine")
	eq(t, got.Spec, spec, "spec")
	eq(t, got.Instruction, instr, "instruction")
	eq(t, got.Place, place, "place")
	eq(t, got.Owner, "U1", "an update leaves unset fields alone (owner)")
	jsonEq(t, got.Config, json.RawMessage(`{"template":"briefing"}`), "config")
	timePtrEq(t, got.NextRunAt, next, "next run")
	timeEq(t, got.UpdatedAt, clk.Now(), "updated at")

	active, paused := store.ScheduleActive, store.SchedulePaused
	reason := "on holiday"
	got, err = ss.ScheduleUpdate(ctx, &store.ScheduleUpdateParams{ID: sc.ID, State: &paused, StateReason: &reason, ExpectState: &active, Now: clk.Now()})
	noErr(t, err, "pausing an active routine")
	eq(t, got.State, store.SchedulePaused, "state after pause")
	eq(t, got.StateReason, reason, "state reason")
	_, err = ss.ScheduleUpdate(ctx, &store.ScheduleUpdateParams{ID: sc.ID, State: &paused, ExpectState: &active, Now: clk.Now()})
	errIs(t, err, store.ErrConflict, "pausing a routine that is no longer active")
	got, err = ss.ScheduleUpdate(ctx, &store.ScheduleUpdateParams{ID: sc.ID, ClearNextRun: true, NextRunAt: &next, Now: clk.Now()})
	noErr(t, err, "clearing the next run")
	isTrue(t, got.NextRunAt == nil, "ClearNextRun wins over NextRunAt, got %v", got.NextRunAt)
	_, err = ss.ScheduleUpdate(ctx, &store.ScheduleUpdateParams{ID: uuid.New(), Spec: &spec, Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "updating a schedule that does not exist")
	bad := store.ScheduleState("gone")
	_, err = ss.ScheduleUpdate(ctx, &store.ScheduleUpdateParams{ID: sc.ID, State: &bad, Now: clk.Now()})
	errIs(t, err, store.ErrInvalid, "updating to an unknown state")
}

func (s suite) testScheduleAdvance(t *testing.T) {
	st := s.newStore(t)
	ss := schedulesOf(t, st)
	ctx, clk := ctxFor(t), newClock()
	due := clk.Now().Add(-time.Minute)
	a := newRoutine(t, ss, clk, "ops", "a", due)
	b := newRoutine(t, ss, clk, "ops", "b", due.Add(-time.Second))
	newRoutine(t, ss, clk, "ops", "future", clk.Now().Add(time.Hour))
	c := newRoutine(t, ss, clk, "ops", "paused", due)
	paused := store.SchedulePaused
	_, err := ss.ScheduleUpdate(ctx, &store.ScheduleUpdateParams{ID: c.ID, State: &paused, Now: clk.Now()})
	noErr(t, err, "pausing c")

	dueList, err := ss.ScheduleDue(ctx, &store.ScheduleDueParams{Now: clk.Now(), Limit: 10})
	noErr(t, err, "listing due schedules")
	eq(t, len(dueList), 2, "due schedules (not the future one, not the paused one)")
	eq(t, dueList[0].ID, b.ID, "the earliest due schedule comes first")
	eq(t, dueList[1].ID, a.ID, "then the next")

	next := due.Add(time.Hour)
	got, err := ss.ScheduleAdvance(ctx, &store.ScheduleAdvanceParams{ID: a.ID, ExpectNextRunAt: due, LastRunAt: due, NextRunAt: &next, Now: clk.Now()})
	noErr(t, err, "advancing a past its fire")
	timePtrEq(t, got.NextRunAt, next, "next run after advance")
	timePtrEq(t, got.LastRunAt, due, "last run after advance")
	_, err = ss.ScheduleAdvance(ctx, &store.ScheduleAdvanceParams{ID: a.ID, ExpectNextRunAt: due, LastRunAt: due, NextRunAt: &next, Now: clk.Now()})
	errIs(t, err, store.ErrConflict, "advancing a past the same fire a second time")
	_, err = ss.ScheduleAdvance(ctx, &store.ScheduleAdvanceParams{ID: c.ID, ExpectNextRunAt: due, NextRunAt: &next, Now: clk.Now()})
	errIs(t, err, store.ErrConflict, "advancing a paused schedule")
	_, err = ss.ScheduleAdvance(ctx, &store.ScheduleAdvanceParams{ID: uuid.New(), ExpectNextRunAt: due, Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "advancing a schedule that does not exist")

	got, err = ss.ScheduleAdvance(ctx, &store.ScheduleAdvanceParams{ID: b.ID, ExpectNextRunAt: *b.NextRunAt, Done: true, Now: clk.Now()})
	noErr(t, err, "advancing b as done")
	eq(t, got.State, store.ScheduleDone, "state after a final advance")
	isTrue(t, got.NextRunAt == nil, "a done schedule has no next run, got %v", got.NextRunAt)
	isTrue(t, got.LastRunAt == nil, "a zero LastRunAt leaves the last run as it was (none), got %v", got.LastRunAt)
	dueList, err = ss.ScheduleDue(ctx, &store.ScheduleDueParams{Now: clk.Now(), Limit: 10})
	noErr(t, err, "listing due schedules after advancing")
	eq(t, len(dueList), 0, "due schedules after both advanced")
}

func (s suite) testScheduleAdvanceInTx(t *testing.T) {
	st := s.newStore(t)
	ctx, clk := ctxFor(t), newClock()
	due := clk.Now()
	sc := newRoutine(t, schedulesOf(t, st), clk, "ops", "a", due)
	key := "fire:" + sc.ID.String()
	next := due.Add(time.Hour)
	errBoom := errors.New("boom")
	err := st.InTx(ctx, func(q store.Queries) error {
		ss := schedulesOf(t, q)
		if _, err := ss.ScheduleAdvance(ctx, &store.ScheduleAdvanceParams{ID: sc.ID, ExpectNextRunAt: due, LastRunAt: due, NextRunAt: &next, Now: clk.Now()}); err != nil {
			return err
		}
		if _, err := q.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "schedule_fire", UniqueKey: &key, Now: clk.Now()}); err != nil {
			return err
		}
		return errBoom
	})
	errIs(t, err, errBoom, "a transaction that fails after the fire")
	got, err := schedulesOf(t, st).ScheduleGet(ctx, sc.ID)
	noErr(t, err, "reading the schedule back")
	timePtrEq(t, got.NextRunAt, due, "a rolled-back advance leaves the next run")
	items, err := st.WorkList(ctx, &store.WorkListParams{Kind: "schedule_fire"})
	noErr(t, err, "listing fires")
	eq(t, len(items), 0, "fires enqueued by a rolled-back transaction")

	err = st.InTx(ctx, func(q store.Queries) error {
		ss := schedulesOf(t, q)
		if _, err := ss.ScheduleAdvance(ctx, &store.ScheduleAdvanceParams{ID: sc.ID, ExpectNextRunAt: due, LastRunAt: due, NextRunAt: &next, Now: clk.Now()}); err != nil {
			return err
		}
		_, err := q.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "schedule_fire", UniqueKey: &key, Now: clk.Now()})
		return err
	})
	noErr(t, err, "advancing and enqueueing in one transaction")
	got, err = schedulesOf(t, st).ScheduleGet(ctx, sc.ID)
	noErr(t, err, "reading the schedule back")
	timePtrEq(t, got.NextRunAt, next, "a committed advance")
	items, err = st.WorkList(ctx, &store.WorkListParams{Kind: "schedule_fire"})
	noErr(t, err, "listing fires")
	eq(t, len(items), 1, "fires enqueued by the committed transaction")

	// A losing advance inside a transaction leaves it usable.
	err = st.InTx(ctx, func(q store.Queries) error {
		ss := schedulesOf(t, q)
		_, err := ss.ScheduleAdvance(ctx, &store.ScheduleAdvanceParams{ID: sc.ID, ExpectNextRunAt: due, NextRunAt: &next, Now: clk.Now()})
		if !errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("want ErrConflict for a stale advance, got %v", err)
		}
		_, err = ss.ScheduleGet(ctx, sc.ID)
		return err
	})
	noErr(t, err, "a transaction that lost an advance and goes on")
}

func (s suite) testScheduleConcurrentAdvance(t *testing.T) {
	st := s.newStore(t)
	ctx, clk := ctxFor(t), newClock()
	due := clk.Now()
	sc := newRoutine(t, schedulesOf(t, st), clk, "ops", "a", due)
	next := due.Add(time.Hour)
	const n = 8
	var wg sync.WaitGroup
	results := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = st.InTx(ctx, func(q store.Queries) error {
				if _, err := schedulesOf(t, q).ScheduleAdvance(ctx, &store.ScheduleAdvanceParams{
					ID: sc.ID, ExpectNextRunAt: due, LastRunAt: due, NextRunAt: &next, Now: clk.Now(),
				}); err != nil {
					return err
				}
				key := fmt.Sprintf("fire:%s:%d", sc.ID, due.UnixMicro())
				_, err := q.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "schedule_fire", UniqueKey: &key, Now: clk.Now()})
				return err
			})
		}()
	}
	wg.Wait()
	won := 0
	for i, err := range results {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, store.ErrConflict):
			t.Fatalf("advance %d: want nil or ErrConflict, got %v", i, err)
		}
	}
	eq(t, won, 1, "advances of one occurrence that succeeded")
	items, err := st.WorkList(ctx, &store.WorkListParams{Kind: "schedule_fire"})
	noErr(t, err, "listing fires")
	eq(t, len(items), 1, "fires enqueued for one occurrence")
}

func (s suite) testScheduleRuns(t *testing.T) {
	st := s.newStore(t)
	ss := schedulesOf(t, st)
	ctx, clk := ctxFor(t), newClock()
	sc := newRoutine(t, ss, clk, "ops", "a", clk.Now())
	conv := newConversation(t, st, clk)
	r1, err := ss.ScheduleRunCreate(ctx, &store.ScheduleRunCreateParams{ScheduleID: sc.ID, DueAt: clk.Now(), Status: store.RunSkipped, InputHash: "h1", Note: "unchanged", Now: clk.Now()})
	noErr(t, err, "recording run 1")
	eq(t, r1.Seq, int64(1), "seq of the first run")
	isTrue(t, r1.Report == nil, "a new run has no report, got %s", r1.Report)
	clk.Advance(time.Minute)
	r2, err := ss.ScheduleRunCreate(ctx, &store.ScheduleRunCreateParams{ScheduleID: sc.ID, DueAt: clk.Now(), ConversationID: &conv.ID, Status: store.RunStarted, Now: clk.Now()})
	noErr(t, err, "recording run 2")
	eq(t, r2.Seq, int64(2), "seq of the second run")
	uuidPtrEq(t, r2.ConversationID, conv.ID, "run 2 conversation")

	reported := store.RunReported
	clk.Advance(time.Minute)
	up, err := ss.ScheduleRunUpdate(ctx, &store.ScheduleRunUpdateParams{ID: r2.ID, Status: &reported, Report: json.RawMessage(`{"status":"continue"}`), Now: clk.Now()})
	noErr(t, err, "recording run 2's report")
	eq(t, up.Status, store.RunReported, "status after report")
	jsonEq(t, up.Report, json.RawMessage(`{"status":"continue"}`), "report")
	timeEq(t, up.UpdatedAt, clk.Now(), "updated at")
	uuidPtrEq(t, up.ConversationID, conv.ID, "an update without a conversation keeps it")

	byConv, err := ss.ScheduleRunByConversation(ctx, conv.ID)
	noErr(t, err, "finding the run of a conversation")
	eq(t, byConv.ID, r2.ID, "run of the conversation")
	_, err = ss.ScheduleRunByConversation(ctx, uuid.New())
	errIs(t, err, store.ErrNotFound, "finding the run of a conversation that has none")

	runs, err := ss.ScheduleRunList(ctx, &store.ScheduleRunListParams{ScheduleID: sc.ID, Limit: 0})
	noErr(t, err, "listing runs")
	eq(t, len(runs), 2, "runs")
	eq(t, runs[0].Seq, int64(2), "the newest run first")
	got, err := ss.ScheduleGet(ctx, sc.ID)
	noErr(t, err, "getting the schedule")
	eq(t, got.Runs, int64(2), "the schedule counts its runs")

	_, err = ss.ScheduleRunCreate(ctx, &store.ScheduleRunCreateParams{ScheduleID: uuid.New(), DueAt: clk.Now(), Status: store.RunStarted, Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "recording a run of a schedule that does not exist")
	_, err = ss.ScheduleRunCreate(ctx, &store.ScheduleRunCreateParams{ScheduleID: sc.ID, DueAt: clk.Now(), Status: "meh", Now: clk.Now()})
	errIs(t, err, store.ErrInvalid, "recording a run with an unknown status")

	noErr(t, ss.ScheduleDelete(ctx, sc.ID), "deleting the schedule")
	_, err = ss.ScheduleRunGet(ctx, r1.ID)
	errIs(t, err, store.ErrNotFound, "a deleted schedule's runs go with it")
}

func (s suite) testScheduleUsage(t *testing.T) {
	st := s.newStore(t)
	ss := schedulesOf(t, st)
	ctx, clk := ctxFor(t), newClock()
	loop := newRoutine(t, ss, clk, "ops", "loop", clk.Now())
	other := newRoutine(t, ss, clk, "ops", "other", clk.Now())
	empty, err := ss.ScheduleUsageTotal(ctx, loop.ID)
	noErr(t, err, "summing usage of a schedule without runs")
	eq(t, *empty, store.ScheduleUsage{}, "usage of a schedule without runs")

	record := func(sc *store.Schedule, in, out int64) {
		conv := newConversation(t, st, clk)
		_, err := ss.ScheduleRunCreate(ctx, &store.ScheduleRunCreateParams{ScheduleID: sc.ID, DueAt: clk.Now(), ConversationID: &conv.ID, Status: store.RunStarted, Now: clk.Now()})
		noErr(t, err, "recording a run")
		noErr(t, st.UsageRecord(ctx, &store.Usage{ID: uuid.New(), ConversationID: conv.ID, Provider: "scripted", Model: "m",
			InputTokens: in, OutputTokens: out, CachedTokens: 1, CacheWriteTokens: 5, CostMicroUSD: 10, CreatedAt: clk.Now()}), "recording usage")
	}
	record(loop, 100, 10)
	record(loop, 200, 20)
	record(other, 1000, 1000)
	got, err := ss.ScheduleUsageTotal(ctx, loop.ID)
	noErr(t, err, "summing usage of the loop")
	eq(t, *got, store.ScheduleUsage{Calls: 2, InputTokens: 300, OutputTokens: 30, CachedTokens: 2, CacheWriteTokens: 10, CostMicroUSD: 20}, "usage of the loop's runs only")
	eq(t, got.Tokens(), int64(342), "the loop's budgeted tokens count cache reads and writes")
}

// testSweepKeepsUp: one sweep deletes every finished item past retention,
// batch after batch, not one batch: at one batch of 1,000 a minute a store
// finishing more than 17 items a second grew without bound.
func (s suite) testSweepKeepsUp(t *testing.T) {
	st := s.newStore(t)
	ctx, clk := ctxFor(t), newClock()
	const n = store.DefaultPruneLimit*2 + 150
	for range n {
		_, err := st.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "sweep_bulk", Now: clk.Now()})
		noErr(t, err, "enqueueing")
	}
	finished := 0
	for finished < n {
		items, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: "w", Kinds: []string{"sweep_bulk"}, Limit: 500, LeaseTTL: time.Minute, Now: clk.Now()})
		noErr(t, err, "claiming")
		ids := make([]uuid.UUID, len(items))
		for i, it := range items {
			ids[i] = it.ID
		}
		_, err = st.WorkCompleteMany(ctx, &store.WorkCompleteManyParams{IDs: ids, Worker: "w", Now: clk.Now()})
		noErr(t, err, "completing")
		finished += len(items)
	}
	res, err := st.Sweep(ctx, &store.SweepParams{Now: clk.Advance(store.DefaultWorkRetention + time.Minute)})
	noErr(t, err, "sweeping")
	eq(t, res.Work, n, "finished items one sweep deleted")
	left, err := st.WorkList(ctx, &store.WorkListParams{Kind: "sweep_bulk"})
	noErr(t, err, "listing")
	eq(t, len(left), 0, "items left after the sweep")
}

// testSweepRetention: SweepParams.WorkRetention replaces the default, and
// one under the minimum is refused, naming it.
func (s suite) testSweepRetention(t *testing.T) {
	st := s.newStore(t)
	ctx, clk := ctxFor(t), newClock()
	res, err := st.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "sweep_ret", Now: clk.Now()})
	noErr(t, err, "enqueueing")
	_, err = st.WorkClaim(ctx, &store.WorkClaimParams{Worker: "w", Kinds: []string{"sweep_ret"}, Limit: 1, LeaseTTL: time.Minute, Now: clk.Now()})
	noErr(t, err, "claiming")
	_, err = st.WorkComplete(ctx, &store.WorkLeaseParams{ID: res.Item.ID, Worker: "w", Now: clk.Now()})
	noErr(t, err, "completing")

	swept, err := st.Sweep(ctx, &store.SweepParams{Now: clk.Advance(90 * time.Minute), WorkRetention: 2 * time.Hour})
	noErr(t, err, "sweeping within the retention")
	eq(t, swept.Work, 0, "items swept within a 2h retention")
	swept, err = st.Sweep(ctx, &store.SweepParams{Now: clk.Advance(time.Hour), WorkRetention: 2 * time.Hour})
	noErr(t, err, "sweeping past the retention")
	eq(t, swept.Work, 1, "items swept past a 2h retention")

	_, err = st.Sweep(ctx, &store.SweepParams{Now: clk.Now(), WorkRetention: time.Minute})
	errIs(t, err, store.ErrInvalid, "a retention under the minimum")
	if err == nil || !strings.Contains(err.Error(), "WorkRetention") {
		t.Errorf("the error %v should name WorkRetention", err)
	}
}

// testSweep: the spine's Sweep deletes event ids, finished work (keyed and
// failed items too) and expired named leases past their retention, and
// keeps what is recent or live.
func (s suite) testSweep(t *testing.T) {
	st := s.newStore(t)
	ctx, clk := ctxFor(t), newClock()
	old := clk.Now()

	_, err := st.InboundRecord(ctx, &store.InboundRecordParams{Platform: "slack", EventID: "old", Now: old})
	noErr(t, err, "recording an old event")
	finish := func(key *string, fail bool) uuid.UUID {
		res, err := st.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "sweep_test", UniqueKey: key, MaxAttempts: 1, Now: clk.Now()})
		noErr(t, err, "enqueueing")
		items, err := st.WorkClaim(ctx, &store.WorkClaimParams{Worker: "w", Kinds: []string{"sweep_test"}, Limit: 1, LeaseTTL: time.Minute, Now: clk.Now()})
		noErr(t, err, "claiming")
		eq(t, len(items), 1, "items claimed")
		if fail {
			_, err = st.WorkFail(ctx, &store.WorkFailParams{ID: res.Item.ID, Worker: "w", Error: "x", Now: clk.Now()})
		} else {
			_, err = st.WorkComplete(ctx, &store.WorkLeaseParams{ID: res.Item.ID, Worker: "w", Now: clk.Now()})
		}
		noErr(t, err, "finishing")
		return res.Item.ID
	}
	doneOld := finish(nil, false)
	keyedOld := finish(ptr("fire:x"), false)
	failedOld := finish(nil, true)
	ok, err := st.LeaseAcquire(ctx, &store.NamedLeaseParams{Name: "old-lease", Owner: "a", TTL: time.Second, Now: old})
	noErr(t, err, "taking a lease")
	isTrue(t, ok, "the lease was free")

	// Past every retention window for the old rows, within it for the new.
	cut := clk.Advance(store.DefaultWorkRetention + time.Hour)
	_, err = st.InboundRecord(ctx, &store.InboundRecordParams{Platform: "slack", EventID: "new", Now: cut})
	noErr(t, err, "recording a new event")
	doneNew := finish(nil, false)
	ok, err = st.LeaseAcquire(ctx, &store.NamedLeaseParams{Name: "live-lease", Owner: "a", TTL: time.Hour, Now: cut})
	noErr(t, err, "taking a live lease")
	isTrue(t, ok, "the live lease was free")

	res, err := st.Sweep(ctx, &store.SweepParams{Now: cut})
	noErr(t, err, "sweeping")
	eq(t, *res, store.SweepResult{Inbound: 1, Work: 3, Leases: 1}, "rows swept")
	again, err := st.Sweep(ctx, &store.SweepParams{Now: cut})
	noErr(t, err, "sweeping again")
	eq(t, *again, store.SweepResult{}, "rows swept by a second sweep")

	fresh, err := st.InboundRecord(ctx, &store.InboundRecordParams{Platform: "slack", EventID: "old", Now: cut})
	noErr(t, err, "recording the swept event again")
	isTrue(t, fresh, "a swept event id is new again")
	fresh, err = st.InboundRecord(ctx, &store.InboundRecordParams{Platform: "slack", EventID: "new", Now: cut})
	noErr(t, err, "recording the kept event again")
	isTrue(t, !fresh, "a recent event id is kept")
	for _, id := range []uuid.UUID{doneOld, keyedOld, failedOld} {
		_, err = st.WorkGet(ctx, id)
		errIs(t, err, store.ErrNotFound, "an item finished past WorkRetention is swept (%s)", id)
	}
	_, err = st.WorkGet(ctx, doneNew)
	noErr(t, err, "a recently finished item is kept")
	ok, err = st.LeaseAcquire(ctx, &store.NamedLeaseParams{Name: "live-lease", Owner: "b", TTL: time.Hour, Now: cut})
	noErr(t, err, "taking the live lease as another owner")
	isTrue(t, !ok, "a live lease survives the sweep")
}

// testSchedulePrune: done reminders (and their runs) last updated before the
// cutoff go; pending ones and other kinds stay.
func (s suite) testSchedulePrune(t *testing.T) {
	st := s.newStore(t)
	ctx, clk := ctxFor(t), newClock()
	old := clk.Now()
	rem, err := st.ScheduleCreate(ctx, &store.ScheduleCreateParams{Kind: store.ScheduleReminder, Agent: "ops", Name: "r1", Spec: "at x", State: store.ScheduleDone, Now: old})
	noErr(t, err, "creating a done reminder")
	_, err = st.ScheduleRunCreate(ctx, &store.ScheduleRunCreateParams{ScheduleID: rem.ID, DueAt: old, Status: store.RunFinished, Now: old})
	noErr(t, err, "recording the reminder's run")
	active, err := st.ScheduleCreate(ctx, &store.ScheduleCreateParams{Kind: store.ScheduleReminder, Agent: "ops", Name: "r2", Spec: "at x", Now: old})
	noErr(t, err, "creating a pending reminder")
	routine, err := st.ScheduleCreate(ctx, &store.ScheduleCreateParams{Kind: store.ScheduleRoutine, Agent: "ops", Name: "r3", Spec: "every 1h", State: store.ScheduleDone, Now: old})
	noErr(t, err, "creating a done routine")

	cut := clk.Advance(48 * time.Hour)
	n, err := st.SchedulePrune(ctx, &store.SchedulePruneParams{Before: cut.Add(-time.Hour)})
	noErr(t, err, "pruning reminders")
	eq(t, n, 1, "reminders pruned")
	_, err = st.ScheduleGet(ctx, rem.ID)
	errIs(t, err, store.ErrNotFound, "an old done reminder is pruned")
	runs, err := st.ScheduleRunList(ctx, &store.ScheduleRunListParams{ScheduleID: rem.ID})
	noErr(t, err, "listing the pruned reminder's runs")
	eq(t, len(runs), 0, "runs of a pruned reminder")
	for _, id := range []uuid.UUID{active.ID, routine.ID} {
		_, err = st.ScheduleGet(ctx, id)
		noErr(t, err, "a pending reminder or a done routine is kept (%s)", id)
	}
}

// testScheduleRunSettleOnce is the compare-and-set a reminder's Snooze and
// Done buttons rely on: of several conditional updates of one run's note
// racing, each inside a transaction, exactly one wins and the others get
// ErrConflict; an unconditional update still applies.
func (s suite) testScheduleRunSettleOnce(t *testing.T) {
	st := s.newStore(t)
	ss := schedulesOf(t, st)
	ctx, clk := ctxFor(t), newClock()
	sc := newRoutine(t, ss, clk, "ops", "settle", clk.Now())
	run, err := ss.ScheduleRunCreate(ctx, &store.ScheduleRunCreateParams{ScheduleID: sc.ID, DueAt: clk.Now(), Status: store.RunFinished, Note: "delivered", Now: clk.Now()})
	noErr(t, err, "recording a run")
	const n = 8
	var wg sync.WaitGroup
	results := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = st.InTx(ctx, func(q store.Queries) error {
				_, err := schedulesOf(t, q).ScheduleRunUpdate(ctx, &store.ScheduleRunUpdateParams{
					ID: run.ID, Note: new(fmt.Sprintf("done by %d", i)), ExpectNote: new("delivered"), Now: clk.Now(),
				})
				return err
			})
		}()
	}
	wg.Wait()
	won := -1
	for i, err := range results {
		switch {
		case err == nil:
			isTrue(t, won < 0, "updates %d and %d both won", won, i)
			won = i
		case !errors.Is(err, store.ErrConflict):
			t.Fatalf("update %d: want nil or ErrConflict, got %v", i, err)
		}
	}
	isTrue(t, won >= 0, "no conditional update won")
	got, err := ss.ScheduleRunGet(ctx, run.ID)
	noErr(t, err, "reading the run")
	eq(t, got.Note, fmt.Sprintf("done by %d", won), "the note the winner wrote")

	_, err = ss.ScheduleRunUpdate(ctx, &store.ScheduleRunUpdateParams{ID: uuid.New(), Note: new("x"), ExpectNote: new("delivered"), Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "a conditional update of a run that does not exist")
	up, err := ss.ScheduleRunUpdate(ctx, &store.ScheduleRunUpdateParams{ID: run.ID, Note: new("rewritten"), Now: clk.Now()})
	noErr(t, err, "an unconditional update")
	eq(t, up.Note, "rewritten", "note after an unconditional update")
}
