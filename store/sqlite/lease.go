package sqlite

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// Named leases, such as the scheduler's leadership. (A conversation's lease
// is in conversation.go, taken with its work item in work.go.)

func (q *queries) LeaseAcquire(ctx context.Context, p *store.NamedLeaseParams) (bool, error) {
	n, err := write(ctx, q, func(t *queries) (int64, error) {
		return t.tx.LeaseAcquire(ctx, dbsqlc.LeaseAcquireParams{Name: p.Name, Owner: p.Owner, ExpiresAt: micros(p.Now.Add(p.TTL)), Now: micros(p.Now)})
	})
	if err != nil {
		return false, wrap(err, "acquiring lease %q for %s", p.Name, p.Owner)
	}
	return n > 0, nil
}

func (q *queries) LeaseRelease(ctx context.Context, p *store.NamedLeaseParams) error {
	_, err := write(ctx, q, func(t *queries) (struct{}, error) {
		return struct{}{}, t.tx.LeaseRelease(ctx, dbsqlc.LeaseReleaseParams{Name: p.Name, Owner: p.Owner})
	})
	if err != nil {
		return wrap(err, "releasing lease %q for %s", p.Name, p.Owner)
	}
	return nil
}

func (q *queries) LeasePrune(ctx context.Context, p *store.PruneParams) (int, error) {
	n, err := write(ctx, q, func(t *queries) (int64, error) {
		return t.tx.LeasePrune(ctx, dbsqlc.LeasePruneParams{Before: micros(p.Before), Limit: int64(p.Limit)})
	})
	if err != nil {
		return 0, wrap(err, "pruning named leases expired before %s", p.Before)
	}
	return int(n), nil
}
