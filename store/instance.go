package store

import (
	"context"
	"time"
)

// Instance leases: one live process per instance id. Every lease a process
// takes on work and conversations is under its instance id
// (SWITCHBOARD_INSTANCE_ID), and a process that starts under an id takes
// back at once what that id still holds. That is right only when the
// process before it under the id is gone, so the id itself is leased: a
// process holds it while it lives (heartbeats renew it), gives it back on a
// graceful stop, and a second process cannot take it while the lease is
// live, unless the caller proved the holder dead (TakeOver).

// InstanceLease is a process's hold on an instance id.
type InstanceLease struct {
	InstanceID string
	// Holder is random per process: a restart under the same id is a new
	// holder.
	Holder string
	// Host, PID, Process and StartedAt describe the holding process for
	// people, and let a process on the same host tell whether it still
	// runs. Process is what identifies it beyond the pid (on Linux: boot
	// id, pid namespace and start time); empty when unknown.
	Host        string
	PID         int
	Process     string
	StartedAt   time.Time
	HeartbeatAt time.Time
	ExpiresAt   time.Time
}

// Live reports whether the lease is unexpired at now.
func (l *InstanceLease) Live(now time.Time) bool { return l.ExpiresAt.After(now) }

// InstanceLeaseAcquireParams takes an instance id for the process that
// Holder names. The id is taken when it is free, expired, already Holder's
// (renewed), or held by TakeOver.
type InstanceLeaseAcquireParams struct {
	InstanceID string
	Holder     string
	Host       string
	PID        int
	Process    string
	StartedAt  time.Time
	// TakeOver, when set, is the holder of a live lease that the caller
	// proved dead (its process is gone): that lease is replaced as if it
	// had expired. A lease by any other holder is not.
	TakeOver string
	TTL      time.Duration
	Now      time.Time
}

// InstanceLeaseParams renews or releases a held instance id.
type InstanceLeaseParams struct {
	InstanceID string
	Holder     string
	TTL        time.Duration // for heartbeat
	Now        time.Time
}

// InstanceLeaseQueries are the instance leases' queries.
type InstanceLeaseQueries interface {
	// InstanceLeaseAcquire takes the id (see the params) and returns the
	// lease as now held; ErrConflict when another holder's lease is live
	// (InstanceLeaseGet says whose).
	InstanceLeaseAcquire(ctx context.Context, p *InstanceLeaseAcquireParams) (*InstanceLease, error)
	// InstanceLeaseGet reads an id's lease, live or expired; ErrNotFound
	// when there is none.
	InstanceLeaseGet(ctx context.Context, instanceID string) (*InstanceLease, error)
	// InstanceLeaseHeartbeat renews Holder's lease for TTL from Now, even
	// when it expired meanwhile, as long as no one took it: ErrLeaseLost
	// when Holder no longer holds the id.
	InstanceLeaseHeartbeat(ctx context.Context, p *InstanceLeaseParams) (*InstanceLease, error)
	// InstanceLeaseRelease gives the id back if Holder holds it; otherwise
	// it does nothing.
	InstanceLeaseRelease(ctx context.Context, p *InstanceLeaseParams) error
	// InstanceLeasePrune deletes leases that expired before p.Before (a
	// process gone without a graceful stop), at most p.Limit.
	InstanceLeasePrune(ctx context.Context, p *PruneParams) (int, error)
}
