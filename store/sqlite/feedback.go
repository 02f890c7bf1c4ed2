package sqlite

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// Ratings of replies counted, and bindings moved to a fork.

func (q *queries) FeedbackSummary(ctx context.Context, p *store.FeedbackSummaryParams) ([]*store.FeedbackTotal, error) {
	rows, err := q.read().FeedbackSummary(ctx, dbsqlc.FeedbackSummaryParams{
		GroupBy: string(p.By), Since: micros(p.Since), MaxRows: int64(p.Limit),
	})
	out, err := all(rows, err, func(r dbsqlc.FeedbackSummaryRow) *store.FeedbackTotal {
		t := store.FeedbackTotal(r)
		return &t
	})
	if err != nil {
		return nil, wrap(err, "counting feedback by %s", p.By)
	}
	return out, nil
}

func (q *queries) BindingMove(ctx context.Context, p *store.BindingMoveParams) (*store.Binding, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Binding, error) {
		return t.tx.BindingMove(ctx, dbsqlc.BindingMoveParams{
			ID: p.ID, ConversationID: p.ConversationID, DeliveredSeq: p.DeliveredSeq, Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "moving binding %s to conversation %s", p.ID, p.ConversationID)
	}
	return binding(r), nil
}

func (q *queries) BindingRelocate(ctx context.Context, p *store.BindingRelocateParams) (*store.Binding, error) {
	channel, thread := p.Place.Columns()
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Binding, error) {
		return t.tx.BindingRelocate(ctx, dbsqlc.BindingRelocateParams{ID: p.ID, Channel: channel, Thread: thread, Now: micros(p.Now)})
	})
	if err != nil {
		return nil, wrap(err, "relocating binding %s to %s", p.ID, p.Place)
	}
	return binding(r), nil
}
