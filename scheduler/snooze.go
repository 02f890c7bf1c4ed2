package scheduler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// A reminder is posted with four buttons: Snooze 15 min, Snooze 1 h,
// Tomorrow and Done. Each firing is a schedule run, and the buttons name
// that run; the first click settles the firing by a compare-and-set on the
// run's note (delivered → what was done and by whom), so two clicks, or
// one click delivered to two instances, change the schedule once.
//
//   - Snooze, one-off reminder: the reminder is active again and fires at
//     the new time (its spec becomes "at <new time>").
//   - Snooze, recurring reminder: one extra firing at the new time (a fire
//     work item keyed like the clock's); its regular occurrences stay.
//   - Done, one-off reminder: it was done when it fired; Done says so and
//     the buttons go. Done, recurring: this firing only is acknowledged;
//     the next occurrence still comes.
//
// "Tomorrow" is 09:00 the next day in the reminder's time zone (UTC when
// it has none).

// Reminder button values.
const (
	ReminderSnooze15m      = "snooze-15m"
	ReminderSnooze1h       = "snooze-1h"
	ReminderSnoozeTomorrow = "snooze-tomorrow"
	ReminderDone           = "done"
)

// runDelivered is the note of a reminder's firing nobody has settled yet.
const runDelivered = "delivered"

// settledBy separates what was done from who did it in a settled run's note.
const settledBy = " — by "

// tomorrowHour is the local hour a "Tomorrow" snooze fires at.
const tomorrowHour = 9

// reminderButtons are the buttons of one firing.
func reminderButtons(runID uuid.UUID) []core.ActionButton {
	id := core.ReminderActionPrefix + runID.String()
	return []core.ActionButton{
		{ActionID: id, Value: ReminderSnooze15m, Label: "Snooze 15 min"},
		{ActionID: id, Value: ReminderSnooze1h, Label: "Snooze 1 h"},
		{ActionID: id, Value: ReminderSnoozeTomorrow, Label: "Tomorrow"},
		{ActionID: id, Value: ReminderDone, Label: "Done", Style: "primary"},
	}
}

// snoozeUntil is when a snooze choice fires again, or false for a choice
// that is not a snooze.
func snoozeUntil(choice string, now time.Time, tz string) (time.Time, bool) {
	switch choice {
	case ReminderSnooze15m:
		return now.Add(15 * time.Minute), true
	case ReminderSnooze1h:
		return now.Add(time.Hour), true
	case ReminderSnoozeTomorrow:
		loc, err := loadLocation(tz)
		if err != nil {
			loc = time.UTC
		}
		l := now.In(loc)
		return time.Date(l.Year(), l.Month(), l.Day()+1, tomorrowHour, 0, 0, 0, loc).UTC(), true
	}
	return time.Time{}, false
}

var errClickSeen = errors.New("click already recorded")

// ReminderAct decides a click on a reminder's Snooze or Done button
// (core.Options.ReminderActFunc). Only the person reminded may click.
func (s *Scheduler) ReminderAct(ctx context.Context, a *core.Action) (*core.ActionResult, error) {
	runID, err := uuid.Parse(strings.TrimPrefix(a.ActionID, core.ReminderActionPrefix))
	if err != nil {
		return nil, fmt.Errorf("%w: malformed reminder action %q", core.ErrInvalid, a.ActionID)
	}
	if a.Value != ReminderDone && a.Value != ReminderSnooze15m && a.Value != ReminderSnooze1h && a.Value != ReminderSnoozeTomorrow {
		return nil, fmt.Errorf("%w: unknown reminder choice %q", core.ErrInvalid, a.Value)
	}
	run, err := s.st.ScheduleRunGet(ctx, runID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: the reminder was deleted", core.ErrInvalid)
	}
	if err != nil {
		return nil, fmt.Errorf("loading reminder firing %s: %w", runID, err)
	}
	sc, err := s.st.ScheduleGet(ctx, run.ScheduleID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: the reminder was deleted", core.ErrInvalid)
	}
	if err != nil {
		return nil, fmt.Errorf("loading reminder %s: %w", run.ScheduleID, err)
	}
	if sc.Kind != store.ScheduleReminder {
		return nil, fmt.Errorf("%w: schedule %s is not a reminder", core.ErrInvalid, sc.ID)
	}
	if sc.Owner != "" && a.UserID != sc.Owner {
		return &core.ActionResult{Refused: true, Reason: "Only the person reminded can snooze or end this reminder."}, nil
	}
	now := s.now()
	at, snooze := snoozeUntil(a.Value, now, sc.TimeZone)
	outcome := "Done"
	if snooze {
		outcome = "Snoozed until " + localTime(at, sc.TimeZone)
	}
	by := cmp.Or(a.UserName, a.UserID)
	note := outcome + settledBy + by
	oneOff := strings.HasPrefix(sc.Spec, "at ")
	err = s.st.InTx(ctx, func(q store.Queries) error {
		if a.EventID != "" {
			fresh, err := q.InboundRecord(ctx, &store.InboundRecordParams{Platform: a.Platform, EventID: a.EventID, Now: now})
			if err != nil {
				return fmt.Errorf("recording click %s: %w", a.EventID, err)
			}
			if !fresh {
				return errClickSeen
			}
		}
		delivered := runDelivered
		if _, err := q.ScheduleRunUpdate(ctx, &store.ScheduleRunUpdateParams{
			ID: run.ID, Note: &note, ExpectNote: &delivered, Now: now,
		}); err != nil {
			return err
		}
		switch {
		case !snooze:
			return nil
		case oneOff:
			spec := "at " + at.Format(time.RFC3339Nano)
			active, done, none := store.ScheduleActive, store.ScheduleDone, ""
			_, err := q.ScheduleUpdate(ctx, &store.ScheduleUpdateParams{
				ID: sc.ID, Spec: &spec, State: &active, StateReason: &none, NextRunAt: &at,
				ExpectState: &done, Now: now,
			})
			return err
		default:
			key := fireKey(sc.ID, at)
			_, err := core.Enqueue(ctx, q, fireArgs{ScheduleID: sc.ID, Due: at}, &core.EnqueueOpts{
				RunAt: at, Priority: 1, UniqueKey: &key, Now: now,
			})
			return err
		}
	})
	switch {
	case errors.Is(err, errClickSeen):
		return &core.ActionResult{Duplicate: true}, nil
	case errors.Is(err, store.ErrConflict):
		res := &core.ActionResult{Duplicate: true}
		if cur, gerr := s.st.ScheduleRunGet(ctx, run.ID); gerr == nil {
			res.Settled = settledOf(cur)
		}
		return res, nil
	case err != nil:
		return nil, fmt.Errorf("settling reminder %s: %w", sc.ID, err)
	}
	s.log.InfoContext(ctx, "reminder settled", "schedule_id", sc.ID, "run_id", run.ID, "choice", a.Value, "by", by)
	return &core.ActionResult{Outcome: outcome}, nil
}

// settledOf says how a firing was settled, from its run's note.
func settledOf(run *store.ScheduleRun) *core.Settled {
	what, who, ok := strings.Cut(run.Note, settledBy)
	if !ok {
		return nil
	}
	return &core.Settled{By: who, Choice: what, At: run.UpdatedAt}
}
