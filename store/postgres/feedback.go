package postgres

import (
	"context"
	"time"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// Ratings of replies counted, and bindings moved to a fork.

func (q *queries) FeedbackSummary(ctx context.Context, p *store.FeedbackSummaryParams) ([]*store.FeedbackTotal, error) {
	var since *time.Time
	if !p.Since.IsZero() {
		since = tsPtr(&p.Since)
	}
	rows, err := call(ctx, q, (*dbsqlc.Queries).FeedbackSummary, &dbsqlc.FeedbackSummaryParams{
		GroupBy: string(p.By), Since: since, MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "counting feedback by %s", p.By)
	}
	return each(rows, func(r *dbsqlc.FeedbackSummaryRow) *store.FeedbackTotal {
		t := store.FeedbackTotal(*r)
		return &t
	}), nil
}

func (q *queries) BindingMove(ctx context.Context, p *store.BindingMoveParams) (*store.Binding, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).BindingMove, &dbsqlc.BindingMoveParams{
		ID: p.ID, ConversationID: p.ConversationID, DeliveredSeq: p.DeliveredSeq, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "moving binding %s to conversation %s", p.ID, p.ConversationID)
	}
	return binding(&row), nil
}

func (q *queries) BindingRelocate(ctx context.Context, p *store.BindingRelocateParams) (*store.Binding, error) {
	channel, thread := p.Place.Columns()
	row, err := call(ctx, q, (*dbsqlc.Queries).BindingRelocate, &dbsqlc.BindingRelocateParams{
		ID: p.ID, Channel: channel, Thread: thread, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "relocating binding %s to %s", p.ID, p.Place)
	}
	return binding(&row), nil
}
