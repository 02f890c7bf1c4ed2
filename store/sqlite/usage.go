package sqlite

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// The usage report.

func (q *queries) UsageSummary(ctx context.Context, p *store.UsageSummaryParams) ([]*store.UsageTotal, error) {
	rows, err := q.read().UsageSummary(ctx, dbsqlc.UsageSummaryParams{
		GroupBy: string(p.By), Since: micros(p.Since), MaxRows: int64(p.Limit),
	})
	out, err := all(rows, err, func(r dbsqlc.UsageSummaryRow) *store.UsageTotal {
		t := store.UsageTotal(r)
		return &t
	})
	if err != nil {
		return nil, wrap(err, "summing usage by %s", p.By)
	}
	return out, nil
}
