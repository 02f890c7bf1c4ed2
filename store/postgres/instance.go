package postgres

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// Instance leases: one live process per instance id. Each statement is a
// conditional write of one row, atomic on its own.

func instanceLease(r *dbsqlc.InstanceLease) *store.InstanceLease {
	return &store.InstanceLease{
		InstanceID: r.InstanceID, Holder: r.Holder, Host: r.Host, PID: int(r.Pid), Process: r.Process,
		StartedAt: r.StartedAt, HeartbeatAt: r.HeartbeatAt, ExpiresAt: r.ExpiresAt,
	}
}

func (q *queries) InstanceLeaseAcquire(ctx context.Context, p *store.InstanceLeaseAcquireParams) (*store.InstanceLease, error) {
	now := ts(p.Now)
	rows, err := call(ctx, q, (*dbsqlc.Queries).InstanceLeaseAcquire, &dbsqlc.InstanceLeaseAcquireParams{
		InstanceID: p.InstanceID, Holder: p.Holder, Host: p.Host, Pid: int64(p.PID), Process: p.Process,
		StartedAt: ts(p.StartedAt), Now: now, ExpiresAt: ts(now.Add(p.TTL)),
	})
	if err == nil && len(rows) == 0 && p.TakeOver != "" {
		rows, err = call(ctx, q, (*dbsqlc.Queries).InstanceLeaseTakeOver, &dbsqlc.InstanceLeaseTakeOverParams{
			InstanceID: p.InstanceID, Holder: p.Holder, Host: p.Host, Pid: int64(p.PID), Process: p.Process,
			StartedAt: ts(p.StartedAt), Now: now, ExpiresAt: ts(now.Add(p.TTL)), TakeOver: p.TakeOver,
		})
	}
	if err == nil && len(rows) == 0 {
		err = store.ErrConflict
	}
	if err != nil {
		return nil, wrap(err, "acquiring the lease of instance %s", p.InstanceID)
	}
	return instanceLease(&rows[0]), nil
}

func (q *queries) InstanceLeaseGet(ctx context.Context, instanceID string) (*store.InstanceLease, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).InstanceLeaseGet, instanceID)
	if err != nil {
		return nil, wrap(err, "reading the lease of instance %s", instanceID)
	}
	return instanceLease(&row), nil
}

func (q *queries) InstanceLeaseHeartbeat(ctx context.Context, p *store.InstanceLeaseParams) (*store.InstanceLease, error) {
	now := ts(p.Now)
	rows, err := call(ctx, q, (*dbsqlc.Queries).InstanceLeaseHeartbeat, &dbsqlc.InstanceLeaseHeartbeatParams{
		InstanceID: p.InstanceID, Holder: p.Holder, Now: now, ExpiresAt: ts(now.Add(p.TTL)),
	})
	if err == nil && len(rows) == 0 {
		err = store.ErrLeaseLost
	}
	if err != nil {
		return nil, wrap(err, "renewing the lease of instance %s", p.InstanceID)
	}
	return instanceLease(&rows[0]), nil
}

func (q *queries) InstanceLeaseRelease(ctx context.Context, p *store.InstanceLeaseParams) error {
	err := exec(ctx, q, (*dbsqlc.Queries).InstanceLeaseRelease, &dbsqlc.InstanceLeaseReleaseParams{InstanceID: p.InstanceID, Holder: p.Holder})
	return wrap(err, "releasing the lease of instance %s", p.InstanceID)
}

func (q *queries) InstanceLeasePrune(ctx context.Context, p *store.PruneParams) (int, error) {
	n, err := call(ctx, q, (*dbsqlc.Queries).InstanceLeasePrune, &dbsqlc.InstanceLeasePruneParams{Before: ts(p.Before), MaxRows: int32(p.Limit)})
	return int(n), wrap(err, "pruning instance leases expired before %s", p.Before)
}
