package sqlite

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// Instance leases: one live process per instance id.

func instanceLease(r dbsqlc.InstanceLease) *store.InstanceLease {
	return &store.InstanceLease{
		InstanceID: r.InstanceID, Holder: r.Holder, Host: r.Host, PID: int(r.Pid), Process: r.Process,
		StartedAt: fromMicros(r.StartedAt), HeartbeatAt: fromMicros(r.HeartbeatAt), ExpiresAt: fromMicros(r.ExpiresAt),
	}
}

func (q *queries) InstanceLeaseAcquire(ctx context.Context, p *store.InstanceLeaseAcquireParams) (*store.InstanceLease, error) {
	rs, err := write(ctx, q, func(t *queries) ([]dbsqlc.InstanceLease, error) {
		rs, err := t.tx.InstanceLeaseAcquire(ctx, dbsqlc.InstanceLeaseAcquireParams{
			InstanceID: p.InstanceID, Holder: p.Holder, Host: p.Host, Pid: int64(p.PID), Process: p.Process,
			StartedAt: micros(p.StartedAt), Now: micros(p.Now), ExpiresAt: micros(p.Now.Add(p.TTL)),
		})
		if err != nil || len(rs) > 0 || p.TakeOver == "" {
			return rs, err
		}
		return t.tx.InstanceLeaseTakeOver(ctx, dbsqlc.InstanceLeaseTakeOverParams{
			InstanceID: p.InstanceID, Holder: p.Holder, Host: p.Host, Pid: int64(p.PID), Process: p.Process,
			StartedAt: micros(p.StartedAt), Now: micros(p.Now), ExpiresAt: micros(p.Now.Add(p.TTL)), TakeOver: p.TakeOver,
		})
	})
	if err == nil && len(rs) == 0 {
		err = store.ErrConflict
	}
	if err != nil {
		return nil, wrap(err, "acquiring the lease of instance %s", p.InstanceID)
	}
	return instanceLease(rs[0]), nil
}

func (q *queries) InstanceLeaseGet(ctx context.Context, instanceID string) (*store.InstanceLease, error) {
	r, err := q.read().InstanceLeaseGet(ctx, instanceID)
	if err != nil {
		return nil, wrap(err, "reading the lease of instance %s", instanceID)
	}
	return instanceLease(r), nil
}

func (q *queries) InstanceLeaseHeartbeat(ctx context.Context, p *store.InstanceLeaseParams) (*store.InstanceLease, error) {
	rs, err := write(ctx, q, func(t *queries) ([]dbsqlc.InstanceLease, error) {
		return t.tx.InstanceLeaseHeartbeat(ctx, dbsqlc.InstanceLeaseHeartbeatParams{
			InstanceID: p.InstanceID, Holder: p.Holder, Now: micros(p.Now), ExpiresAt: micros(p.Now.Add(p.TTL)),
		})
	})
	if err == nil && len(rs) == 0 {
		err = store.ErrLeaseLost
	}
	if err != nil {
		return nil, wrap(err, "renewing the lease of instance %s", p.InstanceID)
	}
	return instanceLease(rs[0]), nil
}

func (q *queries) InstanceLeaseRelease(ctx context.Context, p *store.InstanceLeaseParams) error {
	_, err := write(ctx, q, func(t *queries) (struct{}, error) {
		return struct{}{}, t.tx.InstanceLeaseRelease(ctx, dbsqlc.InstanceLeaseReleaseParams{InstanceID: p.InstanceID, Holder: p.Holder})
	})
	if err != nil {
		return wrap(err, "releasing the lease of instance %s", p.InstanceID)
	}
	return nil
}

func (q *queries) InstanceLeasePrune(ctx context.Context, p *store.PruneParams) (int, error) {
	n, err := write(ctx, q, func(t *queries) (int64, error) {
		return t.tx.InstanceLeasePrune(ctx, dbsqlc.InstanceLeasePruneParams{Before: micros(p.Before), Limit: int64(p.Limit)})
	})
	if err != nil {
		return 0, wrap(err, "pruning instance leases expired before %s", p.Before)
	}
	return int(n), nil
}
