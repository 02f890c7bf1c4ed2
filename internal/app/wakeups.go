package app

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store/postgres"
)

// wakeupCheckTimeout is how long the start-up check waits for its own
// notification. Directly it arrives within a round trip.
const wakeupCheckTimeout = 3 * time.Second

// wakeupChecker is the Postgres store's check that NOTIFY reaches LISTEN
// (postgres.Store.CheckWakeups); SQLite wakes its workers in process.
type wakeupChecker interface {
	CheckWakeups(ctx context.Context, timeout time.Duration) error
}

// checkWakeups checks, off the start path, that wake-ups arrive, and warns
// when they do not: through a transaction pooler (PgBouncer in transaction
// mode, Supabase's pooler) LISTEN does not work, and each worker finds new
// work only when it polls.
func (a *App) checkWakeups(ctx context.Context) {
	c, ok := a.Store.(wakeupChecker)
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := c.CheckWakeups(ctx, wakeupCheckTimeout)
		switch {
		case err == nil:
			a.log.DebugContext(ctx, "database wake-ups arrive")
		case ctx.Err() != nil:
		case errors.Is(err, postgres.ErrWakeupsLost) && a.cfg.DatabaseListenURL == "":
			a.log.WarnContext(ctx, "database wake-ups do not arrive: DATABASE_URL seems to go through a transaction pooler, where LISTEN does not work. Set DATABASE_LISTEN_URL to a direct connection to the server (not the pooler); until then each worker finds new work only when it polls",
				"poll_interval", core.DefaultPollInterval.String())
		case errors.Is(err, postgres.ErrWakeupsLost):
			a.log.WarnContext(ctx, "database wake-ups do not arrive through DATABASE_LISTEN_URL: point it at the server directly, not at a transaction pooler; until then each worker finds new work only when it polls",
				"poll_interval", core.DefaultPollInterval.String())
		default:
			a.log.WarnContext(ctx, "checking database wake-ups", "error", err)
		}
	}()
	a.onStop(func(context.Context) error { cancel(); wg.Wait(); return nil })
}
