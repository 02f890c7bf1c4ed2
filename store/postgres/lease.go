package postgres

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// Named leases, such as the scheduler's leadership.

func (q *queries) LeaseAcquire(ctx context.Context, p *store.NamedLeaseParams) (bool, error) {
	now := ts(p.Now)
	n, err := call(ctx, q, (*dbsqlc.Queries).LeaseAcquire, &dbsqlc.LeaseAcquireParams{
		Name: p.Name, Owner: p.Owner, ExpiresAt: ts(now.Add(p.TTL)), Now: now,
	})
	return n == 1, wrap(err, "acquiring lease %s", p.Name)
}

func (q *queries) LeaseRelease(ctx context.Context, p *store.NamedLeaseParams) error {
	err := exec(ctx, q, (*dbsqlc.Queries).LeaseRelease, &dbsqlc.LeaseReleaseParams{Name: p.Name, Owner: p.Owner})
	return wrap(err, "releasing lease %s", p.Name)
}

func (q *queries) LeasePrune(ctx context.Context, p *store.PruneParams) (int, error) {
	n, err := call(ctx, q, (*dbsqlc.Queries).LeasePrune, &dbsqlc.LeasePruneParams{Before: ts(p.Before), MaxRows: int32(p.Limit)})
	return int(n), wrap(err, "pruning named leases expired before %s", p.Before)
}
