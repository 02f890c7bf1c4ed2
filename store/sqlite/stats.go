package sqlite

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// Monitoring counts.

func (q *queries) WorkCount(ctx context.Context) ([]*store.WorkDepth, error) {
	rows, err := q.read().WorkCount(ctx)
	out, err := all(rows, err, func(r dbsqlc.WorkCountRow) *store.WorkDepth {
		return &store.WorkDepth{Kind: r.Kind, State: store.WorkState(r.State), Count: r.Count}
	})
	if err != nil {
		return nil, wrap(err, "counting work by kind and state")
	}
	return out, nil
}

func (q *queries) ApprovalCount(ctx context.Context, p *store.ApprovalCountParams) (int64, error) {
	n, err := q.read().ApprovalCount(ctx, micros(p.Now))
	if err != nil {
		return 0, wrap(err, "counting pending approvals")
	}
	return n, nil
}
