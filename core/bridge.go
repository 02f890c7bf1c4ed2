package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/store"
)

// Bridges runs the model calls of runs_on: bridge agents on machines of
// their own: a `switchboard bridge` process connected to the service's API
// claims each call and streams its output back (see docs/bridge.md).
//
// The turn stays in the service: only the model call moves. The turn's
// backend (Bridges.Backend) puts the call in the work queue as an item of
// kind BridgeKind(agent), which no worker of serve handles, so only a
// bridge's claim (WorkClaim filtered to that kind, the same query a
// worker runs, whether a wake-up announced the item or a poll found it)
// takes it. The bridge holds the item's lease by heartbeating; its deltas
// reach the waiting turn as they arrive and the turn emits them as its own,
// so delivery, the guard, approvals, audit, budgets and usage work as for
// a call made in serve. The bridge's final answer completes the item.
//
//	turn ─► Backend.Generate ─► WorkEnqueue(bridge:AGENT) ─► wake-up
//	                 ▲                                          │
//	                 │ events, result        claim (bridge API) ◄┘
//	                 └────────── bridge: runs the CLI, heartbeats
//
// What happens on failure:
//   - No bridge takes the call within Bridge.Wait: the turn answers one
//     line saying the agent's machine is not connected (BridgeWaitError).
//   - A bridge dies mid-call: its lease expires after Bridge.Lease and the
//     next claim (another bridge, or the same one restarted) takes the item
//     again; the turn discards what the dead one streamed (EventRestart)
//     and streams the new attempt, so people see one answer. Events and a
//     result from the dead attempt's holder are refused (ErrLeaseLost).
//   - The turn ends first (stopped, lease lost, the service restarted):
//     the call is no longer waited for; a bridge that claims or reports on
//     it is told so (ErrBridgeCallGone) and stops, and the item is
//     completed by that claim.
//
// The waiting turn and the API calls of the bridge meet in this process's
// memory: with several instances, a bridge must reach the instance whose
// turn waits (run bridges against one instance, or one instance only for
// bridge agents); a claim on another instance gives the call back
// uncounted. The claim, the lease and the retry are in the store.
type Bridges struct {
	opts BridgesOptions
	log  *slog.Logger

	mu    sync.Mutex
	calls map[uuid.UUID]*bridgeCall // by work item id, waited for here
	conns map[string]*bridgeConn    // connected bridges by their id
}

// BridgesOptions configures Bridges.
type BridgesOptions struct {
	Store store.Store
	// Settings returns the bridge section of the current configuration.
	Settings func() config.Bridge
	Logger   *slog.Logger
	Now      func() time.Time
	// Instance is this process's instance id: the calls it waits for carry
	// it, so that a claim on another instance gives them back instead of
	// taking them for orphans.
	Instance string
	// Poll is how often a waiting turn reads its item back (to notice a
	// bridge whose lease expired or an item that failed); 0: a second.
	Poll time.Duration
}

func (o *BridgesOptions) validate() error {
	switch {
	case o.Store == nil:
		return errors.New("core: BridgesOptions.Store is required")
	case o.Settings == nil:
		return errors.New("core: BridgesOptions.Settings is required")
	}
	return nil
}

// NewBridges returns the relay of bridge agents' model calls.
func NewBridges(opts BridgesOptions) (*Bridges, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Poll == 0 {
		opts.Poll = time.Second
	}
	return &Bridges{opts: opts, log: opts.Logger, calls: map[uuid.UUID]*bridgeCall{}, conns: map[string]*bridgeConn{}}, nil
}

// BridgeKind is the work kind of a model call of agent run on a bridge.
func BridgeKind(agent string) string { return "bridge:" + agent }

// BridgeWorker is the lease owner a bridge claims under.
func BridgeWorker(bridgeID string) string { return "bridge:" + bridgeID }

// BridgeCallArgs are the args of a bridge call's work item.
type BridgeCallArgs struct {
	Agent string `json:"agent"`
	// Model is the agent's "provider:model": the bridge builds the backend
	// of its own machine from it.
	Model   string         `json:"model"`
	Request *model.Request `json:"request"`
	// Instance is the instance whose turn waits for the call.
	Instance string `json:"instance,omitempty"`
}

// BridgeCall is a model call a bridge claimed.
type BridgeCall struct {
	ID      uuid.UUID
	Attempt int
	Args    BridgeCallArgs
}

// BridgeFailure is how a bridge reports a failed model call: the parts of
// a *model.Error that Describe reads.
type BridgeFailure struct {
	Provider  string `json:"provider"`
	Status    int    `json:"status,omitempty"`
	Type      string `json:"type,omitempty"`
	Retryable bool   `json:"retryable,omitempty"`
	Message   string `json:"message"`
}

// Errors of the bridge API.
var (
	// ErrBridgeCallGone: no turn waits for the call any more (it ended, or
	// the service restarted); the bridge drops it.
	ErrBridgeCallGone = errors.New("no turn waits for this call any more")
	// ErrBridgeAgent: a bridge acted on a call of an agent its session is
	// not.
	ErrBridgeAgent = errors.New("the call belongs to another agent")
	// ErrBridgeLeaseLost: the bridge no longer holds the call (its lease
	// expired and another bridge took it over).
	ErrBridgeLeaseLost = errors.New("this bridge no longer holds the call: another took it over")
)

// BridgeWaitError is the failure of a turn whose bridge agent had no
// machine take the call in time.
type BridgeWaitError struct {
	Agent string
	Wait  time.Duration
}

func (e *BridgeWaitError) Error() string {
	return fmt.Sprintf("no bridge of agent %s took the call within %s (bridge.wait)", e.Agent, e.Wait)
}

// Sentence is what people are told.
func (e *BridgeWaitError) Sentence() string {
	return fmt.Sprintf("%s runs on its own machine, and that machine is not connected (waited %s); please try again once it is back.", e.Agent, e.Wait)
}

// BridgeInfo is a connected bridge, as /readyz and the API list it.
type BridgeInfo struct {
	ID            string    `json:"id"`
	Agents        []string  `json:"agents"`
	Version       string    `json:"version"`
	ConnectedAt   time.Time `json:"connected_at"`
	LastHeartbeat time.Time `json:"last_heartbeat"`
	Calls         int       `json:"calls"` // model calls it runs now
}

type bridgeConn struct {
	info  BridgeInfo
	conns int // open announcement streams
}

// bridgeCall is a call a turn of this process waits for.
type bridgeCall struct {
	agent string
	msgs  chan bridgeMsg
	done  chan struct{} // closed when the turn stops waiting
	// owner and attempt are the claim that may report on the call now.
	owner   string
	attempt int
}

type bridgeMsg struct {
	claimed bool // a claim took the call (attempt)
	attempt int
	events  []model.Event
	resp    *model.Response
	fail    *BridgeFailure
}

// Connect records a bridge's open announcement stream; release forgets
// it when the last of its streams closes.
func (b *Bridges) Connect(id, agent, version string) (release func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.conns[id]
	if c == nil {
		now := b.opts.Now().UTC()
		c = &bridgeConn{info: BridgeInfo{ID: id, Version: version, ConnectedAt: now, LastHeartbeat: now}}
		b.conns[id] = c
	}
	if !slices.Contains(c.info.Agents, agent) {
		c.info.Agents = append(c.info.Agents, agent)
		slices.Sort(c.info.Agents)
	}
	c.conns++
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			if c.conns--; c.conns <= 0 {
				delete(b.conns, id)
			}
		})
	}
}

// seen records a sign of life of a bridge.
func (b *Bridges) seen(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c := b.conns[id]; c != nil {
		c.info.LastHeartbeat = b.opts.Now().UTC()
	}
}

// Beat records a bridge's heartbeat on its announcement stream.
func (b *Bridges) Beat(id string) { b.seen(id) }

// List returns the connected bridges, by id.
func (b *Bridges) List() []BridgeInfo {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]BridgeInfo, 0, len(b.conns))
	for _, c := range b.conns {
		info := c.info
		info.Agents = slices.Clone(info.Agents)
		for _, call := range b.calls {
			if call.owner == BridgeWorker(info.ID) {
				info.Calls++
			}
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(x, y BridgeInfo) int {
		if x.ID < y.ID {
			return -1
		}
		if x.ID > y.ID {
			return 1
		}
		return 0
	})
	return out
}

// connected reports whether a bridge of agent is connected.
func (b *Bridges) connected(agent string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.conns {
		if slices.Contains(c.info.Agents, agent) {
			return true
		}
	}
	return false
}

// Wakeups delivers the work kinds announced until ctx ends: an
// announcement stream sends the bridge those of its agent (BridgeKind).
// Best effort, as every wake-up: a bridge also claims on a timer.
func (b *Bridges) Wakeups(ctx context.Context) (<-chan string, error) {
	ch, err := b.opts.Store.Subscribe(ctx, store.TopicWork)
	if err != nil {
		return nil, fmt.Errorf("subscribing to work announcements: %w", err)
	}
	out := make(chan string, 16)
	go func() {
		defer close(out)
		for n := range ch {
			select {
			case out <- n.Payload:
			default: // the stream is behind; the bridge's poll finds it
			}
		}
	}()
	return out, nil
}

// Lease is how long a bridge's claim holds without a heartbeat.
func (b *Bridges) Lease() time.Duration { return b.opts.Settings().LeaseOrDefault() }

// Claim takes up to limit calls of agent for the bridge id, with the
// queue's own claim. A claimed call no turn waits for any more is
// completed and left out.
func (b *Bridges) Claim(ctx context.Context, id, agent string, limit int) ([]*BridgeCall, error) {
	b.seen(id)
	worker := BridgeWorker(id)
	items, err := b.opts.Store.WorkClaim(ctx, &store.WorkClaimParams{
		Worker: worker, Kinds: []string{BridgeKind(agent)}, Limit: max(limit, 1), LeaseTTL: b.Lease(), Now: b.opts.Now(),
	})
	if err != nil {
		return nil, fmt.Errorf("claiming the calls of agent %s: %w", agent, err)
	}
	var out []*BridgeCall
	for _, it := range items {
		var args BridgeCallArgs
		if err := json.Unmarshal(it.Payload, &args); err != nil {
			b.drop(ctx, it, worker, "unreadable payload: "+err.Error())
			continue
		}
		b.mu.Lock()
		call := b.calls[it.ID]
		if call != nil {
			call.owner, call.attempt = worker, it.Attempts
		}
		b.mu.Unlock()
		if call == nil && args.Instance != "" && args.Instance != b.opts.Instance {
			// Another instance's turn waits for it: only a bridge connected
			// there can report to it. Given back, not counted.
			if _, err := b.opts.Store.WorkRelease(ctx, &store.WorkLeaseParams{ID: it.ID, Worker: worker, Now: b.opts.Now()}); err != nil {
				b.log.WarnContext(ctx, "giving back another instance's bridge call", "item", it.ID, "error", err)
			}
			continue
		}
		if call == nil {
			b.drop(ctx, it, worker, "") // its turn ended, or this instance restarted
			continue
		}
		call.send(ctx, bridgeMsg{claimed: true, attempt: it.Attempts})
		b.log.InfoContext(ctx, "bridge claimed a model call", "bridge", id, "agent", agent, "item", it.ID, "attempt", it.Attempts)
		out = append(out, &BridgeCall{ID: it.ID, Attempt: it.Attempts, Args: args})
	}
	return out, nil
}

// drop completes an item no turn waits for.
func (b *Bridges) drop(ctx context.Context, it *store.WorkItem, worker, why string) {
	var err error
	if why == "" {
		_, err = b.opts.Store.WorkComplete(ctx, &store.WorkLeaseParams{ID: it.ID, Worker: worker, Now: b.opts.Now()})
	} else {
		_, err = b.opts.Store.WorkFail(ctx, &store.WorkFailParams{ID: it.ID, Worker: worker, Error: why, RetryAt: b.opts.Now(), Now: b.opts.Now()})
	}
	if err != nil {
		b.log.WarnContext(ctx, "dropping a bridge call no turn waits for", "item", it.ID, "error", err)
	}
}

// holder returns the waiting call id if the bridge's claim holds it for
// agent.
func (b *Bridges) holder(id uuid.UUID, bridgeID, agent string, attempt int) (*bridgeCall, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	call := b.calls[id]
	switch {
	case call == nil:
		return nil, ErrBridgeCallGone
	case call.agent != agent:
		return nil, ErrBridgeAgent
	case call.owner != BridgeWorker(bridgeID) || (attempt != 0 && call.attempt != attempt):
		return nil, ErrBridgeLeaseLost
	}
	return call, nil
}

// Heartbeat extends the bridge's lease on a call.
func (b *Bridges) Heartbeat(ctx context.Context, id uuid.UUID, bridgeID, agent string) error {
	b.seen(bridgeID)
	if _, err := b.holder(id, bridgeID, agent, 0); err != nil {
		return err
	}
	if _, err := b.opts.Store.WorkHeartbeat(ctx, &store.WorkLeaseParams{
		ID: id, Worker: BridgeWorker(bridgeID), LeaseTTL: b.Lease(), Now: b.opts.Now(),
	}); errors.Is(err, store.ErrLeaseLost) {
		return ErrBridgeLeaseLost
	} else if err != nil {
		return fmt.Errorf("extending the lease of call %s: %w", id, err)
	}
	return nil
}

// Events hands a claimed attempt's streamed events to the waiting turn.
func (b *Bridges) Events(ctx context.Context, id uuid.UUID, bridgeID, agent string, attempt int, events []model.Event) error {
	b.seen(bridgeID)
	call, err := b.holder(id, bridgeID, agent, attempt)
	if err != nil {
		return err
	}
	return call.send(ctx, bridgeMsg{attempt: attempt, events: events})
}

// send hands m to the waiting turn.
func (c *bridgeCall) send(ctx context.Context, m bridgeMsg) error {
	select {
	case c.msgs <- m:
		return nil
	case <-c.done:
		return ErrBridgeCallGone
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Finish completes a claimed attempt with its response or its failure and
// hands it to the waiting turn.
func (b *Bridges) Finish(ctx context.Context, id uuid.UUID, bridgeID, agent string, attempt int, resp *model.Response, fail *BridgeFailure) error {
	b.seen(bridgeID)
	call, err := b.holder(id, bridgeID, agent, attempt)
	if err != nil {
		return err
	}
	if (resp == nil) == (fail == nil) {
		return fmt.Errorf("%w: a call's end has a response or a failure", ErrInvalid)
	}
	if _, err := b.opts.Store.WorkComplete(ctx, &store.WorkLeaseParams{ID: id, Worker: BridgeWorker(bridgeID), Now: b.opts.Now()}); errors.Is(err, store.ErrLeaseLost) {
		return ErrBridgeLeaseLost
	} else if err != nil {
		return fmt.Errorf("completing call %s: %w", id, err)
	}
	return call.send(ctx, bridgeMsg{attempt: attempt, resp: resp, fail: fail})
}

// Backend is the model backend of agent a in serve: each call goes to a
// bridge.
func (b *Bridges) Backend(a *config.Agent) model.Backend {
	spec, _ := model.ParseSpec(a.Model)
	return &bridgeBackend{b: b, agent: a.Name, model: a.Model, provider: spec.Provider}
}

type bridgeBackend struct {
	b        *Bridges
	agent    string
	model    string
	provider string
}

// Provider is the provider of the agent's model: usage and prices are the
// model's, wherever it ran.
func (bb *bridgeBackend) Provider() string { return bb.provider }

// waitingStatus is the status of a turn whose call no bridge runs yet.
const waitingStatus = "is waiting for the agent's machine…"

func (bb *bridgeBackend) Generate(ctx context.Context, req *model.Request, emit func(model.Event)) (*model.Response, error) {
	if emit == nil {
		emit = func(model.Event) {}
	}
	b := bb.b
	payload, err := json.Marshal(BridgeCallArgs{Agent: bb.agent, Model: bb.model, Request: req, Instance: b.opts.Instance})
	if err != nil {
		return nil, fmt.Errorf("encoding the call for a bridge: %w", err)
	}
	call := &bridgeCall{agent: bb.agent, msgs: make(chan bridgeMsg, 64), done: make(chan struct{})}
	// The item is registered under its id before anyone can claim it: the
	// enqueue and the registration are under b.mu, and a claim reads the
	// registry under it too.
	b.mu.Lock()
	res, err := b.opts.Store.WorkEnqueue(ctx, &store.WorkEnqueueParams{
		Kind: BridgeKind(bb.agent), Payload: payload, MaxAttempts: 3, Now: b.opts.Now(),
	})
	if err == nil {
		b.calls[res.Item.ID] = call
	}
	b.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("queueing the call for a bridge of agent %s: %w", bb.agent, err)
	}
	id := res.Item.ID
	defer func() {
		b.mu.Lock()
		delete(b.calls, id)
		b.mu.Unlock()
		close(call.done)
	}()

	wait := b.opts.Settings().WaitOrDefault()
	deadline := b.opts.Now().Add(wait)
	attempt, streamed, waiting := 0, false, false
	var ended time.Time // when the item was first seen finished without a result
	if !b.connected(bb.agent) {
		emit(model.Event{Kind: model.EventStatus, Text: waitingStatus})
		waiting = true
	}
	poll := time.NewTicker(b.opts.Poll)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, &model.Error{Provider: bb.provider, Err: fmt.Errorf("waiting for the bridge of agent %s: %w", bb.agent, ctx.Err())}
		case m := <-call.msgs:
			switch {
			case m.claimed:
				if m.attempt != attempt && streamed {
					// Another bridge took over from one that died: what the
					// dead one streamed goes.
					emit(model.Event{Kind: model.EventRestart})
				}
				attempt, streamed, waiting = m.attempt, false, false
				emit(model.Event{Kind: model.EventStatus, Text: "is thinking…"})
			case m.attempt != attempt:
				// A late message of an attempt taken over.
			case m.resp != nil:
				return m.resp, nil
			case m.fail != nil:
				return nil, &model.Error{Provider: m.fail.Provider, Status: m.fail.Status, Type: m.fail.Type, Retryable: m.fail.Retryable, Attempts: 1, Err: errors.New(m.fail.Message)}
			default:
				for _, ev := range m.events {
					if ev.Kind == model.EventStatus {
						continue // only the service says what a turn does
					}
					streamed = true
					emit(ev)
				}
			}
		case <-poll.C:
			it, err := b.opts.Store.WorkGet(ctx, id)
			if err != nil {
				b.log.WarnContext(ctx, "reading a bridge call back", "item", id, "error", err)
				continue
			}
			now := b.opts.Now()
			held := it.State == store.WorkRunning && it.LeaseExpiresAt != nil && it.LeaseExpiresAt.After(now)
			switch {
			case it.State == store.WorkFailed:
				return nil, &model.Error{Provider: bb.provider, Err: fmt.Errorf("the bridges of agent %s failed the call: %s", bb.agent, it.LastError)}
			case it.State == store.WorkDone || it.State == store.WorkCancelled:
				// A bridge's result completes the item just before it is
				// handed over: give it a few polls to arrive.
				if ended.IsZero() {
					ended = now
				} else if now.Sub(ended) > 5*b.opts.Poll {
					return nil, &model.Error{Provider: bb.provider, Err: fmt.Errorf("the call of agent %s ended without an answer", bb.agent)}
				}
			case held:
				deadline = now.Add(wait)
			case it.State == store.WorkRunning || it.State == store.WorkAvailable:
				// Not taken yet, or its bridge stopped heartbeating: the
				// turn waits for a machine, up to Wait after the last sign
				// of one.
				if !waiting {
					emit(model.Event{Kind: model.EventStatus, Text: waitingStatus})
					waiting = true
				}
				if now.After(deadline) {
					b.giveUp(ctx, it)
					return nil, &BridgeWaitError{Agent: bb.agent, Wait: wait}
				}
			}
		}
	}
}

// giveUp takes a call back from the queue when the turn stops waiting,
// so that a bridge connecting later does not run it: the item is claimed
// under the service's own name and completed.
func (b *Bridges) giveUp(ctx context.Context, it *store.WorkItem) {
	const giver = "bridge-wait"
	claimed, err := b.opts.Store.WorkClaim(ctx, &store.WorkClaimParams{
		Worker: giver, Kinds: []string{it.Kind}, Limit: 10, LeaseTTL: time.Minute, Now: b.opts.Now(),
	})
	if err != nil {
		b.log.WarnContext(ctx, "taking back a bridge call", "item", it.ID, "error", err)
		return
	}
	for _, c := range claimed {
		b.mu.Lock()
		_, waited := b.calls[c.ID]
		b.mu.Unlock()
		if waited && c.ID != it.ID {
			// Another turn's call: give it back untouched.
			if _, err := b.opts.Store.WorkRelease(ctx, &store.WorkLeaseParams{ID: c.ID, Worker: giver, Now: b.opts.Now()}); err != nil {
				b.log.WarnContext(ctx, "giving a bridge call back", "item", c.ID, "error", err)
			}
			continue
		}
		b.drop(ctx, c, giver, "")
	}
}
