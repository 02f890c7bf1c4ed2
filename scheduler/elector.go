package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/jonboulle/clockwork"

	"github.com/switchboardhq/switchboard/store"
)

// errNotLeader is what IsLeader answers on an instance that does not hold
// the lease; gocron then skips the job run.
var errNotLeader = errors.New("scheduler: another instance holds the leadership lease")

// leaseElector is gocron's Elector over the store's named lease. gocron asks
// it before every job run (every tick), so it talks to the store at most
// every third of the TTL and otherwise answers from what it last learned.
// It counts itself leader only until two thirds of the TTL after its last
// successful renewal: it stops firing before another instance could take
// the expired lease. Should two instances still overlap (a paused process,
// skewed clocks), fires stay single: see Scheduler.Tick.
type leaseElector struct {
	st    store.Store
	owner string
	ttl   time.Duration
	clock clockwork.Clock
	log   *slog.Logger

	mu          sync.Mutex
	lastTry     time.Time
	leaderUntil time.Time
	leading     bool // for logging changes only
}

var _ gocron.Elector = (*leaseElector)(nil)

// IsLeader returns nil when this instance leads.
func (e *leaseElector) IsLeader(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clock.Now()
	if !e.lastTry.IsZero() && now.Sub(e.lastTry) < e.ttl/3 {
		if now.Before(e.leaderUntil) {
			return nil
		}
		return errNotLeader
	}
	e.lastTry = now
	ok, err := e.st.LeaseAcquire(ctx, &store.NamedLeaseParams{Name: LeaseName, Owner: e.owner, TTL: e.ttl, Now: now})
	if err != nil {
		// gocron skips the run silently: say why here.
		e.log.WarnContext(ctx, "cannot reach the leadership lease; not firing", "error", err)
		e.leaderUntil = time.Time{}
		e.note(ctx, false)
		return fmt.Errorf("scheduler: renewing the leadership lease: %w", err)
	}
	if !ok {
		e.leaderUntil = time.Time{}
		e.note(ctx, false)
		return errNotLeader
	}
	e.leaderUntil = now.Add(e.ttl * 2 / 3)
	e.note(ctx, true)
	return nil
}

func (e *leaseElector) note(ctx context.Context, leading bool) {
	if leading != e.leading {
		e.leading = leading
		if leading {
			e.log.InfoContext(ctx, "this instance now fires schedules")
		} else {
			e.log.InfoContext(ctx, "this instance no longer fires schedules")
		}
	}
}

// release gives the lease up (at Stop) so that another instance need not
// wait for it to expire.
func (e *leaseElector) release(ctx context.Context) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.leaderUntil, e.lastTry = time.Time{}, time.Time{}
	if err := e.st.LeaseRelease(ctx, &store.NamedLeaseParams{Name: LeaseName, Owner: e.owner, Now: e.clock.Now()}); err != nil {
		e.log.WarnContext(ctx, "releasing the leadership lease", "error", err)
	}
	e.note(ctx, false)
}
