package core

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// WorkArgs are the typed arguments of a work item, as River's JobArgs. Kind
// names the handler that runs the item and is stored beside it; the args
// are stored as their JSON encoding, so renaming a field or a kind is a
// change of the stored format. The worker asks a zero value for its Kind:
// give it a value receiver and a constant result.
type WorkArgs interface {
	Kind() string
}

// Work kinds core enqueues.
const (
	// WorkTurn runs a turn (Service.RunTurn).
	WorkTurn = "turn"
	// WorkDeliver delivers a conversation's undelivered entries. Every commit
	// of an entry people see carries one; it runs after the turn that wrote
	// it lets the lease go and finishes what that turn could not deliver
	// (deliver.Deliverer.HandleDeliver).
	WorkDeliver = "deliver"
)

// TurnArgs are the args of a WorkTurn item.
type TurnArgs struct {
	// TriggerSeq is the seq of the entry that caused the turn (a message, a
	// tool result, an action); a retried turn restarts after it.
	TriggerSeq int64  `json:"trigger_seq"`
	Reason     string `json:"reason"` // message, resume, action, schedule
	// Agent takes the turn: one agent at a time, since the conversation's
	// lease serialises its items. "" is the agent of the call the turn
	// resumes, else the conversation's agent.
	Agent string `json:"agent,omitempty"`
	// Then are the agents that answer the same message after Agent, in
	// order: the turn that ends with Agent's reply queues the next.
	Then []string `json:"then,omitempty"`
	// ResumeCall is the call the turn resumes when a decision settled it
	// (an approved confirmation, an approval that expired while the
	// conversation waited): the turn reads the log back to it however long
	// the log grew meanwhile (window.go).
	ResumeCall string `json:"resume_call,omitempty"`
}

// Kind is WorkTurn.
func (TurnArgs) Kind() string { return WorkTurn }

// DeliverArgs are the args of a WorkDeliver item: none, the item's
// conversation says what to deliver.
type DeliverArgs struct{}

// Kind is WorkDeliver.
func (DeliverArgs) Kind() string { return WorkDeliver }

// workFunc runs one claimed item whose payload it decodes itself.
type workFunc func(ctx context.Context, item *store.WorkItem) error

// Handlers holds the handler of each work kind a worker runs, as River's
// Workers. Fill it with AddHandler at start-up, before the worker starts.
type Handlers struct {
	byKind map[string]workFunc
}

// NewHandlers returns an empty set of handlers.
func NewHandlers() *Handlers {
	return &Handlers{byKind: map[string]workFunc{}}
}

// AddHandler makes fn the handler of T's kind. The worker decodes each
// claimed item's payload into a T and passes it to fn beside the item (for
// its id, conversation and attempt). A nil error from fn completes the
// item; an error fails the attempt, retried with backoff until
// MaxAttempts. When ctx ends fn returns promptly without writing further:
// the lease was lost (the new holder goes on), or the worker is stopping
// (what fn committed stays, and the item is released to run again from
// there). A payload that does not decode into T fails the attempt the same
// way, with an error naming the kind and the item.
//
// AddHandler panics when T's kind is empty or already has a handler:
// handlers are wired once at start-up, and either is a programming error.
func AddHandler[T WorkArgs](hs *Handlers, fn func(ctx context.Context, item *store.WorkItem, args T) error) {
	var zero T
	kind := zero.Kind()
	switch {
	case kind == "":
		panic(fmt.Sprintf("core: adding a work handler: %T has an empty Kind", zero))
	case fn == nil:
		panic(fmt.Sprintf("core: adding a work handler for %s: the handler is nil", kind))
	}
	if hs.byKind == nil {
		hs.byKind = map[string]workFunc{}
	}
	if _, ok := hs.byKind[kind]; ok {
		panic(fmt.Sprintf("core: adding a work handler: kind %q already has one", kind))
	}
	hs.byKind[kind] = func(ctx context.Context, item *store.WorkItem) error {
		var args T
		payload := item.Payload
		if len(payload) == 0 {
			payload = json.RawMessage(`{}`)
		}
		if err := json.Unmarshal(payload, &args); err != nil {
			return fmt.Errorf("decoding the %s args of work item %s: %w", kind, item.ID, err)
		}
		return fn(ctx, item, args)
	}
}

// Kinds lists the kinds that have a handler, sorted.
func (hs *Handlers) Kinds() []string {
	kinds := make([]string, 0, len(hs.byKind))
	for k := range hs.byKind {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return kinds
}

// Run hands item to the handler of its kind, decoding its args, as the
// worker does; tests use it to run claimed items one at a time.
func (hs *Handlers) Run(ctx context.Context, item *store.WorkItem) error {
	fn, ok := hs.byKind[item.Kind]
	if !ok {
		return fmt.Errorf("work item %s has kind %q, which has no handler here", item.ID, item.Kind)
	}
	return fn(ctx, item)
}

// EnqueueOpts are the settings of an enqueued item besides its args, as
// River's InsertOpts. The zero value is an item of no conversation,
// runnable now, at priority 0, with the store's default attempts.
type EnqueueOpts struct {
	// ConversationID ties the item to a conversation: it runs only while no
	// other item of that conversation does, under the conversation's lease.
	ConversationID *uuid.UUID
	AgentID        *uuid.UUID
	RunAt          time.Time // zero means Now
	Priority       int       // higher runs first
	MaxAttempts    int       // 0 means the store's default (3)
	// UniqueKey, when set, makes a second enqueue with the same key return
	// the first item instead of adding one.
	UniqueKey *string
	// OrderingKey, when set, runs the item only after the items enqueued
	// before it with the same key have finished, one at a time, across
	// instances (store.WorkEnqueueParams.OrderingKey).
	OrderingKey *string
	Now         time.Time
}

// Enqueuer is where Enqueue writes: a store, or the queries of a
// transaction so the item commits with what caused it.
type Enqueuer interface {
	WorkEnqueue(ctx context.Context, p *store.WorkEnqueueParams) (*store.WorkEnqueueResult, error)
}

// Enqueue queues a work item of args' kind with args as its payload; opts
// may be nil.
func Enqueue(ctx context.Context, q Enqueuer, args WorkArgs, opts *EnqueueOpts) (*store.WorkEnqueueResult, error) {
	p, err := enqueueParams(args, opts)
	if err != nil {
		return nil, err
	}
	// The store names the kind in its errors.
	return q.WorkEnqueue(ctx, p)
}

// enqueueParams are the store's params for enqueueing args.
func enqueueParams(args WorkArgs, opts *EnqueueOpts) (*store.WorkEnqueueParams, error) {
	if opts == nil {
		opts = &EnqueueOpts{}
	}
	payload, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("encoding the args of %s work: %w", args.Kind(), err)
	}
	return &store.WorkEnqueueParams{
		Kind:           args.Kind(),
		Payload:        payload,
		ConversationID: opts.ConversationID,
		AgentID:        opts.AgentID,
		RunAt:          opts.RunAt,
		Priority:       opts.Priority,
		MaxAttempts:    opts.MaxAttempts,
		UniqueKey:      opts.UniqueKey,
		OrderingKey:    opts.OrderingKey,
		Now:            opts.Now,
	}, nil
}
