package scheduler

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// SweepResult counts what one sweep did.
type SweepResult struct {
	// Spine is the spine's housekeeping (core.Service.Sweep): expired
	// approvals, stale conversation leases, the store's ephemeral rows.
	Spine core.SweepResult
	// Reminders are done reminders (with their runs) past ReminderRetention.
	Reminders int
}

// Sweep runs the spine's sweep and prunes done reminders. gocron runs it on
// the leader every SweepInterval.
func (s *Scheduler) Sweep(ctx context.Context) (*SweepResult, error) {
	res := &SweepResult{}
	var errs []error
	spine, err := s.svc.Sweep(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	if spine != nil {
		res.Spine = *spine
	}
	n, err := s.st.SchedulePrune(ctx, &store.SchedulePruneParams{Before: s.now().Add(-s.opts.ReminderRetention)})
	if err != nil {
		errs = append(errs, fmt.Errorf("pruning done reminders: %w", err))
	}
	res.Reminders = n
	if n > 0 {
		s.log.InfoContext(ctx, "pruned reminders", "reminders", n)
	}
	return res, errors.Join(errs...)
}
