package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// SweepResult counts what one spine sweep did.
type SweepResult struct {
	// ApprovalsExpired are pending approvals past their expiry, now expired;
	// a turn is queued on each one's conversation so the agent learns that
	// nobody answered.
	ApprovalsExpired int
	// LeasesReleased are conversation leases that expired with no running
	// work item behind them (a lease left by a process that died outside
	// the queue).
	LeasesReleased int
	// SideThreadsAbandoned are side threads in progress with no message
	// for side_threads.abandon_after, now abandoned (their markers edited).
	SideThreadsAbandoned int
	// Retention is what the workspaces' retention deleted (see retain).
	Retention RetentionResult
	// Worktrees are coding steps' worktrees of runs over, removed (a
	// failed run's after runs.keep_failed_worktrees).
	Worktrees int
	// Store is what the store's own Sweep deleted.
	Store store.SweepResult
}

// sweepBatch bounds each part of one sweep; the next sweep takes the rest.
const sweepBatch = 500

// Sweep is the spine's housekeeping: it expires approvals nobody answered
// and resumes their turns, frees conversation leases nothing runs under,
// deletes the conversations past their workspace's retention, and runs the
// store's Sweep. Running it on several instances at once is
// safe: each expired approval is returned to one caller, its resume has a
// unique key, and the deletes are idempotent.
func (s *Service) Sweep(ctx context.Context) (*SweepResult, error) {
	now := s.now()
	res := &SweepResult{}
	var errs []error

	// Expiring and what follows from it commit together: the audit, the
	// edit of the prompt's message (no buttons, "expired"), and the resume
	// of the paused turn. A crash in between leaves the approvals pending
	// for the next sweep, never expired with nothing to show for it.
	var expired []*store.Approval
	err := s.st.InTx(ctx, func(q store.Queries) error {
		var err error
		expired, err = q.ApprovalExpire(ctx, &store.ApprovalExpireParams{Now: now, Limit: sweepBatch})
		if err != nil {
			return fmt.Errorf("expiring approvals: %w", err)
		}
		for _, ap := range expired {
			if err := s.approvalExpired(ctx, q, ap, now); err != nil {
				return fmt.Errorf("following up approval %s of conversation %s, expired: %w", ap.ID, ap.ConversationID, err)
			}
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
		expired = nil
	}
	res.ApprovalsExpired = len(expired)

	stale, err := s.st.ConversationListExpiredLeases(ctx, &store.ConversationListExpiredLeasesParams{Now: now, Limit: sweepBatch})
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

	// Side threads with no progress for side_threads.abandon_after.
	res.SideThreadsAbandoned, err = s.abandonStale(ctx)
	if err != nil {
		errs = append(errs, err)
	}

	// Conversations past their workspace's retention.
	res.Retention, err = s.retain(ctx, now)
	if err != nil {
		errs = append(errs, err)
	}

	// Worktrees of runs long over, in this instance's data folder.
	res.Worktrees, err = s.sweepWorktrees(ctx)
	if err != nil {
		errs = append(errs, fmt.Errorf("sweeping worktrees: %w", err))
	}

	swept, err := s.st.Sweep(ctx, &store.SweepParams{Now: now, WorkRetention: s.opts.WorkRetention})
	if err != nil {
		errs = append(errs, fmt.Errorf("sweeping the store: %w", err))
	}
	if swept != nil {
		res.Store = *swept
	}
	if n := res.ApprovalsExpired + res.LeasesReleased + res.SideThreadsAbandoned + res.Retention.Conversations + res.Worktrees + res.Store.Inbound + res.Store.Work + res.Store.Leases; n > 0 {
		s.log.InfoContext(ctx, "swept", "approvals_expired", res.ApprovalsExpired, "leases_released", res.LeasesReleased, "side_threads_abandoned", res.SideThreadsAbandoned, "worktrees", res.Worktrees,
			"retention_conversations", res.Retention.Conversations, "inbound", res.Store.Inbound, "work", res.Store.Work, "named_leases", res.Store.Leases)
	}
	return res, errors.Join(errs...)
}

// approvalExpired is what follows an approval's expiry, in the
// transaction that expired it. Each has a unique key: one of each per
// approval, ever, however many instances sweep.
func (s *Service) approvalExpired(ctx context.Context, q store.Queries, ap *store.Approval, now time.Time) error {
	conv := ap.ConversationID
	// Nobody decided: the audit says so at once, not only when the
	// conversation runs again.
	if err := settleAudit(ctx, q, &store.AuditSettleParams{
		ConversationID: conv, CallID: ap.CallID, Outcome: store.AuditExpired, DecidedBy: store.DecidedBySystem, Now: now,
	}); err != nil {
		return err
	}
	// The prompt's message loses its buttons and says it expired.
	cardKey := "approval-card:" + ap.ID.String()
	if _, err := Enqueue(ctx, q, ApprovalCardArgs{ApprovalID: ap.ID}, &EnqueueOpts{ConversationID: &conv, UniqueKey: &cardKey, Now: now}); err != nil {
		return err
	}
	c, err := q.ConversationGet(ctx, conv)
	if err != nil || c.Status != store.ConversationPaused {
		return err // moved on meanwhile: its next turn settles the call
	}
	// The paused turn resolves the expired call ("nobody answered in
	// time") when it runs again.
	key := "approval-expired:" + ap.ID.String()
	_, err = Enqueue(ctx, q, TurnArgs{TriggerSeq: c.LastSeq, Reason: "resume", ResumeCall: ap.CallID},
		&EnqueueOpts{ConversationID: &conv, UniqueKey: &key, Now: now})
	return err
}

// ApprovalCardArgs are the args of an item that edits an approval
// prompt's messages, on every binding of its conversation, to show how it
// was settled: today, that it expired (deliver.Deliverer.HandleApprovalCard).
// The sweep that expires the approval enqueues it in the same commit.
type ApprovalCardArgs struct {
	ApprovalID uuid.UUID `json:"approval_id"`
}

// WorkApprovalCard is the kind of ApprovalCardArgs.
const WorkApprovalCard = "approval_card"

// Kind is WorkApprovalCard.
func (ApprovalCardArgs) Kind() string { return WorkApprovalCard }
