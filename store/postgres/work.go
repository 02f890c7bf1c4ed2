package postgres

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

const defaultMaxAttempts = 3

func (q *queries) WorkEnqueue(ctx context.Context, p *store.WorkEnqueueParams) (*store.WorkEnqueueResult, error) {
	if p.Kind == "" {
		return nil, fmt.Errorf("enqueueing work: %w: empty Kind", store.ErrInvalid)
	}
	if p.MaxAttempts < 0 {
		return nil, fmt.Errorf("enqueueing %s work: %w: negative MaxAttempts", p.Kind, store.ErrInvalid)
	}
	if p.UniqueKey != nil && *p.UniqueKey == "" {
		return nil, fmt.Errorf("enqueueing %s work: %w: empty UniqueKey (use nil for none)", p.Kind, store.ErrInvalid)
	}
	payload, err := jsonArg("Payload", p.Payload, "{}")
	if err != nil {
		return nil, fmt.Errorf("enqueueing %s work: %w", p.Kind, err)
	}
	now := q.now(p.Now)
	runAt := now
	if !p.RunAt.IsZero() {
		runAt = ts(p.RunAt)
	}
	maxAttempts := p.MaxAttempts
	if maxAttempts == 0 {
		maxAttempts = defaultMaxAttempts
	}
	row, err := one[workRow](ctx, q, sqlq.Get("WorkEnqueue"),
		newID(), p.Kind, payload, p.ConversationID, p.AgentID, runAt, p.Priority, maxAttempts, p.UniqueKey, now)
	switch {
	case err == nil:
		q.notify(note{topic: store.TopicWork, payload: p.Kind})
		return &store.WorkEnqueueResult{Item: row.domain(), Inserted: true}, nil
	case errors.Is(err, pgxNoRows) && p.UniqueKey != nil:
		// The key exists. In READ COMMITTED this statement sees the row that
		// won, even one committed while our insert waited on it.
		row, err := one[workRow](ctx, q, sqlq.Get("WorkGetByUniqueKey"), *p.UniqueKey)
		if err != nil {
			return nil, wrap(err, "enqueueing %s work: reading the item with key %q", p.Kind, *p.UniqueKey)
		}
		return &store.WorkEnqueueResult{Item: row.domain(), Inserted: false}, nil
	default:
		return nil, wrap(err, "enqueueing %s work", p.Kind)
	}
}

func (q *queries) WorkClaim(ctx context.Context, p *store.WorkClaimParams) ([]*store.WorkItem, error) {
	if err := validLease(p.Worker, p.LeaseTTL); err != nil {
		return nil, fmt.Errorf("claiming work: %w", err)
	}
	if p.Limit <= 0 {
		return nil, fmt.Errorf("claiming work: %w: Limit must be positive, got %d", store.ErrInvalid, p.Limit)
	}
	now := q.now(p.Now)
	rows, err := all[workRow](ctx, q, sqlq.Get("WorkClaim"),
		p.Worker, nonNilStrings(p.Kinds), p.Limit, now, ts(now.Add(p.LeaseTTL)))
	if err != nil {
		return nil, wrap(err, "claiming work for %s", p.Worker)
	}
	// RETURNING has no order; hand items out in claim order.
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Priority != b.Priority {
			return a.Priority > b.Priority
		}
		if !a.RunAt.Equal(b.RunAt) {
			return a.RunAt.Before(b.RunAt)
		}
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.Before(b.CreatedAt)
		}
		return a.ID.String() < b.ID.String()
	})
	out := make([]*store.WorkItem, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

func (q *queries) WorkHeartbeat(ctx context.Context, p *store.WorkLeaseParams) (*store.WorkItem, error) {
	if err := validLease(p.Worker, p.LeaseTTL); err != nil {
		return nil, fmt.Errorf("heartbeating work %s: %w", p.ID, err)
	}
	now := q.now(p.Now)
	row, err := one[workRow](ctx, q, sqlq.Get("WorkHeartbeat"), p.ID, p.Worker, now, ts(now.Add(p.LeaseTTL)))
	if err != nil {
		return nil, q.leaseErr(ctx, err, p.ID, "heartbeating work %s", p.ID)
	}
	return row.domain(), nil
}

func (q *queries) WorkComplete(ctx context.Context, p *store.WorkLeaseParams) (*store.WorkItem, error) {
	if p.Worker == "" {
		return nil, fmt.Errorf("completing work %s: %w: empty Worker", p.ID, store.ErrInvalid)
	}
	row, err := one[workNextRow](ctx, q, sqlq.Get("WorkComplete"), p.ID, p.Worker, q.now(p.Now))
	if err != nil {
		return nil, q.leaseErr(ctx, err, p.ID, "completing work %s", p.ID)
	}
	q.notifyNext(row)
	return row.domain(), nil
}

func (q *queries) WorkFail(ctx context.Context, p *store.WorkFailParams) (*store.WorkItem, error) {
	if p.Worker == "" {
		return nil, fmt.Errorf("failing work %s: %w: empty Worker", p.ID, store.ErrInvalid)
	}
	now := q.now(p.Now)
	retryAt := now
	if !p.RetryAt.IsZero() {
		retryAt = ts(p.RetryAt)
	}
	row, err := one[workNextRow](ctx, q, sqlq.Get("WorkFail"), p.ID, p.Worker, p.Error, now, retryAt)
	if err != nil {
		return nil, q.leaseErr(ctx, err, p.ID, "failing work %s", p.ID)
	}
	if row.State == string(store.WorkAvailable) {
		q.notify(note{topic: store.TopicWork, payload: row.Kind})
	}
	q.notifyNext(row)
	return row.domain(), nil
}

func (q *queries) WorkRelease(ctx context.Context, p *store.WorkLeaseParams) (*store.WorkItem, error) {
	if p.Worker == "" {
		return nil, fmt.Errorf("releasing work %s: %w: empty Worker", p.ID, store.ErrInvalid)
	}
	row, err := one[workRow](ctx, q, sqlq.Get("WorkRelease"), p.ID, p.Worker, q.now(p.Now))
	if err != nil {
		return nil, q.leaseErr(ctx, err, p.ID, "releasing work %s", p.ID)
	}
	// The item itself is claimable again, before any other of its conversation.
	q.notify(note{topic: store.TopicWork, payload: row.Kind})
	return row.domain(), nil
}

func (q *queries) WorkReclaim(ctx context.Context, p *store.WorkReclaimParams) ([]*store.WorkItem, error) {
	if p.Worker == "" {
		return nil, fmt.Errorf("reclaiming work: %w: empty Worker", store.ErrInvalid)
	}
	rows, err := all[workRow](ctx, q, sqlq.Get("WorkReclaim"), p.Worker, q.now(p.Now))
	if err != nil {
		return nil, wrap(err, "reclaiming the work of %s", p.Worker)
	}
	out := make([]*store.WorkItem, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
		if r.State == string(store.WorkAvailable) {
			q.notify(note{topic: store.TopicWork, payload: r.Kind})
		}
	}
	return out, nil
}

func (q *queries) WorkCancel(ctx context.Context, id uuid.UUID, now time.Time) (*store.WorkItem, error) {
	row, err := one[workNextRow](ctx, q, sqlq.Get("WorkCancel"), id, q.now(now))
	if errors.Is(err, pgxNoRows) {
		ok, err := q.exists(ctx, "WorkExists", id)
		if err != nil {
			return nil, wrap(err, "cancelling work %s", id)
		}
		if !ok {
			return nil, fmt.Errorf("cancelling work %s: %w", id, store.ErrNotFound)
		}
		return nil, fmt.Errorf("cancelling work %s: %w: already finished", id, store.ErrConflict)
	}
	if err != nil {
		return nil, wrap(err, "cancelling work %s", id)
	}
	q.notifyNext(row)
	return row.domain(), nil
}

func (q *queries) WorkGet(ctx context.Context, id uuid.UUID) (*store.WorkItem, error) {
	row, err := one[workRow](ctx, q, sqlq.Get("WorkGet"), id)
	if err != nil {
		return nil, wrap(err, "getting work %s", id)
	}
	return row.domain(), nil
}

func (q *queries) WorkList(ctx context.Context, p *store.WorkListParams) ([]*store.WorkItem, error) {
	states := make([]string, len(p.States))
	for i, s := range p.States {
		states[i] = string(s)
	}
	rows, err := all[workRow](ctx, q, sqlq.Get("WorkList"), states, p.Kind, p.ConversationID, limitArg(p.Limit))
	if err != nil {
		return nil, wrap(err, "listing work")
	}
	out := make([]*store.WorkItem, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

func (q *queries) WorkPrune(ctx context.Context, p *store.WorkPruneParams) (int, error) {
	if p == nil || p.FinishedBefore.IsZero() {
		return 0, fmt.Errorf("pruning work: %w: FinishedBefore is required", store.ErrInvalid)
	}
	limit := p.Limit
	if limit <= 0 {
		limit = 1000
	}
	tag, err := q.exec(ctx, sqlq.Get("WorkPrune"), ts(p.FinishedBefore), limit)
	if err != nil {
		return 0, wrap(err, "pruning work finished before %s", p.FinishedBefore)
	}
	return int(tag.RowsAffected()), nil
}

// leaseErr explains why a statement guarded by "running and claimed by the
// worker" matched no row: the item is gone, or the lease is not ours.
func (q *queries) leaseErr(ctx context.Context, err error, id uuid.UUID, format string, args ...any) error {
	if !errors.Is(err, pgxNoRows) {
		return wrap(err, format, args...)
	}
	ok, xerr := q.exists(ctx, "WorkExists", id)
	if xerr != nil {
		return wrap(xerr, format, args...)
	}
	if !ok {
		return fmt.Errorf(format+": %w", append(args, store.ErrNotFound)...)
	}
	return fmt.Errorf(format+": %w", append(args, store.ErrLeaseLost)...)
}

// notifyNext wakes workers for the item that the release of a conversation's
// lease has just made claimable.
func (q *queries) notifyNext(row *workNextRow) {
	if row.NextKind != nil {
		q.notify(note{topic: store.TopicWork, payload: *row.NextKind})
	}
}

func (r *workNextRow) domain() *store.WorkItem { return r.workRow.domain() }
