package scheduler

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/store"
)

// inbox is a pulse input a test changes at will.
type inbox struct {
	mu   sync.Mutex
	text string
}

func (b *inbox) set(s string) { b.mu.Lock(); b.text = s; b.mu.Unlock() }

func (b *inbox) read(context.Context, InputRequest) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.text, nil
}

// A pulse whose checklist inputs did not change since the last one makes no
// model call; one whose inputs changed runs a turn, and messages the owner
// only when its report asks to.
func TestPulseIsCheap(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(testing.TB) store.Store) {
		box := &inbox{text: "3 unread, nothing urgent"}
		e := newEnv(t, open(t), nil, func(o *Options) { o.Inputs = map[string]InputFunc{"inbox": box.read} })
		ctx := context.Background()
		var notify struct {
			sync.Mutex
			on  bool
			msg string
		}
		e.backend.setRespond(callThenDone(ToolPulseReport, func() any {
			notify.Lock()
			defer notify.Unlock()
			return PulseReport{Status: "ok", Summary: "checked the inbox", Notify: notify.on, Message: notify.msg}
		}))
		sc, err := e.sched.CreateSchedule(ctx, ScheduleParams{
			Kind: store.SchedulePulse, Agent: "ops", Name: "inbox-watch", Owner: "U1",
			Target: Target{Platform: "slack", Workspace: "T1"}, Spec: "every 30m",
			Pulse: &PulseConfig{Checklist: []ChecklistItem{
				{Item: "Anything urgent in the inbox?", Source: "inbox"},
				{Item: "Be brief."},
			}, RunAs: "lite"},
		})
		if err != nil {
			t.Fatal(err)
		}
		pulse := func() {
			t.Helper()
			e.clock.Advance(30 * time.Minute)
			if n := e.tick(); n != 1 {
				t.Fatalf("want one pulse fire, got %d", n)
			}
			e.runWork()
		}

		pulse()
		if got := e.backend.Calls(); got != 2 {
			t.Fatalf("the first pulse looks: want 2 model calls (report, then end), got %d", got)
		}
		for range 3 {
			pulse()
		}
		if got := e.backend.Calls(); got != 2 {
			t.Fatalf("pulses with unchanged inputs must make no model call: want still 2 calls, got %d", got)
		}
		runs := must(e.sched.st.ScheduleRunList(ctx, &store.ScheduleRunListParams{ScheduleID: sc.ID, Limit: 0}))(t)
		if len(runs) != 4 || runs[0].Status != store.RunSkipped || runs[3].Status != store.RunReported {
			t.Fatalf("runs: want 1 reported then 3 skipped, got %d: %+v", len(runs), runs)
		}
		if dms := e.dms("slack", "T1", "U1"); len(dms) != 0 {
			t.Fatalf("a pulse with nothing to surface must not message the owner: %q", dms)
		}

		box.set("4 unread: the CEO asks about the outage")
		notify.Lock()
		notify.on, notify.msg = true, "The CEO is asking about the outage."
		notify.Unlock()
		pulse()
		if got := e.backend.Calls(); got != 4 {
			t.Fatalf("changed inputs make the pulse look again: want 4 calls, got %d", got)
		}
		dms := e.dms("slack", "T1", "U1")
		if len(dms) != 1 || dms[0] != "The CEO is asking about the outage." {
			t.Fatalf("a report marked notify reaches the owner once by DM, got %q", dms)
		}
		pulse()
		if got := e.backend.Calls(); got != 4 {
			t.Fatalf("unchanged again: want still 4 calls, got %d", got)
		}
		// The pulse ran as the cheaper agent it names.
		runs = must(e.sched.st.ScheduleRunList(ctx, &store.ScheduleRunListParams{ScheduleID: sc.ID, Limit: 0}))(t)
		conv := must(e.st.ConversationGet(ctx, *runs[1].ConversationID))(t)
		lite := must(e.st.AgentGetByName(ctx, "lite"))(t)
		if conv.AgentID == nil || *conv.AgentID != lite.ID {
			t.Fatalf("the pulse turn must run as run_as agent lite")
		}
		if !strings.Contains(string(runs[1].Report), "CEO") {
			t.Fatalf("the run keeps the report: %s", runs[1].Report)
		}
	})
}

func TestPulseActiveHours(t *testing.T) {
	t.Parallel()
	e := newEnv(t, newSQLite(t), nil)
	ctx := context.Background()
	sc, err := e.sched.CreateSchedule(ctx, ScheduleParams{
		Kind: store.SchedulePulse, Agent: "ops", Name: "office", Owner: "U1",
		Target: Target{Platform: "slack", Workspace: "T1"}, Spec: "every 1h", TimeZone: "America/New_York",
		Pulse: &PulseConfig{
			Checklist:   []ChecklistItem{{Item: "today", Source: "hour"}},
			ActiveHours: &ActiveHours{Start: "09:00", End: "17:00", Days: []string{"mon", "tue", "wed", "thu", "fri"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.backend.setRespond(callThenDone(ToolPulseReport, func() any { return PulseReport{Status: "ok", Summary: "fine"} }))
	// t0 is Monday 07:00 in New York: fires at 08:00 (outside), 09:00 ... 16:00 (inside), 17:00 (outside).
	for range 10 {
		e.clock.Advance(time.Hour)
		e.tick()
		e.runWork()
	}
	runs := must(e.sched.st.ScheduleRunList(ctx, &store.ScheduleRunListParams{ScheduleID: sc.ID, Limit: 0}))(t)
	var ran, skipped int
	for _, r := range runs {
		switch {
		case r.Status == store.RunSkipped && r.Note == "outside active hours":
			skipped++
		case r.ConversationID != nil:
			ran++
		}
	}
	if ran != 8 || skipped != 2 {
		t.Fatalf("within 09:00-17:00 New York: want 8 pulses run and 2 skipped, got %d and %d", ran, skipped)
	}
}
