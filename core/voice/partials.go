package voice

import "sync"

// partialQueue hands a live stream's partial transcripts to its reader
// (Stream.Partials) without ever blocking the stream: a reader that has not
// taken the previous partial gets the newer one instead, as only the
// newest matters. Both backends' streams embed it.
type partialQueue struct {
	mu       sync.Mutex // serialises sends with closing
	closed   bool
	partials chan Transcript
}

func newPartialQueue() *partialQueue {
	return &partialQueue{partials: make(chan Transcript, 1)}
}

// Partials is Stream.Partials.
func (q *partialQueue) Partials() <-chan Transcript { return q.partials }

// publish offers t, replacing a partial not yet taken.
func (q *partialQueue) publish(t Transcript) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	select {
	case q.partials <- t:
	default:
		select {
		case <-q.partials:
		default:
		}
		select {
		case q.partials <- t:
		default:
		}
	}
}

// closePartials ends Partials, once.
func (q *partialQueue) closePartials() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		close(q.partials)
	}
}
