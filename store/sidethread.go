package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Side threads and delegations: work between agents that runs in a
// conversation of its own (the child), linked to the conversation and the
// entry that started it (the parent).
//
// A side thread is opened by an agent's <dm target="…"> tag; one between
// the same two agents in the same parent is reused while it is in
// progress. Its last progress time moves with every message in the child;
// a sweep abandons the ones that stopped moving.
//
//	in_progress ──resolve──► resolved
//	     │
//	     └───────sweep─────► abandoned
//
// A delegation is a task one agent hands another (the delegate tool): the
// chosen agent, the factors of its score, and the result once the
// delegate answered.
//
//	running ──result──► completed
//	   │
//	   └─────fail──────► failed

// SideThreadStatus is where a side thread stands.
type SideThreadStatus string

const (
	SideThreadInProgress SideThreadStatus = "in_progress"
	SideThreadResolved   SideThreadStatus = "resolved"
	SideThreadAbandoned  SideThreadStatus = "abandoned"
)

// Valid reports whether s is a known status.
func (s SideThreadStatus) Valid() bool {
	switch s {
	case SideThreadInProgress, SideThreadResolved, SideThreadAbandoned:
		return true
	}
	return false
}

// SideThread is a side conversation between two agents.
type SideThread struct {
	ID uuid.UUID
	// ParentID is the conversation the tag was written in, ParentSeq the
	// seq of the entry that carried it.
	ParentID  uuid.UUID
	ParentSeq int64
	// ChildID is the side conversation.
	ChildID uuid.UUID
	// Opener wrote the tag; Peer is its target.
	Opener, Peer string
	Status       SideThreadStatus
	// Summary is what the resolver reported ("" until resolved).
	Summary string
	// FinishedBy is the agent that resolved it, or "system" for the sweep.
	FinishedBy string
	// MarkerEntryID is the entry people see the side thread through in the
	// parent (nil: none, as in a DM); the posted table holds the platform
	// messages it became, per binding, which are edited when the status
	// changes.
	MarkerEntryID *uuid.UUID
	// ProgressAt is the last time something happened in the child.
	ProgressAt time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Agents are the two agents of the side thread, opener first.
func (t *SideThread) Agents() []string { return []string{t.Opener, t.Peer} }

// SideThreadCreateParams opens a side thread.
type SideThreadCreateParams struct {
	ParentID      uuid.UUID
	ParentSeq     int64
	ChildID       uuid.UUID
	Opener, Peer  string
	MarkerEntryID *uuid.UUID
	Now           time.Time
}

// SideThreadFindOpenParams looks for the side thread in progress between
// two agents (in either order) in a parent conversation.
type SideThreadFindOpenParams struct {
	ParentID uuid.UUID
	A, B     string
}

// SideThreadMarkParams records the marker entry of a side thread.
type SideThreadMarkParams struct {
	ID      uuid.UUID
	EntryID uuid.UUID
	Now     time.Time
}

// SideThreadProgressParams notes that something happened in a side thread.
type SideThreadProgressParams struct {
	ID  uuid.UUID
	Now time.Time
}

// SideThreadFinishParams resolves or abandons a side thread in progress.
type SideThreadFinishParams struct {
	ID         uuid.UUID
	Status     SideThreadStatus // resolved or abandoned
	Summary    string
	FinishedBy string
	Now        time.Time
}

// SideThreadListStaleParams lists side threads in progress whose last
// progress is before Before.
type SideThreadListStaleParams struct {
	Before time.Time
	Limit  int // 0 means DefaultListLimit
}

// DelegationStatus is where a delegated task stands.
type DelegationStatus string

const (
	DelegationRunning   DelegationStatus = "running"
	DelegationCompleted DelegationStatus = "completed"
	DelegationFailed    DelegationStatus = "failed"
)

// Valid reports whether s is a known status.
func (s DelegationStatus) Valid() bool {
	switch s {
	case DelegationRunning, DelegationCompleted, DelegationFailed:
		return true
	}
	return false
}

// Delegation is a task one agent handed another.
type Delegation struct {
	ID uuid.UUID
	// FromConversation is where the delegate tool was called, FromAgent
	// the agent that called it.
	FromConversation uuid.UUID
	FromAgent        string
	// ToAgent was chosen (by name, or by score); ChildID is the
	// conversation the task runs in.
	ToAgent string
	ChildID uuid.UUID
	Task    string
	// Factors is why ToAgent was chosen: each candidate's factors, weights
	// and score, as the caller encoded them (JSON).
	Factors json.RawMessage
	Status  DelegationStatus
	// Result is the delegate's answer ("" while running).
	Result     string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt *time.Time
}

// DelegationCreateParams records a delegated task.
type DelegationCreateParams struct {
	FromConversation uuid.UUID
	FromAgent        string
	ToAgent          string
	ChildID          uuid.UUID
	Task             string
	Factors          json.RawMessage // "{}" when nil
	Now              time.Time
}

// DelegationFinishParams completes or fails a running delegation.
type DelegationFinishParams struct {
	ID     uuid.UUID
	Status DelegationStatus // completed or failed
	Result string
	Now    time.Time
}

// TrackRecord is one agent's record as a delegate: the tasks it was handed
// and how many it completed.
type TrackRecord struct {
	Agent     string
	Delegated int
	Completed int
	Failed    int
}

// AgentLatency is how long an agent's recent turns took: their number
// and their mean time from being queued to their end.
type AgentLatency struct {
	AgentID uuid.UUID
	Turns   int
	Mean    time.Duration
}

// AgentLoad is the open work (available or running items) of the
// conversations an agent owns.
type AgentLoad struct {
	AgentID  uuid.UUID
	OpenWork int
	Running  int
}

// SideThreadQueries are the side threads' and delegations' reads and
// writes.
type SideThreadQueries interface {
	// SideThreadCreate opens a side thread; ErrNotFound when the parent
	// or the child conversation does not exist, ErrConflict when the child
	// already belongs to one.
	SideThreadCreate(ctx context.Context, p *SideThreadCreateParams) (*SideThread, error)
	SideThreadGet(ctx context.Context, id uuid.UUID) (*SideThread, error)
	// SideThreadFindOpen returns the side thread in progress between the
	// two agents in the parent; ErrNotFound when there is none.
	SideThreadFindOpen(ctx context.Context, p *SideThreadFindOpenParams) (*SideThread, error)
	// SideThreadByChild returns the side thread a conversation is the
	// child of; ErrNotFound when it is none's.
	SideThreadByChild(ctx context.Context, childID uuid.UUID) (*SideThread, error)
	// SideThreadList lists a parent's side threads, oldest first.
	SideThreadList(ctx context.Context, parentID uuid.UUID) ([]*SideThread, error)
	// SideThreadMark records the marker entry.
	SideThreadMark(ctx context.Context, p *SideThreadMarkParams) (*SideThread, error)
	// SideThreadProgress moves ProgressAt forward (never back) while the
	// side thread is in progress; a finished one is returned unchanged.
	SideThreadProgress(ctx context.Context, p *SideThreadProgressParams) (*SideThread, error)
	// SideThreadFinish resolves or abandons a side thread in progress;
	// ErrConflict when it is finished already.
	SideThreadFinish(ctx context.Context, p *SideThreadFinishParams) (*SideThread, error)
	// SideThreadListStale lists side threads in progress with no progress
	// since Before, the stalest first.
	SideThreadListStale(ctx context.Context, p *SideThreadListStaleParams) ([]*SideThread, error)

	// DelegationCreate records a delegated task; ErrNotFound when either
	// conversation does not exist, ErrConflict when the child already
	// belongs to one.
	DelegationCreate(ctx context.Context, p *DelegationCreateParams) (*Delegation, error)
	DelegationGet(ctx context.Context, id uuid.UUID) (*Delegation, error)
	// DelegationByChild returns the delegation a conversation runs;
	// ErrNotFound when none.
	DelegationByChild(ctx context.Context, childID uuid.UUID) (*Delegation, error)
	// DelegationList lists the delegations made from a conversation,
	// oldest first.
	DelegationList(ctx context.Context, fromConversation uuid.UUID) ([]*Delegation, error)
	// DelegationFinish completes or fails a running delegation;
	// ErrConflict when it is finished already.
	DelegationFinish(ctx context.Context, p *DelegationFinishParams) (*Delegation, error)
	// DelegationTrackRecords is every delegate's record, by agent name.
	DelegationTrackRecords(ctx context.Context) ([]*TrackRecord, error)
	// AgentLoads counts the open work of each agent's conversations (an
	// agent with none is absent).
	AgentLoads(ctx context.Context) ([]*AgentLoad, error)
	// AgentLatencies is how long each agent's turns that made model calls
	// since since took, from being queued to their end (an agent with
	// none is absent).
	AgentLatencies(ctx context.Context, since time.Time) ([]*AgentLatency, error)
}
