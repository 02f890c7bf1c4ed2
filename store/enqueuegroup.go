package store

import (
	"context"
	"errors"
)

// enqueueGroup is the group commit behind Store.EnqueueGroup: the calls
// running at once are enqueued by one WorkEnqueueMany, outside any
// transaction, so a burst of acknowledged events costs one statement and
// one commit a batch, where InTxGroup's transaction cost four round trips
// and a statement an event. A batch that fails other than transiently is
// enqueued again one call at a time, so one bad call fails alone.
type enqueueGroup struct {
	many func(ctx context.Context, ps []*WorkEnqueueParams) ([]*WorkEnqueueResult, error)
	batches[*enqueueCall]
}

type enqueueCall struct {
	ctx  context.Context
	p    *WorkEnqueueParams
	res  *WorkEnqueueResult
	err  error
	done chan struct{}
}

func (c *enqueueCall) context() context.Context { return c.ctx }
func (c *enqueueCall) answer(err error)         { c.err = err; close(c.done) }

func newEnqueueGroup(many func(ctx context.Context, ps []*WorkEnqueueParams) ([]*WorkEnqueueResult, error), most, lanes int) *enqueueGroup {
	g := &enqueueGroup{many: many}
	g.batches = batches[*enqueueCall]{max: most, lanes: max(lanes, 1), run: g.run}
	return g
}

func (g *enqueueGroup) do(ctx context.Context, p *WorkEnqueueParams) (*WorkEnqueueResult, error) {
	if p == nil || p.UniqueKey == nil {
		// Outside a transaction only a keyed insert is safe to send again
		// after a lost answer.
		return nil, invalidf("EnqueueGroup: the item needs a UniqueKey")
	}
	c := &enqueueCall{ctx: ctx, p: p, done: make(chan struct{})}
	g.add(c)
	<-c.done
	return c.res, c.err
}

func (g *enqueueGroup) run(batch []*enqueueCall) {
	live := waiting(batch)
	if len(live) == 0 {
		return
	}
	// The batch's, not one caller's: a caller that goes away does not cut
	// the others off. Ahead of the other writers, as InTxGroup's.
	ctx := context.WithValue(context.WithoutCancel(live[0].ctx), groupAheadKey{}, true)
	ps := make([]*WorkEnqueueParams, len(live))
	for i, c := range live {
		ps[i] = c.p
	}
	res, err := g.many(ctx, ps)
	if err == nil && len(res) != len(live) {
		err = errors.New("enqueueing a group: the store answered for a different number of items")
	}
	if err != nil && len(live) > 1 && !IsTransient(err) && !errors.Is(err, ErrOutcomeUnknown) {
		// One call's fault, perhaps: each on its own.
		for _, c := range live {
			g.run([]*enqueueCall{c})
		}
		return
	}
	for i, c := range live {
		if err == nil {
			c.res = res[i]
		}
		c.answer(err)
	}
}
