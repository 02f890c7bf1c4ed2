package store

import (
	"context"
	"sort"
)

func (q checked) WorkCount(ctx context.Context) ([]*WorkDepth, error) {
	rows, err := q.Queries.WorkCount(ctx)
	if err != nil {
		return nil, err
	}
	// One order whatever the driver's GROUP BY produced, so a scrape's
	// series come out stable.
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Kind != rows[j].Kind {
			return rows[i].Kind < rows[j].Kind
		}
		return rows[i].State < rows[j].State
	})
	return rows, nil
}

func (q checked) ApprovalCount(ctx context.Context, p *ApprovalCountParams) (int64, error) {
	if p == nil || p.Now.IsZero() {
		return 0, invalidf("counting pending approvals: Now is required")
	}
	return q.Queries.ApprovalCount(ctx, p)
}
