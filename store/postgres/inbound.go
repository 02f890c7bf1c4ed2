package postgres

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// Platform event ids already seen, so that a redelivered event is handled
// once.

func (q *queries) InboundRecord(ctx context.Context, p *store.InboundRecordParams) (bool, error) {
	n, err := call(ctx, q, (*dbsqlc.Queries).InboundRecord, &dbsqlc.InboundRecordParams{
		Platform: p.Platform, EventID: p.EventID, Now: ts(p.Now),
	})
	return n == 1, wrap(err, "recording inbound event %s/%s", p.Platform, p.EventID)
}

func (q *queries) InboundPrune(ctx context.Context, p *store.PruneParams) (int, error) {
	n, err := call(ctx, q, (*dbsqlc.Queries).InboundPrune, &dbsqlc.InboundPruneParams{Before: ts(p.Before), MaxRows: int32(p.Limit)})
	return int(n), wrap(err, "pruning inbound event ids seen before %s", p.Before)
}
