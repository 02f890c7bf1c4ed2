package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// EventKind names an ephemeral turn event.
type EventKind string

const (
	EventTurnStart EventKind = "turn_start"
	EventDelta     EventKind = "delta"   // Text is the next piece of the reply
	EventRestart   EventKind = "restart" // the model call is retried: drop this call's deltas
	EventStatus    EventKind = "status"  // Text is what the agent is doing ("" clears)
	EventEntry     EventKind = "entry"   // Entry was appended
	EventTurnEnd   EventKind = "turn_end"
)

// Event is something a turn did. Deltas and statuses are never stored: they
// exist only for live viewers, on the instance running the turn and, with a
// shared hub, on the other instances through the store's notifications.
// Entries are stored before they are published.
type Event struct {
	ConversationID uuid.UUID
	Kind           EventKind
	Text           string
	Entry          *store.Entry
	Agent          string
}

// Hub fans ephemeral turn events out to live subscribers (SSE streams,
// platform deliveries). A slow subscriber loses events rather than slowing
// the turn: every consumer can rebuild from the log.
//
// A shared hub (NewSharedHub) also relays them between instances: the
// events a turn publishes here are gathered for a few milliseconds per
// conversation and sent in one small notification on the conversation's
// own topic (store.LiveTopic), and a subscriber of a conversation here
// listens on that topic, so a client streaming from one instance sees the
// deltas of a turn running on another. An entry crosses as its id and is
// read from the log on arrival (the whole entry, never a copy in the
// notification); nothing of a delta is ever stored.
type Hub struct {
	mu   sync.RWMutex
	subs map[*subscription]struct{}

	relay *relay // nil: this instance only
}

type subscription struct {
	conv uuid.UUID // uuid.Nil: every conversation
	ch   chan Event
}

// NewHub returns an empty hub that reaches this instance's subscribers only.
func NewHub() *Hub { return &Hub{subs: map[*subscription]struct{}{}} }

// HubOptions configures a shared hub.
type HubOptions struct {
	// Store carries the events between instances (Publish, Subscribe).
	Store store.Store
	// Instance names this instance; events it relayed are not replayed to it.
	Instance string
	// Window is how long events of a conversation gather before they are
	// sent together (default 5ms).
	Window time.Duration
	Logger *slog.Logger
}

func (o *HubOptions) validate() error {
	switch {
	case o.Store == nil:
		return errors.New("hub: HubOptions.Store is required")
	case o.Instance == "":
		return errors.New("hub: HubOptions.Instance is required")
	case o.Window < 0:
		return fmt.Errorf("hub: HubOptions.Window %s must not be negative", o.Window)
	}
	return nil
}

// NewSharedHub returns a hub that also relays events between the instances
// sharing opts.Store. Start it before publishing; Stop ends the relay.
func NewSharedHub(opts HubOptions) (*Hub, error) {
	if opts.Window == 0 {
		opts.Window = 5 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	h := NewHub()
	h.relay = &relay{opts: opts, hub: h, pending: map[uuid.UUID][]wireEvent{}, remote: map[uuid.UUID]*remoteSub{}, wake: make(chan struct{}, 1)}
	return h, nil
}

// Start runs the relay of a shared hub until Stop (a no-op for a local hub).
func (h *Hub) Start(ctx context.Context) error {
	if h.relay == nil {
		return nil
	}
	return h.relay.start(ctx)
}

// Stop sends what the relay holds and ends it, and every remote
// subscription (a no-op for a local hub).
func (h *Hub) Stop(ctx context.Context) error {
	if h.relay == nil {
		return nil
	}
	return h.relay.stop(ctx)
}

// Subscribe returns a channel of events for conv (uuid.Nil for all) and a
// function that ends the subscription and closes the channel. On a shared
// hub a subscription to one conversation also receives the events of its
// turns on other instances.
func (h *Hub) Subscribe(conv uuid.UUID, buffer int) (<-chan Event, func()) {
	if buffer <= 0 {
		buffer = 256
	}
	s := &subscription{conv: conv, ch: make(chan Event, buffer)}
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	release := func() {}
	if h.relay != nil && conv != uuid.Nil {
		release = h.relay.follow(conv)
	}
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			release()
			h.mu.Lock()
			delete(h.subs, s)
			h.mu.Unlock()
			close(s.ch)
		})
	}
}

// Publish delivers ev to matching subscribers without blocking, and on a
// shared hub queues it for the other instances.
func (h *Hub) Publish(ev Event) {
	h.publishLocal(ev)
	if h.relay != nil {
		h.relay.add(ev)
	}
}

func (h *Hub) publishLocal(ev Event) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for s := range h.subs {
		if s.conv != uuid.Nil && s.conv != ev.ConversationID {
			continue
		}
		select {
		case s.ch <- ev:
		default:
		}
	}
}

// publishFollowed delivers another instance's event to the subscribers of
// its conversation only: a subscriber of every conversation follows the
// turns run here.
func (h *Hub) publishFollowed(ev Event) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for s := range h.subs {
		if s.conv != ev.ConversationID {
			continue
		}
		select {
		case s.ch <- ev:
		default:
		}
	}
}

// ---- the relay between instances ----

// wireEvent is an Event in a relayed batch: short keys, since a
// notification carries a few kilobytes at most.
type wireEvent struct {
	Kind  EventKind  `json:"k"`
	Text  string     `json:"t,omitempty"`
	Agent string     `json:"a,omitempty"`
	Entry *uuid.UUID `json:"e,omitempty"` // read from the log on arrival
}

// wireBatch is one notification: events of one conversation, in order.
type wireBatch struct {
	From   string      `json:"i"`
	Events []wireEvent `json:"v"`
}

type relay struct {
	opts HubOptions
	hub  *Hub

	mu      sync.Mutex
	pending map[uuid.UUID][]wireEvent
	order   []uuid.UUID // conversations in the order their first event came
	remote  map[uuid.UUID]*remoteSub
	ctx     context.Context // the relay's life; nil before start
	cancel  context.CancelFunc
	wake    chan struct{}
	done    chan struct{}
}

type remoteSub struct {
	refs   int
	cancel context.CancelFunc
}

func (r *relay) start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx != nil {
		return errors.New("hub: started twice")
	}
	r.ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	r.done = make(chan struct{})
	go r.run()
	return nil
}

func (r *relay) stop(ctx context.Context) error {
	r.mu.Lock()
	cancel, done := r.cancel, r.done
	r.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stopping the hub's relay: %w", context.Cause(ctx))
	}
}

func (r *relay) add(ev Event) {
	w := wireEvent{Kind: ev.Kind, Text: ev.Text, Agent: ev.Agent}
	if ev.Entry != nil {
		id := ev.Entry.ID
		w.Entry = &id
	}
	r.mu.Lock()
	if r.ctx == nil || r.ctx.Err() != nil {
		r.mu.Unlock()
		return
	}
	if _, ok := r.pending[ev.ConversationID]; !ok {
		r.order = append(r.order, ev.ConversationID)
	}
	r.pending[ev.ConversationID] = append(r.pending[ev.ConversationID], w)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *relay) run() {
	defer close(r.done)
	timer := time.NewTimer(0)
	if !timer.Stop() {
		<-timer.C
	}
	for {
		select {
		case <-r.ctx.Done():
			r.flush(context.Background())
			return
		case <-r.wake:
		}
		timer.Reset(r.opts.Window)
		select {
		case <-timer.C:
		case <-r.ctx.Done():
			timer.Stop()
		}
		r.flush(r.ctx)
	}
}

// flush publishes what gathered: per conversation, as few notifications as
// fit the payload bound, events in order.
func (r *relay) flush(ctx context.Context) {
	r.mu.Lock()
	pending, order := r.pending, r.order
	r.pending, r.order = map[uuid.UUID][]wireEvent{}, nil
	r.mu.Unlock()
	for _, conv := range order {
		for _, payload := range r.encode(pending[conv]) {
			if err := r.opts.Store.Publish(ctx, store.LiveTopic(conv), payload); err != nil {
				r.opts.Logger.WarnContext(ctx, "relaying live events to other instances; their viewers catch up from the log",
					"conversation_id", conv, "error", err)
			}
		}
	}
}

// encode packs events into payloads under store.MaxPublishPayload,
// splitting a delta too long for one.
func (r *relay) encode(events []wireEvent) []string {
	const room = store.MaxPublishPayload - 200 // the batch's own keys and the id
	var out []string
	var cur []wireEvent
	size := 0
	emit := func() {
		if len(cur) == 0 {
			return
		}
		b, _ := json.Marshal(wireBatch{From: r.opts.Instance, Events: cur})
		out = append(out, string(b))
		cur, size = nil, 0
	}
	for _, ev := range events {
		for {
			piece := ev
			b, _ := json.Marshal(piece)
			if len(b) > room {
				// A long delta goes in parts, cut on a rune boundary under
				// the room left (JSON escaping at most sextuples a byte).
				n := room / 6
				for n > 0 && !utf8.RuneStart(ev.Text[n]) {
					n--
				}
				piece.Text, ev.Text = ev.Text[:n], ev.Text[n:]
				b, _ = json.Marshal(piece)
			} else {
				ev.Text = ""
			}
			if size+len(b) > room {
				emit()
			}
			cur = append(cur, piece)
			size += len(b) + 1
			if ev.Text == "" {
				break
			}
		}
	}
	emit()
	return out
}

// follow listens to conv's topic while someone here subscribes to it.
func (r *relay) follow(conv uuid.UUID) (release func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx == nil || r.ctx.Err() != nil {
		return func() {}
	}
	rs := r.remote[conv]
	if rs == nil {
		ctx, cancel := context.WithCancel(r.ctx)
		rs = &remoteSub{cancel: cancel}
		r.remote[conv] = rs
		ch, err := r.opts.Store.Subscribe(ctx, store.LiveTopic(conv))
		if err != nil {
			r.opts.Logger.WarnContext(ctx, "following a conversation's live events from other instances", "conversation_id", conv, "error", err)
		} else {
			go r.receive(ctx, conv, ch)
		}
	}
	rs.refs++
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if rs.refs--; rs.refs == 0 {
				rs.cancel()
				if r.remote[conv] == rs {
					delete(r.remote, conv)
				}
			}
		})
	}
}

// receive replays another instance's events of conv to the subscribers here.
func (r *relay) receive(ctx context.Context, conv uuid.UUID, ch <-chan store.Notification) {
	for n := range ch {
		if n.Payload == "" {
			continue // a reconnect: subscribers re-read the log on their own
		}
		var batch wireBatch
		if err := json.Unmarshal([]byte(n.Payload), &batch); err != nil {
			r.opts.Logger.WarnContext(ctx, "a relayed live event does not decode", "conversation_id", conv, "error", err)
			continue
		}
		if batch.From == r.opts.Instance {
			continue // published here already
		}
		for _, w := range batch.Events {
			ev := Event{ConversationID: conv, Kind: w.Kind, Text: w.Text, Agent: w.Agent}
			if w.Entry != nil {
				e, err := r.opts.Store.EntryGet(ctx, *w.Entry)
				if err != nil {
					// The subscriber reads the log on the next wake-up.
					r.opts.Logger.WarnContext(ctx, "reading a relayed entry", "entry_id", *w.Entry, "error", err)
					continue
				}
				ev.Entry = e
			}
			r.hub.publishFollowed(ev)
		}
	}
}
