package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// RunNowResult says what RunNow did.
type RunNowResult struct {
	// Due is the occurrence the fire stands for: for a routine or pulse,
	// now to the minute; for a reminder, the time it was set for; for a
	// loop, now.
	Due time.Time
	// Fired is false when nothing new was queued because this occurrence
	// had already been fired: a second "run now" of a routine within the
	// same minute, a reminder already delivered (by the clock or an
	// earlier run now), a loop whose iteration is under way.
	Fired bool
	// Next is when the schedule fires next on its own; nil when nothing is
	// scheduled: a reminder that is done, or a loop whose iteration is
	// under way (the server sets its next when the iteration ends).
	Next *time.Time
	// Note says what happened in words for the person who asked.
	Note string
	// Schedule is the schedule as it stands after the run now.
	Schedule *store.Schedule
}

// errRunNowRaced is a run now whose compare-and-set lost to a change of
// the schedule made since it was read (the clock's fire, an edit).
var errRunNowRaced = errors.New("the schedule changed while it was being run now")

// RunNow fires an active schedule once, now, through the same fire path
// as the clock: a WorkFire item run by the same handler, so a retried fire
// starts nothing twice. What "now" means depends on the kind:
//
//   - routine, pulse: an extra run, keyed by the current minute; the next
//     occurrence stays where it was. Two requests in one minute, or a
//     request racing the clock's fire of that minute, make one run.
//   - reminder: its pending occurrence fires now instead of at its time.
//     The schedule is advanced past it (done, for a one-shot reminder; its
//     next occurrence after the one consumed, for a repeating one) with the
//     same compare-and-set on next_run_at, in the same transaction as the
//     fire item, whose unique key is the clock's for that occurrence: run
//     now and the clock's fire, on one instance or two, deliver it once.
//   - loop: its next iteration starts now instead of at its tick. The tick
//     is consumed with the same compare-and-set and the fire carries the
//     clock's key for that iteration, so the loop never runs two iterations
//     for one tick; its next iteration is one interval after this one ends,
//     as after any iteration, and only if the server decides to go on. A
//     loop whose iteration is under way queues nothing.
//
// A paused or blocked schedule is refused ("resume it first"), and so is a
// loop that is done.
func (s *Scheduler) RunNow(ctx context.Context, sc *store.Schedule) (*RunNowResult, error) {
	switch sc.Kind {
	case store.ScheduleRoutine, store.SchedulePulse:
		return s.runNowExtra(ctx, sc)
	case store.ScheduleReminder, store.ScheduleLoop:
	default:
		return nil, invalid("%s %q cannot be run now", sc.Kind, sc.Name)
	}
	// Up to three tries: each lost compare-and-set means the schedule moved
	// meanwhile (most likely the clock fired it), and the next try reads
	// what it is now and says so.
	for attempt := 1; ; attempt++ {
		var (
			res *RunNowResult
			err error
		)
		if sc.Kind == store.ScheduleReminder {
			res, err = s.runNowReminder(ctx, sc)
		} else {
			res, err = s.runNowLoop(ctx, sc)
		}
		if !errors.Is(err, errRunNowRaced) {
			if err == nil {
				s.log.InfoContext(ctx, "run now", "schedule_id", sc.ID, "kind", sc.Kind, "name", sc.Name,
					"due", res.Due, "fired", res.Fired, "note", res.Note)
			}
			return res, err
		}
		if attempt == 3 {
			return nil, fmt.Errorf("running %s %q now: %w; try again", sc.Kind, sc.Name, store.ErrConflict)
		}
		if sc, err = s.st.ScheduleGet(ctx, sc.ID); err != nil {
			return nil, fmt.Errorf("running %s now: reading it again: %w", sc.Kind, err)
		}
	}
}

func refuseInactive(sc *store.Schedule) error {
	return invalid("%s %q is %s: resume it before running it now", sc.Kind, sc.Name, sc.State)
}

// runNowExtra fires an extra run of a routine or pulse, keyed by the
// current minute.
func (s *Scheduler) runNowExtra(ctx context.Context, sc *store.Schedule) (*RunNowResult, error) {
	if sc.State != store.ScheduleActive {
		return nil, refuseInactive(sc)
	}
	now := s.now()
	due := now.Truncate(time.Minute)
	key := fireKey(sc.ID, due)
	res, err := core.Enqueue(ctx, s.st, fireArgs{ScheduleID: sc.ID, Due: due}, &core.EnqueueOpts{
		RunAt: now, Priority: 1, UniqueKey: &key, Now: now,
	})
	if err != nil {
		return nil, fmt.Errorf("running %s %q now: %w", sc.Kind, sc.Name, err)
	}
	note := "runs now; its next run stays as scheduled"
	if !res.Inserted {
		note = "already ran this minute; nothing new was queued"
	}
	s.log.InfoContext(ctx, "run now", "schedule_id", sc.ID, "kind", sc.Kind, "name", sc.Name, "due", due, "fired", res.Inserted)
	return &RunNowResult{Due: due, Fired: res.Inserted, Next: sc.NextRunAt, Note: note, Schedule: sc}, nil
}

// runNowReminder fires a reminder's pending occurrence now (see RunNow).
func (s *Scheduler) runNowReminder(ctx context.Context, sc *store.Schedule) (*RunNowResult, error) {
	switch {
	case sc.State == store.ScheduleDone || sc.State == store.ScheduleActive && sc.NextRunAt == nil:
		out := &RunNowResult{Fired: false, Note: "was already delivered; nothing new was sent", Schedule: sc}
		if sc.LastRunAt != nil {
			out.Due = *sc.LastRunAt
		}
		return out, nil
	case sc.State != store.ScheduleActive:
		return nil, refuseInactive(sc)
	}
	spec, err := ParseSpec(sc.Spec, sc.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("%w: reminder %q: %w", ErrInvalid, sc.Name, err)
	}
	spec.SetAnchor(anchorOf(sc))
	now := s.now()
	due := *sc.NextRunAt
	// The occurrence is the one pending, as the clock would fire it: for a
	// reminder not yet due, that one (not a later one); for one overdue,
	// the latest missed, as a dispatch would pick.
	ref := now
	if due.After(now) {
		ref = due
	}
	latest, next := spec.Latest(due, ref)
	adv := &store.ScheduleAdvanceParams{ID: sc.ID, ExpectNextRunAt: due, LastRunAt: latest, Now: now}
	if next.IsZero() {
		adv.Done = true
	} else {
		adv.NextRunAt = &next
	}
	p := fireArgs{ScheduleID: sc.ID, Due: latest, Late: now.Sub(latest) > s.opts.MissedGrace}
	key := fireKey(sc.ID, latest)
	after, fired, err := s.advanceAndFire(ctx, adv, p, key)
	switch {
	case errors.Is(err, store.ErrConflict):
		return nil, errRunNowRaced
	case err != nil:
		return nil, fmt.Errorf("running reminder %q now: %w", sc.Name, err)
	}
	out := &RunNowResult{Due: latest, Fired: fired, Schedule: after}
	if next.IsZero() {
		out.Note = "is sent now and is done: it will not fire at its time"
	} else {
		out.Next = &next
		out.Note = "is sent now; it fires next at its following occurrence"
	}
	return out, nil
}

// runNowLoop starts a loop's next iteration now (see RunNow).
func (s *Scheduler) runNowLoop(ctx context.Context, sc *store.Schedule) (*RunNowResult, error) {
	switch {
	case sc.State == store.ScheduleDone:
		why := sc.StateReason
		if why == "" {
			why = "stopped"
		}
		return nil, invalid("loop %q has ended (%s): a finished or stopped loop does not run again; start a new one", sc.Name, why)
	case sc.State != store.ScheduleActive:
		return nil, refuseInactive(sc)
	case sc.NextRunAt == nil:
		// The iteration the last tick (or run now) started is still under
		// way: starting another would make two back to back.
		out := &RunNowResult{Fired: false, Schedule: sc,
			Note: "an iteration is under way; the server decides on the next one when it ends"}
		if sc.LastRunAt != nil {
			out.Due = *sc.LastRunAt
		}
		return out, nil
	}
	cfg, err := s.loopConfig(sc)
	if err != nil {
		return nil, err
	}
	if int(sc.Runs) >= cfg.MaxIterations {
		// decideLoop never schedules past the limit; a loop resumed after
		// one would be here. It is the server's guardrail, not the caller's.
		return nil, invalid("loop %q already ran its %d iterations, the most it may", sc.Name, cfg.MaxIterations)
	}
	now := s.now().Truncate(time.Microsecond)
	iteration := sc.Runs + 1
	key := loopFireKey(sc.ID, iteration)
	// The tick is consumed: next_run_at none, as when the clock fires it,
	// until the iteration's decision sets it again.
	after, fired, err := s.advanceAndFire(ctx, &store.ScheduleAdvanceParams{
		ID: sc.ID, ExpectNextRunAt: *sc.NextRunAt, LastRunAt: now, Now: now,
	}, fireArgs{ScheduleID: sc.ID, Due: now, Iteration: iteration}, key)
	switch {
	case errors.Is(err, store.ErrConflict):
		return nil, errRunNowRaced
	case err != nil:
		return nil, fmt.Errorf("running loop %q now: %w", sc.Name, err)
	}
	return &RunNowResult{Due: now, Fired: fired, Schedule: after,
		Note: fmt.Sprintf("runs iteration %d now; the next comes one interval after it ends, if the server goes on", iteration)}, nil
}

// advanceAndFire moves a schedule past the occurrence run now consumes
// (compare-and-set on its next_run_at: store.ErrConflict when it moved
// meanwhile) and queues that occurrence's fire under the clock's key, in one
// transaction. fired is false when the clock's fire was queued already.
func (s *Scheduler) advanceAndFire(ctx context.Context, adv *store.ScheduleAdvanceParams, args fireArgs, key string) (after *store.Schedule, fired bool, err error) {
	err = s.st.InTx(ctx, func(q store.Queries) error {
		var err error
		if after, err = q.ScheduleAdvance(ctx, adv); err != nil {
			return err
		}
		now := adv.Now
		res, err := core.Enqueue(ctx, q, args, &core.EnqueueOpts{RunAt: now, Priority: 1, UniqueKey: &key, Now: now})
		if err != nil {
			return fmt.Errorf("enqueueing fire %s: %w", key, err)
		}
		fired = res.Inserted
		return nil
	})
	return after, fired, err
}
