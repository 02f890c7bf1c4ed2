package core

import (
	"sync"

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
// exist only for live viewers on the instance running the turn. Entries are
// stored before they are published.
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
type Hub struct {
	mu   sync.RWMutex
	subs map[*subscription]struct{}
}

type subscription struct {
	conv uuid.UUID // uuid.Nil: every conversation
	ch   chan Event
}

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{subs: map[*subscription]struct{}{}} }

// Subscribe returns a channel of events for conv (uuid.Nil for all) and a
// function that ends the subscription and closes the channel.
func (h *Hub) Subscribe(conv uuid.UUID, buffer int) (<-chan Event, func()) {
	if buffer <= 0 {
		buffer = 256
	}
	s := &subscription{conv: conv, ch: make(chan Event, buffer)}
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			h.mu.Lock()
			delete(h.subs, s)
			h.mu.Unlock()
			close(s.ch)
		})
	}
}

// Publish delivers ev to matching subscribers without blocking.
func (h *Hub) Publish(ev Event) {
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
