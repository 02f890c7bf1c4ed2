package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// completer batches the completions of one worker, on the model of River's
// batch completer: a finished item waits at most Window for others, then
// all that are waiting are marked done with one WorkCompleteMany, one round
// trip and one commit, instead of a commit each. While a flush is in flight
// the next batch gathers behind it, so batches grow with the load and a
// lone completion waits only Window.
//
// A caller of complete is answered only once the flush that holds its item
// committed: nil, store.ErrLeaseLost when its lease was lost meanwhile (the
// item was not completed), or the flush's error. The item stays running,
// and its conversation held, until that answer, so nothing observable
// changes against completing one at a time; only its slot may go to the
// next item meanwhile (Worker.run's handOn, as River's executor frees a
// slot once the completion is queued).
type completer struct {
	st       store.Store
	worker   string
	window   time.Duration
	maxBatch int
	now      func() time.Time

	mu      sync.Mutex
	pending []completion
	wake    chan struct{} // capacity 1: "there is something pending"
	stop    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

type completion struct {
	id   uuid.UUID
	done chan error // buffered: the flusher never blocks on a caller
}

// errCompleterStopped answers a completion that arrives after stop.
var errCompleterStopped = errors.New("completer stopped")

func newCompleter(st store.Store, worker string, window time.Duration, maxBatch int, now func() time.Time) *completer {
	c := &completer{
		st: st, worker: worker, window: window, maxBatch: maxBatch, now: now,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{}),
	}
	go c.run()
	return c
}

// complete marks id done and returns once that committed (see completer).
func (c *completer) complete(ctx context.Context, id uuid.UUID) error {
	done := make(chan error, 1)
	c.mu.Lock()
	select {
	case <-c.stop:
		c.mu.Unlock()
		return errCompleterStopped
	default:
	}
	c.pending = append(c.pending, completion{id: id, done: done})
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		// The flush may still complete it; the caller stops waiting.
		return fmt.Errorf("waiting for the completion of work %s: %w", id, context.Cause(ctx))
	}
}

func (c *completer) run() {
	defer close(c.stopped)
	timer := time.NewTimer(0)
	if !timer.Stop() {
		<-timer.C
	}
	for {
		select {
		case <-c.stop:
			c.flush()
			return
		case <-c.wake:
		}
		if c.window > 0 && c.size() < c.maxBatch {
			timer.Reset(c.window)
			select {
			case <-timer.C:
			case <-c.stop:
				timer.Stop()
			}
		}
		c.flush()
	}
}

func (c *completer) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// flush completes everything pending, maxBatch at a time.
func (c *completer) flush() {
	c.mu.Lock()
	batch := c.pending
	c.pending = nil
	c.mu.Unlock()
	for len(batch) > 0 {
		n := min(len(batch), c.maxBatch)
		c.flushOne(batch[:n])
		batch = batch[n:]
	}
}

func (c *completer) flushOne(batch []completion) {
	ids := make([]uuid.UUID, len(batch))
	for i, x := range batch {
		ids[i] = x.id
	}
	// Its own context: callers that stopped waiting must not cut the flush
	// off for the others. The store retries transient faults within it.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done, err := c.st.WorkCompleteMany(ctx, &store.WorkCompleteManyParams{IDs: ids, Worker: c.worker, Now: c.now()})
	ok := make(map[uuid.UUID]bool, len(done))
	for _, it := range done {
		ok[it.ID] = true
	}
	for _, x := range batch {
		switch {
		case err != nil:
			x.done <- err
		case ok[x.id]:
			x.done <- nil
		default:
			x.done <- fmt.Errorf("completing work %s: %w", x.id, store.ErrLeaseLost)
		}
	}
}

// close flushes what is pending and stops; later completions are refused.
func (c *completer) close() {
	c.mu.Lock()
	c.once.Do(func() { close(c.stop) })
	c.mu.Unlock()
	<-c.stopped
}
