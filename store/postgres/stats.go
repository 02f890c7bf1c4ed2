package postgres

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// Monitoring counts.

func (q *queries) WorkCount(ctx context.Context) ([]*store.WorkDepth, error) {
	rows, err := call(ctx, q, func(db *dbsqlc.Queries, ctx context.Context, _ struct{}) ([]dbsqlc.WorkCountRow, error) {
		return db.WorkCount(ctx)
	}, struct{}{})
	if err != nil {
		return nil, wrap(err, "counting work by kind and state")
	}
	return each(rows, func(r *dbsqlc.WorkCountRow) *store.WorkDepth {
		return &store.WorkDepth{Kind: r.Kind, State: store.WorkState(r.State), Count: r.Count}
	}), nil
}

func (q *queries) ApprovalCount(ctx context.Context, p *store.ApprovalCountParams) (int64, error) {
	n, err := call(ctx, q, (*dbsqlc.Queries).ApprovalCount, ts(p.Now))
	return n, wrap(err, "counting pending approvals")
}
