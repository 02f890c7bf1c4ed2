package sqlite

import (
	"context"
	"slices"
	"sync"
)

// writeGate orders the write transactions of this process on the one
// writer connection: first come, first served, except that a group commit
// that acknowledgements wait on (store.GroupAhead: not the workers' own
// group commits under store.GroupBehind) goes ahead
// of the other writers waiting. Without it they would queue on the
// connection pool, which hands a freed connection to a random waiter: under
// a burst, an acknowledgement could wait behind dozens of the workers'
// transactions.
//
// A group commit is one transaction per batch of inbound events, so the
// other writers still get the connection between two batches.
type writeGate struct {
	mu     sync.Mutex
	busy   bool
	urgent []chan struct{} // group commits waiting, oldest first
	normal []chan struct{} // other writers waiting, oldest first
}

// acquire waits for the writer; the caller releases it.
func (g *writeGate) acquire(ctx context.Context, urgent bool) error {
	g.mu.Lock()
	if !g.busy {
		g.busy = true
		g.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	if urgent {
		g.urgent = append(g.urgent, ch)
	} else {
		g.normal = append(g.normal, ch)
	}
	g.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		select {
		case <-ch:
			// Handed the writer as the context ended: pass it on.
			g.handOff()
		default:
			g.urgent = slices.DeleteFunc(g.urgent, func(c chan struct{}) bool { return c == ch })
			g.normal = slices.DeleteFunc(g.normal, func(c chan struct{}) bool { return c == ch })
		}
		return context.Cause(ctx)
	}
}

// release hands the writer to the next waiter, group commits first.
func (g *writeGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.handOff()
}

func (g *writeGate) handOff() {
	var next chan struct{}
	switch {
	case len(g.urgent) > 0:
		next, g.urgent = g.urgent[0], g.urgent[1:]
	case len(g.normal) > 0:
		next, g.normal = g.normal[0], g.normal[1:]
	default:
		g.busy = false
		return
	}
	close(next)
}
