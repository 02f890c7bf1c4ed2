package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Runs: a plan or a delegated goal as a durable record of steps, each
// handed to an agent in a conversation of its own, with an append-only
// event log of every transition.
//
//	run:   running ──► done | failed | cancelled      (retry: failed|cancelled → running)
//	step:  pending ──start──► working ──► done | failed
//	          │                  │
//	          └──────cancel──────┴──► cancelled        (retry: failed|cancelled → pending)
//
// A step starts only while fewer steps of its slot class are working than
// the limit the caller passes (RunStepStart), counted across every run.

// RunStatus is where a run stands.
type RunStatus string

const (
	RunStatusRunning   RunStatus = "running"
	RunStatusDone      RunStatus = "done"
	RunStatusFailed    RunStatus = "failed"
	RunStatusCancelled RunStatus = "cancelled"
)

// Valid reports whether s is a known status.
func (s RunStatus) Valid() bool {
	switch s {
	case RunStatusRunning, RunStatusDone, RunStatusFailed, RunStatusCancelled:
		return true
	}
	return false
}

// StepStatus is where a run step stands.
type StepStatus string

const (
	StepPending   StepStatus = "pending"
	StepWorking   StepStatus = "working"
	StepDone      StepStatus = "done"
	StepFailed    StepStatus = "failed"
	StepCancelled StepStatus = "cancelled"
)

// Valid reports whether s is a known status.
func (s StepStatus) Valid() bool {
	switch s {
	case StepPending, StepWorking, StepDone, StepFailed, StepCancelled:
		return true
	}
	return false
}

// Final reports whether s ends a step (until a retry).
func (s StepStatus) Final() bool { return s == StepDone || s == StepFailed || s == StepCancelled }

// Run is a plan being carried out.
type Run struct {
	ID uuid.UUID
	// ConversationID is where the run came from and where its result
	// returns; WorkspaceID is that conversation's workspace (nil: none).
	ConversationID uuid.UUID
	WorkspaceID    *uuid.UUID
	LeadAgent      string
	Goal           string
	Status         RunStatus
	// Check is the completion check as the caller encoded it (JSON, "{}"
	// for none).
	Check      json.RawMessage
	Result     string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt *time.Time
}

// RunStep is one step of a run.
type RunStep struct {
	ID       uuid.UUID
	RunID    uuid.UUID
	Position int
	// Key is the step's id in the plan.
	Key   string
	Title string
	Agent string
	// Class is the slot class the step takes while working.
	Class     string
	Inputs    map[string]string
	DependsOn []string
	Status    StepStatus
	// Model handled the step (set when it starts).
	Model string
	// ConversationID is the conversation of the step's current attempt.
	ConversationID *uuid.UUID
	Attempts       int
	InputTokens    int64
	OutputTokens   int64
	CostMicroUSD   int64
	Output         string
	Error          string
	// Changes is a coding step's change (its repository, branch, diff,
	// gates and delivery: core.StepChanges as JSON); nil for a step that
	// works in no repository, or before it starts.
	Changes    json.RawMessage
	StartedAt  *time.Time
	FinishedAt *time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// RunEvent is one transition of a run or of one of its steps.
type RunEvent struct {
	ID    int64
	RunID uuid.UUID
	// StepKey is the step's plan id ("" for the run itself).
	StepKey string
	Kind    string
	// Status is the status the transition led to ("" when it changed none).
	Status    string
	Detail    string
	CreatedAt time.Time
}

// RunStepSpec is a step of a run being created.
type RunStepSpec struct {
	Key       string
	Title     string
	Agent     string
	Class     string
	Inputs    map[string]string
	DependsOn []string
}

// RunCreateParams creates a running run with its steps, all pending.
type RunCreateParams struct {
	ConversationID uuid.UUID
	WorkspaceID    *uuid.UUID
	LeadAgent      string
	Goal           string
	Check          json.RawMessage // "{}" when nil
	Steps          []RunStepSpec
	Now            time.Time
}

// RunListParams lists runs, newest first, optionally of one workspace,
// one conversation or one status.
type RunListParams struct {
	WorkspaceID    *uuid.UUID
	ConversationID *uuid.UUID
	Status         RunStatus // "" for any
	Limit          int       // 0 means DefaultListLimit
}

// RunFinishParams ends a running run.
type RunFinishParams struct {
	ID     uuid.UUID
	Status RunStatus // done, failed or cancelled
	Result string
	Now    time.Time
}

// RunReopenParams puts a failed or cancelled run back to running.
type RunReopenParams struct {
	ID  uuid.UUID
	Now time.Time
}

// RunStepStartParams starts a pending step in a conversation, if a slot
// of its class is free.
type RunStepStartParams struct {
	ID             uuid.UUID
	ConversationID uuid.UUID
	Model          string
	// SlotLimit is how many steps of the class may work at once, across
	// every run; 0 means no limit.
	SlotLimit int
	Now       time.Time
}

// RunStepStartResult says whether a step started; Started is false (and
// Step unchanged) when its class had no free slot.
type RunStepStartResult struct {
	Step    *RunStep
	Started bool
}

// RunStepFinishParams ends a working step (or cancels a pending one).
type RunStepFinishParams struct {
	ID           uuid.UUID
	Status       StepStatus // done, failed or cancelled
	Output       string
	Error        string
	InputTokens  int64
	OutputTokens int64
	CostMicroUSD int64
	Now          time.Time
}

// RunStepResetParams puts a failed or cancelled step back to pending.
type RunStepResetParams struct {
	ID  uuid.UUID
	Now time.Time
}

// RunStepChangesSetParams records a step's change (JSON).
type RunStepChangesSetParams struct {
	ID      uuid.UUID
	Changes json.RawMessage
	Now     time.Time
}

// RunEventAppendParams appends an event to a run's log.
type RunEventAppendParams struct {
	RunID   uuid.UUID
	StepKey string
	Kind    string
	Status  string
	Detail  string
	Now     time.Time
}

// RunEventListParams reads a run's events after AfterID, oldest first.
type RunEventListParams struct {
	RunID   uuid.UUID
	AfterID int64
	Limit   int // 0 means DefaultListLimit
}

// RunQueries are the runs' reads and writes.
type RunQueries interface {
	// RunCreate creates a run and its steps; ErrNotFound when the
	// conversation does not exist.
	RunCreate(ctx context.Context, p *RunCreateParams) (*Run, error)
	RunGet(ctx context.Context, id uuid.UUID) (*Run, error)
	RunList(ctx context.Context, p *RunListParams) ([]*Run, error)
	// RunFinish ends a running run; ErrConflict when it is not running.
	RunFinish(ctx context.Context, p *RunFinishParams) (*Run, error)
	// RunReopen puts a failed or cancelled run back to running;
	// ErrConflict when it is running or done.
	RunReopen(ctx context.Context, p *RunReopenParams) (*Run, error)

	// RunStepList lists a run's steps in plan order.
	RunStepList(ctx context.Context, runID uuid.UUID) ([]*RunStep, error)
	RunStepGet(ctx context.Context, id uuid.UUID) (*RunStep, error)
	// RunStepByConversation returns the step whose current attempt runs
	// in a conversation; ErrNotFound when none.
	RunStepByConversation(ctx context.Context, conversationID uuid.UUID) (*RunStep, error)
	// RunStepStart moves a pending step to working in a conversation,
	// counting an attempt, when fewer than SlotLimit steps of its class
	// are working; ErrConflict when it is not pending.
	RunStepStart(ctx context.Context, p *RunStepStartParams) (*RunStepStartResult, error)
	// RunStepFinish ends a working step, or cancels a pending one;
	// ErrConflict when it is in neither state (or the status does not
	// apply to it).
	RunStepFinish(ctx context.Context, p *RunStepFinishParams) (*RunStep, error)
	// RunStepReset puts a failed or cancelled step back to pending with
	// its output, error and usage cleared; ErrConflict otherwise.
	RunStepReset(ctx context.Context, p *RunStepResetParams) (*RunStep, error)
	// RunStepChangesSet records a step's change, whatever its state;
	// ErrNotFound when there is no such step.
	RunStepChangesSet(ctx context.Context, p *RunStepChangesSetParams) (*RunStep, error)

	RunEventAppend(ctx context.Context, p *RunEventAppendParams) (*RunEvent, error)
	RunEventList(ctx context.Context, p *RunEventListParams) ([]*RunEvent, error)
}
