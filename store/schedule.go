package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// The scheduler's part of the store: schedules (routines, reminders, pulses,
// goal loops) and the record of each run. ScheduleQueries is part of
// Queries, so a fire (advance the schedule, enqueue its work) commits as one
// inside InTx.

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
	// Place is where runs are delivered: the workspace the schedule was
	// created in, never wherever the agent is now. It has no Thread; a DM
	// is Place.User. Zero when runs are not delivered anywhere.
	Place Place
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
	// CacheWriteTokens were written to the prompt cache.
	CacheWriteTokens int64
}

// Tokens is the whole prompt (input, cache reads and cache writes) plus
// output tokens.
func (u ScheduleUsage) Tokens() int64 {
	return u.InputTokens + u.CachedTokens + u.CacheWriteTokens + u.OutputTokens
}

// ---- parameters ----

// ScheduleCreateParams creates a schedule.
type ScheduleCreateParams struct {
	ID          uuid.UUID // optional; a new UUID when zero
	Kind        ScheduleKind
	Agent       string
	Name        string
	Owner       string
	Place       Place
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
	// under a lock, so two concurrent creates cannot both pass. An Upsert
	// of an existing schedule is never refused.
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
	Place       *Place
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
	// ExpectNote, when set, makes the update conditional: ErrConflict when
	// the run's note is another (a reminder's Snooze or Done settles its
	// firing once, whoever clicks first).
	ExpectNote *string
	Now        time.Time
}

// ScheduleFindParams looks a schedule up by its name.
type ScheduleFindParams struct {
	Agent string
	Kind  ScheduleKind
	Name  string
}

// ScheduleCountParams counts an agent's schedules of a kind that are not done.
type ScheduleCountParams struct {
	Agent string
	Kind  ScheduleKind
}

// ScheduleDueParams lists active schedules due at Now.
type ScheduleDueParams struct {
	Now   time.Time
	Limit int // 0 means 100
}

// ScheduleRunListParams lists a schedule's runs.
type ScheduleRunListParams struct {
	ScheduleID uuid.UUID
	Limit      int // 0 means no limit
}

// SchedulePruneParams deletes done reminders (and their runs) last updated
// before Before, at most Limit of them (0 means 1000).
type SchedulePruneParams = PruneParams

// ScheduleQueries is the scheduler's part of Queries.
type ScheduleQueries interface {
	// ScheduleCreate creates a schedule; ErrConflict when (agent, kind, name)
	// exists (unless Upsert), ErrLimit past MaxPerAgent.
	ScheduleCreate(ctx context.Context, p *ScheduleCreateParams) (*Schedule, error)
	ScheduleGet(ctx context.Context, id uuid.UUID) (*Schedule, error)
	// ScheduleFind looks a schedule up by its name; ErrNotFound when absent.
	ScheduleFind(ctx context.Context, p *ScheduleFindParams) (*Schedule, error)
	// ScheduleCount counts the agent's schedules of the kind that are not
	// done. Inside a transaction it also holds a lock on that (agent, kind)
	// until the transaction ends, so a count-then-create cannot race another.
	ScheduleCount(ctx context.Context, p *ScheduleCountParams) (int, error)
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
	ScheduleDue(ctx context.Context, p *ScheduleDueParams) ([]*Schedule, error)

	ScheduleRunCreate(ctx context.Context, p *ScheduleRunCreateParams) (*ScheduleRun, error)
	// ScheduleRunUpdate changes a run; ErrNotFound when absent, ErrConflict
	// when ExpectNote does not match.
	ScheduleRunUpdate(ctx context.Context, p *ScheduleRunUpdateParams) (*ScheduleRun, error)
	ScheduleRunGet(ctx context.Context, id uuid.UUID) (*ScheduleRun, error)
	// ScheduleRunByConversation finds the run a conversation belongs to;
	// ErrNotFound when it belongs to none.
	ScheduleRunByConversation(ctx context.Context, conversationID uuid.UUID) (*ScheduleRun, error)
	// ScheduleRunList lists a schedule's runs, newest first.
	ScheduleRunList(ctx context.Context, p *ScheduleRunListParams) ([]*ScheduleRun, error)
	// ScheduleUsageTotal sums the usage recorded in the conversations of a
	// schedule's runs.
	ScheduleUsageTotal(ctx context.Context, scheduleID uuid.UUID) (*ScheduleUsage, error)

	// SchedulePrune deletes done reminders, and their runs, last updated
	// before p.Before; it returns how many reminders it deleted.
	SchedulePrune(ctx context.Context, p *SchedulePruneParams) (int, error)
}
