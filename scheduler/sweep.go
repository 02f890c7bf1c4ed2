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
	// ApprovalsExpired are pending approvals past their expiry, now expired;
	// a turn is queued on each one's conversation so the agent learns that
	// nobody answered.
	ApprovalsExpired int
	// LeasesReleased are conversation leases that expired with no running
	// work item behind them (a lease taken outside the queue by a process
	// that died).
	LeasesReleased int
	store.ScheduleSweepResult
}

// sweepBatch bounds each part of one sweep; the next sweep takes the rest.
const sweepBatch = 500

// Sweep expires approvals, releases stale conversation leases and deletes
// old ephemeral rows. gocron runs it on the leader every SweepInterval.
func (s *Scheduler) Sweep(ctx context.Context) (*SweepResult, error) {
	now := s.now()
	res := &SweepResult{}
	var errs []error

	expired, err := s.st.ApprovalExpire(ctx, now, sweepBatch)
	if err != nil {
		errs = append(errs, fmt.Errorf("expiring approvals: %w", err))
	}
	res.ApprovalsExpired = len(expired)
	for _, ap := range expired {
		// The paused turn resolves the expired call ("nobody answered in
		// time") when it runs again. One resume per approval, ever.
		key := "approval-expired:" + ap.ID.String()
		conv := ap.ConversationID
		err := s.st.InTx(ctx, func(q store.Queries) error {
			c, err := q.ConversationGet(ctx, conv)
			if err != nil || c.Status != store.ConversationPaused {
				return err // moved on meanwhile: its next turn settles the call
			}
			_, err = core.Enqueue(ctx, q, core.TurnArgs{TriggerSeq: c.LastSeq, Reason: "resume"}, &core.EnqueueOpts{
				ConversationID: &conv, UniqueKey: &key, Now: now,
			})
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("resuming conversation %s after approval %s expired: %w", conv, ap.ID, err))
		}
	}

	stale, err := s.st.ConversationListExpiredLeases(ctx, now, sweepBatch)
	if err != nil {
		errs = append(errs, fmt.Errorf("listing expired conversation leases: %w", err))
	}
	for _, c := range stale {
		running, err := s.st.WorkList(ctx, &store.WorkListParams{ConversationID: &c.ID, States: []store.WorkState{store.WorkRunning}, Limit: 1})
		if err != nil {
			errs = append(errs, fmt.Errorf("checking work of conversation %s: %w", c.ID, err))
			continue
		}
		if len(running) > 0 {
			continue // the queue reclaims the item and its lease
		}
		err = s.st.ConversationLeaseRelease(ctx, &store.ConversationLeaseParams{ConversationID: c.ID, Owner: c.LeaseOwner, Now: now})
		if err != nil && !errors.Is(err, store.ErrLeaseLost) {
			errs = append(errs, fmt.Errorf("releasing the lease of conversation %s: %w", c.ID, err))
			continue
		}
		res.LeasesReleased++
	}

	// Finished work goes through WorkPrune, keyed items included, so the
	// sweep leaves WorkBefore zero.
	swept, err := s.ss.ScheduleSweep(ctx, &store.ScheduleSweepParams{
		InboundBefore:   now.Add(-s.opts.InboundRetention),
		LeasesBefore:    now.Add(-s.opts.LeaseTTL * 4),
		RemindersBefore: now.Add(-s.opts.ReminderRetention),
		Limit:           sweepBatch,
	})
	if err != nil {
		errs = append(errs, err)
	} else {
		res.ScheduleSweepResult = *swept
	}
	pruned, err := s.st.WorkPrune(ctx, &store.WorkPruneParams{FinishedBefore: now.Add(-s.opts.WorkRetention), Limit: sweepBatch})
	if err != nil {
		errs = append(errs, fmt.Errorf("pruning finished work: %w", err))
	}
	res.Work = pruned
	if n := res.ApprovalsExpired + res.LeasesReleased + res.Inbound + res.Work + res.Leases + res.Reminders; n > 0 {
		s.log.InfoContext(ctx, "swept", "approvals_expired", res.ApprovalsExpired, "leases_released", res.LeasesReleased,
			"inbound", res.Inbound, "work", res.Work, "named_leases", res.Leases, "reminders", res.Reminders)
	}
	return res, errors.Join(errs...)
}
