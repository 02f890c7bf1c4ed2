package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// ErrInvalid marks a request the scheduler refuses as malformed; the
// message says what is wrong, in words fit for the person or agent who
// asked.
var ErrInvalid = errors.New("invalid schedule")

// ErrTooMany is returned when an agent already has the most routines it may.
var ErrTooMany = errors.New("too many routines")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// Target is where a schedule belongs and delivers: a platform workspace and
// a channel in it (or the owner's DM).
type Target struct {
	Platform  string
	Workspace string
	// Channel is a channel id; empty means the owner's DM.
	Channel string
}

// ScheduleParams declares a routine, pulse or goal loop.
type ScheduleParams struct {
	Kind  store.ScheduleKind
	Agent string
	Name  string // lowercase letters, digits, - and _
	Owner string
	Target
	// Spec is "every 4h", "cron 0 8 * * 1-5" or, for loops, "continuous".
	Spec     string
	TimeZone string
	// Instruction is the routine's task, the pulse's extra guidance or the
	// loop's goal.
	Instruction string
	// Template makes a routine post its output as a card ("briefing").
	Template string
	Pulse    *PulseConfig
	Loop     *LoopConfig
	Missed   store.MissedPolicy
	Source   string // config, tool, command
	// Upsert updates a schedule of the same name instead of failing.
	Upsert bool
}

func (s *Scheduler) check(p *ScheduleParams) (*Spec, json.RawMessage, error) {
	if !nameRE.MatchString(p.Name) {
		return nil, nil, invalid("name %q must be 1-64 lowercase letters, digits, - or _", p.Name)
	}
	if _, ok := s.svc.Agents().Find(p.Agent); !ok {
		return nil, nil, invalid("there is no agent named %q", p.Agent)
	}
	if p.Platform == "" {
		return nil, nil, invalid("%s %q needs a platform and workspace to deliver to", p.Kind, p.Name)
	}
	if p.Channel == "" && p.Owner == "" {
		return nil, nil, invalid("%s %q needs a channel or an owner to DM", p.Kind, p.Name)
	}
	if strings.TrimSpace(p.Instruction) == "" && p.Kind != store.SchedulePulse {
		return nil, nil, invalid("%s %q needs an instruction", p.Kind, p.Name)
	}
	if p.Missed != "" && !p.Missed.Valid() {
		return nil, nil, invalid("missed %q must be run_once or skip", p.Missed)
	}
	spec, err := ParseSpec(p.Spec, p.TimeZone)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	var cfg any
	switch p.Kind {
	case store.ScheduleRoutine:
		if spec.Once() || spec.Continuous() {
			return nil, nil, invalid("a routine repeats: use every or cron, not %q", p.Spec)
		}
		if spec.Interval() > 0 && spec.Interval() < MinInterval {
			return nil, nil, invalid("a routine runs at most every %s", MinInterval)
		}
		cfg = routineConfig{Template: p.Template}
	case store.SchedulePulse:
		if spec.Once() || spec.Continuous() || (spec.Interval() > 0 && spec.Interval() < MinInterval) {
			return nil, nil, invalid("a pulse repeats at most every %s: use every or cron", MinInterval)
		}
		if p.Pulse == nil {
			return nil, nil, invalid("pulse %q needs a checklist", p.Name)
		}
		if err := p.Pulse.validate(s.inputs); err != nil {
			return nil, nil, fmt.Errorf("%w: pulse %q: %w", ErrInvalid, p.Name, err)
		}
		if p.Pulse.RunAs != "" {
			if _, ok := s.svc.Agents().Find(p.Pulse.RunAs); !ok {
				return nil, nil, invalid("pulse %q: run_as names no agent %q", p.Name, p.Pulse.RunAs)
			}
		}
		cfg = p.Pulse
	case store.ScheduleLoop:
		lc := LoopConfig{}
		if p.Loop != nil {
			lc = *p.Loop
		}
		if spec.Once() || spec.Interval() > 0 && spec.Interval() < MinInterval {
			return nil, nil, invalid("a loop is continuous or runs at most every %s", MinInterval)
		}
		lc.Interval = Duration(spec.Interval())
		lc.defaults()
		if err := lc.validate(); err != nil {
			return nil, nil, fmt.Errorf("%w: loop %q: %w", ErrInvalid, p.Name, err)
		}
		cfg = lc
	default:
		return nil, nil, invalid("kind %q cannot be declared this way", p.Kind)
	}
	return spec, mustJSON(cfg), nil
}

// CreateSchedule creates (or, with Upsert, updates) a routine, pulse or
// goal loop. The eleventh routine of an agent fails with ErrTooMany.
func (s *Scheduler) CreateSchedule(ctx context.Context, p ScheduleParams) (*store.Schedule, error) {
	spec, cfg, err := s.check(&p)
	if err != nil {
		return nil, err
	}
	place := store.Place{Platform: p.Platform, Workspace: p.Workspace, Channel: p.Channel}
	if p.Channel == "" {
		place = store.DM(p.Platform, p.Workspace, p.Owner)
	}
	now := s.now()
	first := spec.First(now)
	if p.Kind == store.ScheduleLoop {
		first = now // the first iteration starts at once; the server times the rest
	}
	max := 0
	if p.Kind == store.ScheduleRoutine {
		max = s.opts.MaxRoutinesPerAgent
	}
	sc, err := s.st.ScheduleCreate(ctx, &store.ScheduleCreateParams{
		Kind: p.Kind, Agent: p.Agent, Name: p.Name, Owner: p.Owner,
		Place: place, Spec: spec.String(), TimeZone: p.TimeZone, Instruction: p.Instruction, Config: cfg,
		Missed: p.Missed, Source: p.Source, NextRunAt: &first, MaxPerAgent: max, Upsert: p.Upsert, Now: now,
	})
	switch {
	case errors.Is(err, store.ErrLimit):
		return nil, fmt.Errorf("%w: agent %s already has %d routines, the most it may have; delete one first",
			ErrTooMany, p.Agent, s.opts.MaxRoutinesPerAgent)
	case errors.Is(err, store.ErrConflict):
		return nil, invalid("agent %s already has a %s named %q", p.Agent, p.Kind, p.Name)
	case err != nil:
		return nil, fmt.Errorf("creating %s %q: %w", p.Kind, p.Name, err)
	}
	return sc, nil
}

// RemindParams sets a reminder.
type RemindParams struct {
	Agent string
	Owner string // who is reminded, by DM
	// Platform and Workspace are where the reminder was set: it is
	// delivered there.
	Platform, Workspace string
	At                  time.Time
	Text                string
	TimeZone            string // for how the time is shown
	Source              string
}

// Remind sets a reminder: at At, Text is sent as a DM to Owner in the
// workspace it was set in. No model call is made.
func (s *Scheduler) Remind(ctx context.Context, p RemindParams) (*store.Schedule, error) {
	now := s.now()
	switch {
	case strings.TrimSpace(p.Text) == "":
		return nil, invalid("a reminder needs text")
	case p.Owner == "" || p.Platform == "":
		return nil, invalid("a reminder needs a person to remind and a platform to reach them on")
	case p.At.IsZero():
		return nil, invalid("a reminder needs a time")
	case p.At.Before(now.Add(-time.Minute)):
		return nil, invalid("%s is in the past", p.At.UTC().Format(time.RFC3339))
	case p.At.After(now.AddDate(1, 0, 0)):
		return nil, invalid("a reminder can be at most a year ahead")
	}
	if _, ok := s.svc.Agents().Find(p.Agent); !ok {
		return nil, invalid("there is no agent named %q", p.Agent)
	}
	if p.TimeZone != "" {
		if _, err := loadLocation(p.TimeZone); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	at := p.At.UTC().Truncate(time.Microsecond)
	id := uuid.New()
	sc, err := s.st.ScheduleCreate(ctx, &store.ScheduleCreateParams{
		ID: id, Kind: store.ScheduleReminder, Agent: p.Agent, Name: "reminder-" + id.String()[:8], Owner: p.Owner,
		Place: store.DM(p.Platform, p.Workspace, p.Owner),
		Spec:  "at " + at.Format(time.RFC3339Nano), TimeZone: p.TimeZone, Instruction: strings.TrimSpace(p.Text),
		Missed: store.MissedRunOnce, Source: p.Source, NextRunAt: &at, Now: now,
	})
	if err != nil {
		return nil, fmt.Errorf("setting reminder: %w", err)
	}
	return sc, nil
}

// Find returns an agent's schedule by kind and name.
func (s *Scheduler) Find(ctx context.Context, agent string, kind store.ScheduleKind, name string) (*store.Schedule, error) {
	sc, err := s.st.ScheduleFind(ctx, &store.ScheduleFindParams{Agent: agent, Kind: kind, Name: name})
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: agent %s has no %s named %q", store.ErrNotFound, agent, kind, name)
	}
	return sc, err
}

// List lists an agent's schedules of a kind ("" for all), done ones left out.
func (s *Scheduler) List(ctx context.Context, agent string, kind store.ScheduleKind) ([]*store.Schedule, error) {
	return s.st.ScheduleList(ctx, &store.ScheduleListParams{
		Agent: agent, Kind: kind,
		States: []store.ScheduleState{store.ScheduleActive, store.SchedulePaused, store.ScheduleBlocked},
	})
}

// Change is an edit of a schedule; nil fields stay as they are.
type Change struct {
	Spec        *string
	TimeZone    *string
	Instruction *string
	// Channel moves delivery within the schedule's workspace; "" is the
	// owner's DM.
	Channel *string
}

// Update edits a schedule. A new spec or time zone reschedules it from now.
func (s *Scheduler) Update(ctx context.Context, sc *store.Schedule, c Change) (*store.Schedule, error) {
	up := &store.ScheduleUpdateParams{ID: sc.ID, Instruction: c.Instruction, Now: s.now()}
	if c.Instruction != nil && strings.TrimSpace(*c.Instruction) == "" {
		return nil, invalid("the instruction cannot be empty")
	}
	if c.Channel != nil {
		place := store.Place{Platform: sc.Place.Platform, Workspace: sc.Place.Workspace, Channel: *c.Channel}
		if *c.Channel == "" {
			if sc.Owner == "" {
				return nil, invalid("%s %q has no owner to DM", sc.Kind, sc.Name)
			}
			place = store.DM(sc.Place.Platform, sc.Place.Workspace, sc.Owner)
		}
		up.Place = &place
	}
	if c.Spec != nil || c.TimeZone != nil {
		text, tz := sc.Spec, sc.TimeZone
		if c.Spec != nil {
			text = *c.Spec
		}
		if c.TimeZone != nil {
			tz = *c.TimeZone
		}
		spec, err := ParseSpec(text, tz)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		if sc.Kind == store.ScheduleRoutine && (spec.Once() || spec.Continuous() || spec.Interval() > 0 && spec.Interval() < MinInterval) {
			return nil, invalid("a routine repeats at most every %s: use every or cron", MinInterval)
		}
		st := spec.String()
		up.Spec, up.TimeZone = &st, &tz
		if sc.Kind != store.ScheduleLoop {
			next := spec.First(s.now())
			up.NextRunAt = &next
		}
	}
	out, err := s.st.ScheduleUpdate(ctx, up)
	if err != nil {
		return nil, fmt.Errorf("updating %s %q: %w", sc.Kind, sc.Name, err)
	}
	return out, nil
}

// Pause stops a schedule from firing until Resume.
func (s *Scheduler) Pause(ctx context.Context, sc *store.Schedule, reason string) (*store.Schedule, error) {
	if sc.State != store.ScheduleActive {
		return nil, invalid("%s %q is %s, not active", sc.Kind, sc.Name, sc.State)
	}
	paused, active := store.SchedulePaused, store.ScheduleActive
	out, err := s.st.ScheduleUpdate(ctx, &store.ScheduleUpdateParams{ID: sc.ID, State: &paused, StateReason: &reason, ExpectState: &active, Now: s.now()})
	if err != nil {
		return nil, fmt.Errorf("pausing %s %q: %w", sc.Kind, sc.Name, err)
	}
	return out, nil
}

// Resume makes a paused (or blocked) schedule fire again: a routine or
// pulse at its next occurrence from now, a loop at once.
func (s *Scheduler) Resume(ctx context.Context, sc *store.Schedule) (*store.Schedule, error) {
	if sc.State != store.SchedulePaused && sc.State != store.ScheduleBlocked {
		return nil, invalid("%s %q is %s, not paused", sc.Kind, sc.Name, sc.State)
	}
	spec, err := ParseSpec(sc.Spec, sc.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	now := s.now()
	next := spec.First(now)
	if sc.Kind == store.ScheduleLoop || sc.Kind == store.ScheduleReminder && next.Before(now) {
		next = now
	}
	active, empty, from := store.ScheduleActive, "", sc.State
	out, err := s.st.ScheduleUpdate(ctx, &store.ScheduleUpdateParams{
		ID: sc.ID, State: &active, StateReason: &empty, NextRunAt: &next, ExpectState: &from, Now: now,
	})
	if err != nil {
		return nil, fmt.Errorf("resuming %s %q: %w", sc.Kind, sc.Name, err)
	}
	return out, nil
}

// StopLoop ends a goal loop for good; reason is shown with it in lists.
func (s *Scheduler) StopLoop(ctx context.Context, sc *store.Schedule, reason string) (*store.Schedule, error) {
	if sc.Kind != store.ScheduleLoop {
		return nil, invalid("%s %q is not a goal loop", sc.Kind, sc.Name)
	}
	done, from := store.ScheduleDone, sc.State
	out, err := s.st.ScheduleUpdate(ctx, &store.ScheduleUpdateParams{
		ID: sc.ID, State: &done, StateReason: &reason, ClearNextRun: true, ExpectState: &from, Now: s.now(),
	})
	if err != nil {
		return nil, fmt.Errorf("stopping loop %q: %w", sc.Name, err)
	}
	return out, nil
}

// Delete deletes a schedule and its run history. Conversations of past
// runs stay.
func (s *Scheduler) Delete(ctx context.Context, sc *store.Schedule) error {
	if err := s.st.ScheduleDelete(ctx, sc.ID); err != nil {
		return fmt.Errorf("deleting %s %q: %w", sc.Kind, sc.Name, err)
	}
	return nil
}

// Describe is a one-line summary of a schedule for lists.
func Describe(sc *store.Schedule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s — %s", sc.Name, sc.Spec)
	if sc.TimeZone != "" {
		fmt.Fprintf(&b, " (%s)", sc.TimeZone)
	}
	if sc.Place.IsDM() {
		fmt.Fprintf(&b, " → DM")
	} else if sc.Place.Channel != "" && sc.Kind == store.ScheduleRoutine {
		fmt.Fprintf(&b, " → %s", sc.Place.Channel)
	}
	if sc.State != store.ScheduleActive {
		fmt.Fprintf(&b, " [%s", sc.State)
		if sc.StateReason != "" {
			fmt.Fprintf(&b, ": %s", sc.StateReason)
		}
		b.WriteString("]")
	} else if sc.NextRunAt != nil {
		fmt.Fprintf(&b, ", next %s", localTime(*sc.NextRunAt, sc.TimeZone))
	}
	if sc.Kind == store.ScheduleReminder || sc.Kind == store.ScheduleLoop {
		fmt.Fprintf(&b, ": %s", title(sc.Instruction))
	}
	return b.String()
}
