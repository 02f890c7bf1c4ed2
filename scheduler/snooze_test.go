package scheduler

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// reminderFirings are the reminder messages in user's DM with their
// buttons, oldest first.
func (e *env) reminderFirings(user string) []core.AssistantContent {
	e.t.Helper()
	var out []core.AssistantContent
	for _, conv := range e.boundTo("slack", "T1", "user:"+user) {
		entries := must(e.st.EntryList(context.Background(), &store.EntryListParams{ConversationID: conv}))(e.t)
		for _, en := range entries {
			if en.Kind != store.EntryAssistant {
				continue
			}
			c := must(core.Decode[core.AssistantContent](en))(e.t)
			out = append(out, c)
		}
	}
	return out
}

// click presses a reminder message's button by value, as user.
func (e *env) click(c core.AssistantContent, value, user, event string) *core.ActionResult {
	e.t.Helper()
	for _, b := range c.Buttons {
		if b.Value == value {
			res, err := e.sched.ReminderAct(context.Background(), &core.Action{
				Platform: "slack", EventID: event, ActionID: b.ActionID, Value: value, UserID: user, UserName: strings.ToLower(user),
			})
			if err != nil {
				e.t.Fatalf("clicking %s: %v", value, err)
			}
			return res
		}
	}
	e.t.Fatalf("the reminder %q has no button %q: %+v", c.Text, value, c.Buttons)
	return nil
}

// A one-off reminder fires with Snooze and Done buttons. Snooze moves it:
// it is active again and fires a second time at the new time, with fresh
// buttons; a late click on the first firing changes nothing and says who
// came first. Done on the second firing ends it: nothing fires again.
func TestReminderSnoozeThenDone(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(testing.TB) store.Store) {
		e := newEnv(t, open(t), nil)
		ctx := context.Background()
		rem := must(e.sched.Remind(ctx, RemindParams{Agent: "ops", Owner: "U1", Platform: "slack", Workspace: "T1", At: t0.Add(time.Hour), Text: "water the plants"}))(t)
		e.clock.Advance(time.Hour)
		e.tick()
		e.runWork()
		firings := e.reminderFirings("U1")
		if len(firings) != 1 || len(firings[0].Buttons) != 4 {
			t.Fatalf("want one reminder with Snooze 15 min, Snooze 1 h, Tomorrow and Done, got %+v", firings)
		}
		if res := e.click(firings[0], ReminderSnooze15m, "U2", "ev-other"); !res.Refused {
			t.Fatalf("someone else's click must be refused, got %+v", res)
		}
		clickAt := e.clock.Now()
		res := e.click(firings[0], ReminderSnooze15m, "U1", "ev-1")
		if res.Duplicate || res.Refused || !strings.HasPrefix(res.Outcome, "Snoozed until ") {
			t.Fatalf("a first Snooze must take effect and say so, got %+v", res)
		}
		sc := e.schedule(rem.ID)
		if want := clickAt.Add(15 * time.Minute); sc.State != store.ScheduleActive || sc.NextRunAt == nil || !sc.NextRunAt.Equal(want) {
			t.Fatalf("a snoozed one-off reminder is active again, next at %s; got %s next %v", want, sc.State, sc.NextRunAt)
		}
		// The same click again (a platform retry) and a rival Done: no change.
		if again := e.click(firings[0], ReminderSnooze15m, "U1", "ev-1"); !again.Duplicate || again.Settled != nil {
			t.Fatalf("a retried click is a duplicate with nothing to tell, got %+v", again)
		}
		late := e.click(firings[0], ReminderDone, "U1", "ev-2")
		if !late.Duplicate || late.Settled == nil || late.Settled.By != "u1" || !strings.HasPrefix(late.Settled.Choice, "Snoozed until") {
			t.Fatalf("a late Done is told the firing was snoozed by u1, got %+v (settled %+v)", late, late.Settled)
		}
		if got := e.schedule(rem.ID); !got.NextRunAt.Equal(*sc.NextRunAt) || got.State != store.ScheduleActive {
			t.Fatalf("a late click changed the reminder: %s next %v", got.State, got.NextRunAt)
		}

		e.clock.Advance(15*time.Minute - time.Second)
		if n := e.tick(); n != 0 {
			t.Fatalf("the snoozed reminder fired early: %d", n)
		}
		e.clock.Advance(time.Second)
		if n := e.tick(); n != 1 {
			t.Fatalf("the snoozed reminder must fire at its new time: %d fires", n)
		}
		e.runWork()
		firings = e.reminderFirings("U1")
		if len(firings) != 2 || firings[1].Text != "⏰ Reminder: water the plants" || firings[1].Buttons[0].ActionID == firings[0].Buttons[0].ActionID {
			t.Fatalf("want the reminder a second time with buttons of its own, got %+v", firings)
		}
		if res := e.click(firings[1], ReminderDone, "U1", "ev-3"); res.Duplicate || res.Outcome != "Done" {
			t.Fatalf("Done on the second firing must take effect, got %+v", res)
		}
		if got := e.schedule(rem.ID); got.State != store.ScheduleDone || got.NextRunAt != nil {
			t.Fatalf("Done ends a one-off reminder: got %s next %v", got.State, got.NextRunAt)
		}
		e.clock.Advance(48 * time.Hour)
		if n := e.tick(); n != 0 {
			t.Fatalf("a reminder marked done fired again: %d", n)
		}
		runs := must(e.st.ScheduleRunList(ctx, &store.ScheduleRunListParams{ScheduleID: rem.ID}))(t)
		if len(runs) != 2 || !strings.HasPrefix(runs[0].Note, "Done — by u1") || !strings.HasPrefix(runs[1].Note, "Snoozed until") {
			t.Fatalf("each firing's run says how it was settled and by whom, got %q, %q", runs[0].Note, runs[len(runs)-1].Note)
		}
	})
}

// A recurring reminder's Snooze adds one firing and leaves its regular
// occurrences; Done acknowledges one firing only. "Tomorrow" is 09:00 the
// next day in the reminder's time zone.
func TestReminderRecurringSnooze(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(testing.TB) store.Store) {
		e := newEnv(t, open(t), nil)
		ctx := context.Background()
		next := t0.Add(4 * time.Hour)
		rem := must(e.st.ScheduleCreate(ctx, &store.ScheduleCreateParams{
			Kind: store.ScheduleReminder, Agent: "ops", Name: "stretch", Owner: "U1", Place: store.DM("slack", "T1", "U1"),
			Spec: "every 4h", Instruction: "stretch", Source: "test", NextRunAt: &next, Now: t0,
		}))(t)
		e.clock.Advance(4 * time.Hour)
		e.tick()
		e.runWork()
		firings := e.reminderFirings("U1")
		if len(firings) != 1 {
			t.Fatalf("want the first firing, got %+v", firings)
		}
		if res := e.click(firings[0], ReminderSnooze1h, "U1", "ev-1"); res.Duplicate || !strings.HasPrefix(res.Outcome, "Snoozed until") {
			t.Fatalf("Snooze on a recurring reminder must take effect, got %+v", res)
		}
		regular := t0.Add(8 * time.Hour)
		if sc := e.schedule(rem.ID); sc.State != store.ScheduleActive || !sc.NextRunAt.Equal(regular) {
			t.Fatalf("a snoozed recurring reminder keeps its regular next run %s, got %s %v", regular, sc.State, sc.NextRunAt)
		}
		e.clock.Advance(time.Hour)
		e.runWork()
		firings = e.reminderFirings("U1")
		if len(firings) != 2 {
			t.Fatalf("want the extra firing an hour later, got %d: %+v", len(firings), firings)
		}
		if res := e.click(firings[1], ReminderDone, "U1", "ev-2"); res.Outcome != "Done" {
			t.Fatalf("Done on a recurring reminder acknowledges the firing, got %+v", res)
		}
		if sc := e.schedule(rem.ID); sc.State != store.ScheduleActive || !sc.NextRunAt.Equal(regular) {
			t.Fatalf("Done on a recurring reminder leaves it running, got %s %v", sc.State, sc.NextRunAt)
		}
		e.clock.Advance(3 * time.Hour)
		if n := e.tick(); n != 1 {
			t.Fatalf("the regular occurrence must still fire: %d", n)
		}
		e.runWork()
		if n := len(e.reminderFirings("U1")); n != 3 {
			t.Fatalf("want three firings in all, got %d", n)
		}

		at, _ := snoozeUntil(ReminderSnoozeTomorrow, time.Date(2026, 3, 2, 23, 30, 0, 0, time.UTC), "America/New_York")
		if want := time.Date(2026, 3, 3, 14, 0, 0, 0, time.UTC); !at.Equal(want) { // 09:00 EST
			t.Fatalf("Tomorrow from 18:30 New York time: want %s, got %s", want, at)
		}
	})
}

// Racing clicks on one firing, each a click of its own (another event id):
// exactly one takes effect and the reminder moves once.
func TestReminderClicksRaceOnce(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(testing.TB) store.Store) {
		e := newEnv(t, open(t), nil)
		ctx := context.Background()
		rem := must(e.sched.Remind(ctx, RemindParams{Agent: "ops", Owner: "U1", Platform: "slack", Workspace: "T1", At: t0.Add(time.Minute), Text: "call Ana"}))(t)
		e.clock.Advance(time.Minute)
		e.tick()
		e.runWork()
		firing := e.reminderFirings("U1")[0]
		choices := []string{ReminderSnooze15m, ReminderSnooze1h, ReminderSnoozeTomorrow, ReminderDone}
		const n = 8
		results := make([]*core.ActionResult, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var id string
				for _, b := range firing.Buttons {
					id = b.ActionID
				}
				res, err := e.sched.ReminderAct(ctx, &core.Action{Platform: "slack", EventID: fmt.Sprintf("race-%d", i), ActionID: id, Value: choices[i%4], UserID: "U1"})
				if err != nil {
					t.Errorf("click %d: %v", i, err)
				}
				results[i] = res
			}()
		}
		wg.Wait()
		won := 0
		var outcome string
		for _, r := range results {
			if r != nil && !r.Duplicate {
				won++
				outcome = r.Outcome
			}
		}
		if won != 1 {
			t.Fatalf("want exactly one click to take effect, got %d", won)
		}
		sc := e.schedule(rem.ID)
		if (outcome == "Done") != (sc.State == store.ScheduleDone) {
			t.Fatalf("the reminder's state %s does not match the winning click %q", sc.State, outcome)
		}
	})
}
