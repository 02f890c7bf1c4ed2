package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// The scheduler's part of the store: schedules (routines, reminders, pulses,
// goal loops), the record of each run, and the sweeps of ephemeral rows. It is
// a separate interface from Queries so that the scheduler can grow without
// touching the spine; both drivers implement it on the same values that
// implement Queries, so inside InTx a caller reaches it with
//
//	sq, ok := q.(store.ScheduleStore)
//
// and a fire (advance the schedule, enqueue its work) commits as one.

// ErrLimit is returned (wrapped) when a create would exceed a per-agent limit,
// such as ten routines per agent. It matches ErrConflict too.
var ErrLimit = fmt.Errorf("%w: limit reached", ErrConflict)

// ScheduleKind says what a schedule does when it fires.
type ScheduleKind string

const (
	ScheduleRoutine  ScheduleKind = "routine"  // a turn of the agent, delivered to a target
	ScheduleReminder ScheduleKind = "reminder" // a text DM to the owner, no model call
	SchedulePulse    ScheduleKind = "pulse"    // a check-in that reports, and speaks only when it matters
	ScheduleLoop     ScheduleKind = "loop"     // a goal worked on in iterations the server decides on
)

// Valid reports whether k is a known kind.
func (k ScheduleKind) Valid() bool {
	switch k {
	case ScheduleRoutine, ScheduleReminder, SchedulePulse, ScheduleLoop:
		return true
	}
	return false
}

// ScheduleState is the lifecycle of a schedule. Only active schedules fire.
type ScheduleState string

const (
	ScheduleActive  ScheduleState = "active"
	SchedulePaused  ScheduleState = "paused"  // by its owner or an agent; resumable
	ScheduleBlocked ScheduleState = "blocked" // a loop waiting for its owner; resumable
	ScheduleDone    ScheduleState = "done"    // a fired reminder, a finished loop
)

// Valid reports whether s is a known state.
func (s ScheduleState) Valid() bool {
	switch s {
	case ScheduleActive, SchedulePaused, ScheduleBlocked, ScheduleDone:
		return true
	}
	return false
}

// MissedPolicy says what happens to a fire that fell due while no instance
// was running.
type MissedPolicy string

const (
	MissedRunOnce MissedPolicy = "run_once" // fire once at start, however many were missed
	MissedSkip    MissedPolicy = "skip"     // move on to the next occurrence
)

// Valid reports whether m is a known policy.
func (m MissedPolicy) Valid() bool { return m == MissedRunOnce || m == MissedSkip }

// Schedule is one routine, reminder, pulse or goal loop.
type Schedule struct {
	ID    uuid.UUID
	Kind  ScheduleKind
	Agent string // the owning agent's name
	// Name is unique per (agent, kind); commands and config refer to it.
	Name string
	// Owner is the person the schedule works for (a platform user id); a
	// reminder or a pulse's message goes to their DM.
	Owner string
	// Platform, Workspace and Channel are where runs are delivered: the
	// workspace the schedule was created in, never wherever the agent is
	// now. Channel "user:<id>" is a DM.
	Platform  string
	Workspace string
	Channel   string
	// Spec is when it fires: "every 4h", "cron 0 8 * * 1-5", "at <RFC 3339>".
	Spec     string
	TimeZone string // IANA name for cron specs and active hours; "" is UTC
	// Instruction is what the agent is asked to do (a reminder's text).
	Instruction string
	// Config is the kind's settings (a pulse's checklist, a loop's
	// guardrails). Never nil when read back: at least "{}".
	Config json.RawMessage
	// Data is the kind's mutable state (a pulse's last input hash). Never nil
	// when read back: at least "{}".
	Data        json.RawMessage
	Missed      MissedPolicy
	Source      string // config, tool, command
	State       ScheduleState
	StateReason string // why it is paused, blocked or done
	// NextRunAt is the next scheduled fire; nil when none is due (a loop
	// whose iteration is under way, a finished schedule).
	NextRunAt *time.Time
	// LastRunAt is the scheduled time of the last fire.
	LastRunAt *time.Time
	// Runs counts the runs recorded; the next run's Seq is Runs+1.
	Runs      int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ScheduleRunStatus is the state of one run.
type ScheduleRunStatus string

const (
	RunStarted  ScheduleRunStatus = "started"  // its conversation's turn is queued or running
	RunReported ScheduleRunStatus = "reported" // the agent's typed report is in
	RunSkipped  ScheduleRunStatus = "skipped"  // nothing to do (unchanged inputs, outside active hours)
	RunFinished ScheduleRunStatus = "finished" // done without a report (a reminder delivered)
	RunFailed   ScheduleRunStatus = "failed"
)

// Valid reports whether s is a known run status.
func (s ScheduleRunStatus) Valid() bool {
	switch s {
	case RunStarted, RunReported, RunSkipped, RunFinished, RunFailed:
		return true
	}
	return false
}

// ScheduleRun is one fire of a schedule: a routine's run, a pulse, a loop's
// iteration.
type ScheduleRun struct {
	ID         uuid.UUID
	ScheduleID uuid.UUID
	Seq        int64 // 1, 2, ... per schedule: a loop's iteration number
	DueAt      time.Time
	// ConversationID is the conversation the run's turn happens in.
	ConversationID *uuid.UUID
	Status         ScheduleRunStatus
	// InputHash is a pulse's combined checklist input hash.
	InputHash string
	// Report is the agent's typed report; nil until it reports.
	Report    json.RawMessage
	Note      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ScheduleUsage sums the model usage of a schedule's run conversations.
type ScheduleUsage struct {
	Calls           int64
	InputTokens     int64
	OutputTokens    int64
	CachedTokens    int64
	ReasoningTokens int64
	CostMicroUSD    int64
}

// Tokens is input (cached included) plus output tokens.
func (u ScheduleUsage) Tokens() int64 { return u.InputTokens + u.CachedTokens + u.OutputTokens }

// ---- parameters ----

// ScheduleCreateParams creates a schedule.
type ScheduleCreateParams struct {
	ID          uuid.UUID // optional; a new UUID when zero
	Kind        ScheduleKind
	Agent       string
	Name        string
	Owner       string
	Platform    string
	Workspace   string
	Channel     string
	Spec        string
	TimeZone    string
	Instruction string
	Config      json.RawMessage // optional; "{}" when nil
	Data        json.RawMessage // optional; "{}" when nil
	Missed      MissedPolicy    // "" means run_once
	Source      string
	State       ScheduleState // "" means active
	NextRunAt   *time.Time
	// MaxPerAgent, when positive, refuses (ErrLimit) a new schedule when the
	// agent already has that many of this kind that are not done. Checked
	// under a lock, so two concurrent creates cannot both pass.
	MaxPerAgent int
	// Upsert replaces the definition of an existing (agent, kind, name)
	// instead of failing with ErrConflict: spec, target, instruction,
	// config. Its state and data are kept, and its next run too unless the
	// spec or time zone changed. For schedules declared in the config file.
	Upsert bool
	Now    time.Time
}

// ScheduleUpdateParams changes a schedule; nil fields are left as they are.
type ScheduleUpdateParams struct {
	ID          uuid.UUID
	Spec        *string
	TimeZone    *string
	Instruction *string
	Platform    *string
	Workspace   *string
	Channel     *string
	Config      json.RawMessage
	Data        json.RawMessage
	Missed      *MissedPolicy
	State       *ScheduleState
	StateReason *string
	NextRunAt   *time.Time
	// ClearNextRun sets NextRunAt to none (it wins over NextRunAt).
	ClearNextRun bool
	// ExpectState, when set, makes the update conditional: ErrConflict when
	// the schedule is in another state.
	ExpectState *ScheduleState
	Now         time.Time
}

// ScheduleAdvanceParams moves an active schedule past a fire. It is a
// compare-and-set on NextRunAt: it succeeds only for the caller that saw the
// schedule due at ExpectNextRunAt, so two instances that both think they
// lead cannot both fire it (the loser gets ErrConflict).
type ScheduleAdvanceParams struct {
	ID              uuid.UUID
	ExpectNextRunAt time.Time
	// LastRunAt is the scheduled time of the fire being made (zero when the
	// occurrence is skipped: LastRunAt is then left as it was).
	LastRunAt time.Time
	// NextRunAt is the following occurrence; nil leaves none scheduled.
	NextRunAt *time.Time
	// Done marks the schedule done (a one-shot reminder).
	Done bool
	Now  time.Time
}

// ScheduleListParams lists schedules, oldest first.
type ScheduleListParams struct {
	Agent  string          // "" for all
	Kind   ScheduleKind    // "" for all
	Owner  string          // "" for all
	States []ScheduleState // empty for all
	Limit  int             // 0 means no limit
}

// ScheduleRunCreateParams records a run. Its Seq is the schedule's next.
type ScheduleRunCreateParams struct {
	ScheduleID     uuid.UUID
	DueAt          time.Time
	ConversationID *uuid.UUID
	Status         ScheduleRunStatus
	InputHash      string
	Note           string
	Now            time.Time
}

// ScheduleRunUpdateParams changes a run; nil fields are left as they are.
type ScheduleRunUpdateParams struct {
	ID             uuid.UUID
	Status         *ScheduleRunStatus
	ConversationID *uuid.UUID
	Report         json.RawMessage
	Note           *string
	Now            time.Time
}

// ScheduleSweepParams deletes ephemeral rows older than the given instants.
// A zero instant skips that kind of row.
type ScheduleSweepParams struct {
	// InboundBefore: platform event ids seen before it (platforms redeliver
	// within minutes, so dedupe rows need not live for ever).
	InboundBefore time.Time
	// WorkBefore: done and cancelled work items without a unique key that
	// finished before it. Items with a unique key are kept: enqueue is
	// idempotent on the key for ever. Failed items are kept for inspection.
	WorkBefore time.Time
	// LeasesBefore: named leases that expired before it.
	LeasesBefore time.Time
	// RemindersBefore: done reminders (and their runs) last updated before it.
	RemindersBefore time.Time
	// Limit bounds the rows deleted per kind; 0 means 1000.
	Limit int
}

// ScheduleSweepResult counts what a sweep deleted.
type ScheduleSweepResult struct {
	Inbound   int
	Work      int
	Leases    int
	Reminders int
}

// ScheduleStore is the scheduler's part of the store.
type ScheduleStore interface {
	// ScheduleCreate creates a schedule; ErrConflict when (agent, kind, name)
	// exists (unless Upsert), ErrLimit past MaxPerAgent.
	ScheduleCreate(ctx context.Context, p *ScheduleCreateParams) (*Schedule, error)
	ScheduleGet(ctx context.Context, id uuid.UUID) (*Schedule, error)
	// ScheduleFind looks a schedule up by its name; ErrNotFound when absent.
	ScheduleFind(ctx context.Context, agent string, kind ScheduleKind, name string) (*Schedule, error)
	ScheduleList(ctx context.Context, p *ScheduleListParams) ([]*Schedule, error)
	// ScheduleUpdate changes a schedule; ErrNotFound when absent, ErrConflict
	// when ExpectState does not match.
	ScheduleUpdate(ctx context.Context, p *ScheduleUpdateParams) (*Schedule, error)
	// ScheduleAdvance moves an active schedule past a fire (see the params);
	// ErrConflict when it is no longer due at ExpectNextRunAt or not active.
	ScheduleAdvance(ctx context.Context, p *ScheduleAdvanceParams) (*Schedule, error)
	// ScheduleDelete deletes a schedule and its runs; ErrNotFound when absent.
	ScheduleDelete(ctx context.Context, id uuid.UUID) error
	// ScheduleDue lists active schedules whose next run is at or before now,
	// earliest first.
	ScheduleDue(ctx context.Context, now time.Time, limit int) ([]*Schedule, error)

	ScheduleRunCreate(ctx context.Context, p *ScheduleRunCreateParams) (*ScheduleRun, error)
	ScheduleRunUpdate(ctx context.Context, p *ScheduleRunUpdateParams) (*ScheduleRun, error)
	ScheduleRunGet(ctx context.Context, id uuid.UUID) (*ScheduleRun, error)
	// ScheduleRunByConversation finds the run a conversation belongs to;
	// ErrNotFound when it belongs to none.
	ScheduleRunByConversation(ctx context.Context, conversationID uuid.UUID) (*ScheduleRun, error)
	// ScheduleRunList lists a schedule's runs, newest first.
	ScheduleRunList(ctx context.Context, scheduleID uuid.UUID, limit int) ([]*ScheduleRun, error)
	// ScheduleUsageTotal sums the usage recorded in the conversations of a
	// schedule's runs.
	ScheduleUsageTotal(ctx context.Context, scheduleID uuid.UUID) (*ScheduleUsage, error)

	// ScheduleSweep deletes old ephemeral rows (see the params).
	ScheduleSweep(ctx context.Context, p *ScheduleSweepParams) (*ScheduleSweepResult, error)
}

// SchedulesOf returns the ScheduleStore side of q (a Store, or the Queries
// of a transaction), or false when its driver does not implement it.
func SchedulesOf(q Queries) (ScheduleStore, bool) {
	s, ok := q.(ScheduleStore)
	return s, ok
}

// Validate checks the parameters both drivers need before writing; the
// error wraps ErrInvalid and names the field.
// Defaults returns what a driver stores for the unset Missed and State:
// run_once and active.
func (p *ScheduleCreateParams) Defaults() (MissedPolicy, ScheduleState) {
	missed, state := p.Missed, p.State
	if missed == "" {
		missed = MissedRunOnce
	}
	if state == "" {
		state = ScheduleActive
	}
	return missed, state
}

func (p *ScheduleCreateParams) Validate() error {
	switch {
	case p == nil:
		return fmt.Errorf("%w: params are nil", ErrInvalid)
	case !p.Kind.Valid():
		return fmt.Errorf("%w: Kind %q is not a schedule kind", ErrInvalid, p.Kind)
	case p.Agent == "":
		return fmt.Errorf("%w: Agent is empty", ErrInvalid)
	case p.Name == "":
		return fmt.Errorf("%w: Name is empty", ErrInvalid)
	case p.Spec == "":
		return fmt.Errorf("%w: Spec is empty", ErrInvalid)
	case p.Missed != "" && !p.Missed.Valid():
		return fmt.Errorf("%w: Missed %q must be run_once or skip", ErrInvalid, p.Missed)
	case p.State != "" && !p.State.Valid():
		return fmt.Errorf("%w: State %q is not a schedule state", ErrInvalid, p.State)
	case p.MaxPerAgent < 0:
		return fmt.Errorf("%w: MaxPerAgent %d is negative", ErrInvalid, p.MaxPerAgent)
	}
	return nil
}

// Validate checks the parameters; the error wraps ErrInvalid.
func (p *ScheduleUpdateParams) Validate() error {
	switch {
	case p == nil:
		return fmt.Errorf("%w: params are nil", ErrInvalid)
	case p.Spec != nil && *p.Spec == "":
		return fmt.Errorf("%w: Spec is empty", ErrInvalid)
	case p.Missed != nil && !p.Missed.Valid():
		return fmt.Errorf("%w: Missed %q must be run_once or skip", ErrInvalid, *p.Missed)
	case p.State != nil && !p.State.Valid():
		return fmt.Errorf("%w: State %q is not a schedule state", ErrInvalid, *p.State)
	case p.ExpectState != nil && !p.ExpectState.Valid():
		return fmt.Errorf("%w: ExpectState %q is not a schedule state", ErrInvalid, *p.ExpectState)
	}
	return nil
}

// Validate checks the parameters; the error wraps ErrInvalid.
func (p *ScheduleRunCreateParams) Validate() error {
	switch {
	case p == nil:
		return fmt.Errorf("%w: params are nil", ErrInvalid)
	case !p.Status.Valid():
		return fmt.Errorf("%w: Status %q is not a run status", ErrInvalid, p.Status)
	case p.DueAt.IsZero():
		return fmt.Errorf("%w: DueAt is zero", ErrInvalid)
	}
	return nil
}

// Validate checks the parameters; the error wraps ErrInvalid.
func (p *ScheduleRunUpdateParams) Validate() error {
	switch {
	case p == nil:
		return fmt.Errorf("%w: params are nil", ErrInvalid)
	case p.Status != nil && !p.Status.Valid():
		return fmt.Errorf("%w: Status %q is not a run status", ErrInvalid, *p.Status)
	}
	return nil
}
