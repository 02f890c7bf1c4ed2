package store

import (
	"context"
	"errors"
	"sync"
)

// group is the group commit behind Store.InTxGroup: concurrent calls share
// one transaction and one commit (one fsync), the way a database's own
// group commit shares a log flush. There is no timer: calls that arrive
// while a batch is committing wait for it and form the next batch, so a
// lone call runs at once and a burst runs in a few large transactions.
//
// A member whose function fails does not take the others down: the batch is
// rolled back, the failed member gets its error, and the rest run again,
// without it, in a new transaction. Each function may therefore run more
// than once before its one commit, as an InTx function may after a
// transient fault; none of its writes outlives a rolled-back run.
type group struct {
	inTx func(ctx context.Context, fn func(q Queries) error) error
	// behind makes the batches' transactions group commits that are not
	// ahead of other writers (GroupAhead false): the group of InTxGroup
	// calls made under GroupBehind.
	behind bool
	batches[*groupCall]
}

// batches is the leadership both groups share: a call joins the pending
// ones, and runs a batch itself when fewer than lanes batches are running.
// There is no timer: calls that arrive while batches run wait for one to
// end and form the next, so a lone call runs at once and a burst runs in a
// few large batches.
type batches[C any] struct {
	max int
	// lanes is how many batches may commit at once (at least 1). One is
	// right for a store with one writer; a server database with round trips
	// to wait on lets a burst spread over a few connections.
	lanes int
	run   func(batch []C)

	mu      sync.Mutex
	pending []C
	running int // batches committing
}

// add queues c and runs batches until none is waiting when it leads.
func (b *batches[C]) add(c C) {
	b.mu.Lock()
	b.pending = append(b.pending, c)
	lead := b.running < b.lanes
	if lead {
		b.running++
	}
	b.mu.Unlock()
	if lead {
		b.lead()
	}
}

// lead runs one batch, then hands the leadership to a new goroutine when
// more calls are waiting, so no caller keeps committing for others. With
// several lanes, a batch takes its share of the calls waiting and free
// lanes start on the rest.
func (b *batches[C]) lead() {
	b.mu.Lock()
	n := min((len(b.pending)+b.lanes-1)/b.lanes, b.max)
	batch := b.pending[:n:n]
	b.pending = b.pending[n:]
	for b.running < b.lanes && len(b.pending) > 0 {
		b.running++
		go b.lead()
	}
	b.mu.Unlock()

	b.run(batch)

	b.mu.Lock()
	more := len(b.pending) > 0
	if !more {
		b.running--
	}
	b.mu.Unlock()
	if more {
		go b.lead()
	}
}

type groupCall struct {
	ctx  context.Context
	fn   func(q Queries) error
	err  error
	done chan struct{}
}

func (c *groupCall) context() context.Context { return c.ctx }
func (c *groupCall) answer(err error)         { c.err = err; close(c.done) }

// member is a call of either group.
type member interface {
	context() context.Context
	answer(err error)
}

// waiting returns the calls of batch whose callers still wait; the others
// are answered with their context's cause, nothing of them written.
func waiting[C member](batch []C) []C {
	live := batch[:0:0]
	for _, c := range batch {
		if ctx := c.context(); ctx.Err() != nil {
			c.answer(context.Cause(ctx))
			continue
		}
		live = append(live, c)
	}
	return live
}

// errMemberFailed aborts a batch's transaction when one member failed.
var errMemberFailed = errors.New("a member of the group commit failed")

func newGroup(inTx func(ctx context.Context, fn func(q Queries) error) error, most, lanes int, behind bool) *group {
	g := &group{inTx: inTx, behind: behind}
	g.batches = batches[*groupCall]{max: most, lanes: max(lanes, 1), run: g.run}
	return g
}

func (g *group) do(ctx context.Context, fn func(q Queries) error) error {
	c := &groupCall{ctx: ctx, fn: fn, done: make(chan struct{})}
	g.add(c)
	<-c.done
	return c.err
}

// run commits batch, taking out members that fail until the rest commit.
func (g *group) run(batch []*groupCall) {
	for len(batch) > 0 {
		live := waiting(batch)
		if len(live) == 0 {
			return
		}
		var failed *groupCall
		var failedErr error
		// The transaction is the batch's, not one caller's: a caller that
		// goes away does not cut the others off.
		txCtx := context.WithValue(context.WithoutCancel(live[0].ctx), groupCommitKey{}, true)
		if !g.behind {
			txCtx = context.WithValue(txCtx, groupAheadKey{}, true)
		}
		err := g.inTx(txCtx, func(q Queries) error {
			failed, failedErr = nil, nil
			for _, c := range live {
				if err := c.fn(q); err != nil {
					if IsTransient(err) {
						// The database's fault, not the member's: the
						// driver runs the whole batch again.
						return err
					}
					failed, failedErr = c, err
					return errMemberFailed
				}
			}
			return nil
		})
		switch {
		case err == nil:
			for _, c := range live {
				c.answer(nil)
			}
			return
		case failed != nil && errors.Is(err, errMemberFailed):
			failed.answer(failedErr)
			rest := live[:0:0]
			for _, c := range live {
				if c != failed {
					rest = append(rest, c)
				}
			}
			batch = rest
		default:
			// The transaction itself failed (after the driver's retries), or
			// its outcome is unknown: every member shares that answer.
			for _, c := range live {
				c.answer(err)
			}
			return
		}
	}
}

type (
	groupCommitKey struct{}
	groupAheadKey  struct{}
	groupBehindKey struct{}
)

// GroupCommit reports whether ctx is the context of a group commit's
// transaction (InTxGroup): its members end at their first failed write, so
// a driver takes no savepoint per write.
func GroupCommit(ctx context.Context) bool {
	v, _ := ctx.Value(groupCommitKey{}).(bool)
	return v
}

// GroupAhead reports whether ctx is the context of a group commit that
// acknowledgements of inbound events wait on (InTxGroup, not under
// GroupBehind): a driver whose writers queue in the process (SQLite's one
// writer) lets it ahead of the other writers waiting, and Postgres runs it
// on connections of its own.
func GroupAhead(ctx context.Context) bool {
	v, _ := ctx.Value(groupAheadKey{}).(bool)
	return v
}

// GroupBehind marks ctx so that its InTxGroup calls are grouped with each
// other, apart from and behind the acknowledgements: for a worker that
// finishes events acknowledged earlier (core's inbound items), whose dozen
// writes per event would otherwise share, and slow, the acks' batches.
func GroupBehind(ctx context.Context) context.Context {
	return context.WithValue(ctx, groupBehindKey{}, true)
}

func groupBehind(ctx context.Context) bool {
	v, _ := ctx.Value(groupBehindKey{}).(bool)
	return v
}
