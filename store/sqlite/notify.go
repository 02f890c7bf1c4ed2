package sqlite

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/switchboardhq/switchboard/store"
)

// subscriptionBuffer is how many wake-ups a subscriber may fall behind before
// it starts losing them. A wake-up carries no data, so losing some is safe:
// a listener re-reads past its cursor anyway.
const subscriptionBuffer = 64

var errClosed = errors.New("sqlite store: closed")

// hub fans notifications out to in-process subscribers. With one writer
// process there is nobody else to tell, so no database round trip is needed.
type hub struct {
	logger *slog.Logger

	mu     sync.Mutex
	closed bool
	subs   map[string]map[*subscription]struct{}
}

type subscription struct {
	ch   chan store.Notification
	stop func() bool // unregisters the context.AfterFunc
}

func newHub(logger *slog.Logger) *hub {
	return &hub{logger: logger, subs: map[string]map[*subscription]struct{}{}}
}

func (h *hub) subscribe(ctx context.Context, topic string) (<-chan store.Notification, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errClosed
	}
	sub := &subscription{ch: make(chan store.Notification, subscriptionBuffer)}
	if h.subs[topic] == nil {
		h.subs[topic] = map[*subscription]struct{}{}
	}
	h.subs[topic][sub] = struct{}{}
	// AfterFunc rather than a goroutine per subscriber: nothing runs until
	// ctx ends, and Close can cancel it, so nothing leaks.
	sub.stop = context.AfterFunc(ctx, func() { h.remove(topic, sub) })
	return sub.ch, nil
}

func (h *hub) remove(topic string, sub *subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[topic][sub]; !ok {
		return // already removed by close
	}
	delete(h.subs[topic], sub)
	if len(h.subs[topic]) == 0 {
		delete(h.subs, topic)
	}
	close(sub.ch)
}

// publish never blocks: a full subscriber loses the wake-up. Sends happen
// under the lock so that remove cannot close a channel mid-send.
func (h *hub) publish(ctx context.Context, ns []store.Notification) {
	if len(ns) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range ns {
		for sub := range h.subs[n.Topic] {
			select {
			case sub.ch <- n:
			default:
				h.logger.DebugContext(ctx, "dropped notification for a slow subscriber",
					slog.String("topic", n.Topic), slog.String("payload", n.Payload))
			}
		}
	}
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	for topic, subs := range h.subs {
		for sub := range subs {
			sub.stop()
			close(sub.ch)
		}
		delete(h.subs, topic)
	}
}
