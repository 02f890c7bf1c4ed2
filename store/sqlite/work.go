package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

const defaultMaxAttempts = 3

func (q *queries) WorkEnqueue(ctx context.Context, p *store.WorkEnqueueParams) (*store.WorkEnqueueResult, error) {
	if p == nil {
		return nil, fmt.Errorf("enqueueing work: %w", invalid("params are nil"))
	}
	if p.Kind == "" {
		return nil, fmt.Errorf("enqueueing work: %w", invalid("Kind is empty"))
	}
	if p.MaxAttempts < 0 {
		return nil, fmt.Errorf("enqueueing %s work: %w", p.Kind, invalid("MaxAttempts %d is negative", p.MaxAttempts))
	}
	if p.UniqueKey != nil && *p.UniqueKey == "" {
		return nil, fmt.Errorf("enqueueing %s work: %w", p.Kind, invalid("UniqueKey is set but empty"))
	}
	payload, err := jsonArg("Payload", p.Payload, "{}")
	if err != nil {
		return nil, fmt.Errorf("enqueueing %s work: %w", p.Kind, err)
	}
	now := q.now(p.Now)
	runAt := p.RunAt
	if runAt.IsZero() {
		runAt = now
	}
	maxAttempts := p.MaxAttempts
	if maxAttempts == 0 {
		maxAttempts = defaultMaxAttempts
	}
	var res *store.WorkEnqueueResult
	err = q.atomic(ctx, func() error {
		item, err := queryOne(ctx, q.db, "WorkInsert", scanWork,
			sql.Named("id", newID().String()),
			sql.Named("kind", p.Kind),
			sql.Named("payload", payload),
			sql.Named("conversation_id", uuidArg(p.ConversationID)),
			sql.Named("agent_id", uuidArg(p.AgentID)),
			sql.Named("run_at", micros(runAt)),
			sql.Named("priority", int64(p.Priority)),
			sql.Named("max_attempts", int64(maxAttempts)),
			sql.Named("unique_key", strArg(p.UniqueKey)),
			sql.Named("now", micros(now)))
		switch {
		case err == nil:
			q.notify(store.TopicWork, item.Kind)
			res = &store.WorkEnqueueResult{Item: item, Inserted: true}
			return nil
		case errors.Is(err, store.ErrNotFound) && p.UniqueKey != nil:
			// DO NOTHING returned no row: the key is taken. ON CONFLICT keeps
			// the statement from failing, so a caller's transaction goes on.
			item, err := queryOne(ctx, q.db, "WorkGetByUniqueKey", scanWork, sql.Named("unique_key", *p.UniqueKey))
			if err != nil {
				return fmt.Errorf("reading the item holding unique key %q: %w", *p.UniqueKey, err)
			}
			res = &store.WorkEnqueueResult{Item: item, Inserted: false}
			return nil
		default:
			return err
		}
	})
	if err != nil {
		return nil, fmt.Errorf("enqueueing %s work: %w", p.Kind, err)
	}
	return res, nil
}

func (q *queries) WorkClaim(ctx context.Context, p *store.WorkClaimParams) ([]*store.WorkItem, error) {
	switch {
	case p == nil:
		return nil, fmt.Errorf("claiming work: %w", invalid("params are nil"))
	case p.Worker == "":
		return nil, fmt.Errorf("claiming work: %w", invalid("Worker is empty"))
	case p.Limit <= 0:
		return nil, fmt.Errorf("claiming work for %s: %w", p.Worker, invalid("Limit %d must be positive", p.Limit))
	case p.LeaseTTL <= 0:
		return nil, fmt.Errorf("claiming work for %s: %w", p.Worker, invalid("LeaseTTL %s must be positive", p.LeaseTTL))
	}
	var kinds any
	if len(p.Kinds) > 0 {
		b, err := json.Marshal(p.Kinds)
		if err != nil {
			return nil, fmt.Errorf("claiming work for %s: encoding kinds: %w", p.Worker, err)
		}
		kinds = string(b)
	}
	now := q.now(p.Now)
	nowArg := sql.Named("now", micros(now))
	expires := sql.Named("expires_at", micros(now.Add(p.LeaseTTL)))
	worker := sql.Named("worker", p.Worker)
	var items []*store.WorkItem
	err := q.atomic(ctx, func() error {
		if _, err := exec(ctx, q.db, "WorkFailExhausted", nowArg, sql.Named("kinds", kinds)); err != nil {
			return fmt.Errorf("failing exhausted items: %w", err)
		}
		ids, err := queryList(ctx, q.db, "WorkClaimCandidates", func(r scanner) (string, error) {
			var (
				id            string
				prio, at, rid int64
			)
			return id, r.Scan(&id, &prio, &at, &rid)
		}, nowArg, worker, sql.Named("kinds", kinds), sql.Named("limit", int64(p.Limit)))
		if err != nil {
			return fmt.Errorf("selecting candidates: %w", err)
		}
		if len(ids) == 0 {
			return nil
		}
		idsJSON, err := json.Marshal(ids)
		if err != nil {
			return fmt.Errorf("encoding candidate ids: %w", err)
		}
		idsArg := sql.Named("ids", string(idsJSON))
		marked, err := queryList(ctx, q.db, "WorkClaimMark", scanWork, idsArg, worker, expires, nowArg)
		if err != nil {
			return fmt.Errorf("marking items running: %w", err)
		}
		if _, err := exec(ctx, q.db, "WorkClaimConversations", idsArg, worker, expires, nowArg); err != nil {
			return fmt.Errorf("taking conversation leases: %w", err)
		}
		// RETURNING has no order: hand items out in the candidates' order.
		byID := make(map[string]*store.WorkItem, len(marked))
		for _, it := range marked {
			byID[it.ID.String()] = it
		}
		for _, id := range ids {
			if it, ok := byID[id]; ok {
				items = append(items, it)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claiming work for %s: %w", p.Worker, err)
	}
	return items, nil
}

func validateWorkLease(p *store.WorkLeaseParams, needTTL bool) error {
	switch {
	case p == nil:
		return invalid("params are nil")
	case p.Worker == "":
		return invalid("Worker is empty")
	case needTTL && p.LeaseTTL <= 0:
		return invalid("LeaseTTL %s must be positive", p.LeaseTTL)
	}
	return nil
}

// leaseLostOrMissing tells a missing item (ErrNotFound) from one the worker
// does not hold (ErrLeaseLost).
func (q *queries) leaseLostOrMissing(ctx context.Context, id uuid.UUID) error {
	if _, err := queryOne(ctx, q.db, "WorkGet", scanWork, sql.Named("id", id.String())); err != nil {
		return err
	}
	return store.ErrLeaseLost
}

func (q *queries) WorkHeartbeat(ctx context.Context, p *store.WorkLeaseParams) (*store.WorkItem, error) {
	if err := validateWorkLease(p, true); err != nil {
		return nil, fmt.Errorf("heartbeating work: %w", err)
	}
	now := q.now(p.Now)
	expires := micros(now.Add(p.LeaseTTL))
	var item *store.WorkItem
	err := q.atomic(ctx, func() error {
		var err error
		item, err = queryOne(ctx, q.db, "WorkHeartbeat", scanWork,
			sql.Named("id", p.ID.String()),
			sql.Named("worker", p.Worker),
			sql.Named("expires_at", expires),
			sql.Named("now", micros(now)))
		if errors.Is(err, store.ErrNotFound) {
			return q.leaseLostOrMissing(ctx, p.ID)
		}
		if err != nil || item.ConversationID == nil {
			return err
		}
		n, err := exec(ctx, q.db, "ConversationLeaseExtend",
			sql.Named("id", item.ConversationID.String()),
			sql.Named("owner", p.Worker),
			sql.Named("expires_at", expires),
			sql.Named("now", micros(now)))
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: conversation %s is leased to another owner", store.ErrLeaseLost, *item.ConversationID)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("heartbeating work %s for %s: %w", p.ID, p.Worker, err)
	}
	return item, nil
}

func (q *queries) WorkComplete(ctx context.Context, p *store.WorkLeaseParams) (*store.WorkItem, error) {
	if err := validateWorkLease(p, false); err != nil {
		return nil, fmt.Errorf("completing work: %w", err)
	}
	now := q.now(p.Now)
	var item *store.WorkItem
	err := q.atomic(ctx, func() error {
		var err error
		item, err = queryOne(ctx, q.db, "WorkComplete", scanWork,
			sql.Named("id", p.ID.String()),
			sql.Named("worker", p.Worker),
			sql.Named("now", micros(now)))
		if errors.Is(err, store.ErrNotFound) {
			return q.leaseLostOrMissing(ctx, p.ID)
		}
		if err != nil || item.ConversationID == nil {
			return err
		}
		return q.releaseForNext(ctx, *item.ConversationID, p.Worker, now)
	})
	if err != nil {
		return nil, fmt.Errorf("completing work %s for %s: %w", p.ID, p.Worker, err)
	}
	return item, nil
}

func (q *queries) WorkFail(ctx context.Context, p *store.WorkFailParams) (*store.WorkItem, error) {
	if p == nil {
		return nil, fmt.Errorf("failing work: %w", invalid("params are nil"))
	}
	if p.Worker == "" {
		return nil, fmt.Errorf("failing work %s: %w", p.ID, invalid("Worker is empty"))
	}
	now := q.now(p.Now)
	retryAt := p.RetryAt
	if retryAt.IsZero() {
		retryAt = now
	}
	var item *store.WorkItem
	err := q.atomic(ctx, func() error {
		var err error
		item, err = queryOne(ctx, q.db, "WorkFail", scanWork,
			sql.Named("id", p.ID.String()),
			sql.Named("worker", p.Worker),
			sql.Named("error", p.Error),
			sql.Named("retry_at", micros(retryAt)),
			sql.Named("now", micros(now)))
		if errors.Is(err, store.ErrNotFound) {
			return q.leaseLostOrMissing(ctx, p.ID)
		}
		if err != nil {
			return err
		}
		if item.State == store.WorkAvailable {
			q.notify(store.TopicWork, item.Kind)
		}
		if item.ConversationID == nil {
			return nil
		}
		return q.releaseForNext(ctx, *item.ConversationID, p.Worker, now)
	})
	if err != nil {
		return nil, fmt.Errorf("failing work %s for %s: %w", p.ID, p.Worker, err)
	}
	return item, nil
}

func (q *queries) WorkRelease(ctx context.Context, p *store.WorkLeaseParams) (*store.WorkItem, error) {
	if err := validateWorkLease(p, false); err != nil {
		return nil, fmt.Errorf("releasing work: %w", err)
	}
	now := q.now(p.Now)
	var item *store.WorkItem
	err := q.atomic(ctx, func() error {
		var err error
		item, err = queryOne(ctx, q.db, "WorkRelease", scanWork,
			sql.Named("id", p.ID.String()),
			sql.Named("worker", p.Worker),
			sql.Named("now", micros(now)))
		if errors.Is(err, store.ErrNotFound) {
			return q.leaseLostOrMissing(ctx, p.ID)
		}
		if err != nil {
			return err
		}
		// The item itself is claimable again, before any other of its conversation.
		q.notify(store.TopicWork, item.Kind)
		if item.ConversationID == nil {
			return nil
		}
		_, err = q.releaseConversationLease(ctx, *item.ConversationID, p.Worker, now)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("releasing work %s for %s: %w", p.ID, p.Worker, err)
	}
	return item, nil
}

func (q *queries) WorkReclaim(ctx context.Context, p *store.WorkReclaimParams) ([]*store.WorkItem, error) {
	if p == nil || p.Worker == "" {
		return nil, fmt.Errorf("reclaiming work: %w", invalid("Worker is empty"))
	}
	now := sql.Named("now", micros(q.now(p.Now)))
	var items []*store.WorkItem
	err := q.atomic(ctx, func() error {
		var err error
		items, err = queryList(ctx, q.db, "WorkReclaim", scanWork, sql.Named("worker", p.Worker), now)
		if err != nil {
			return err
		}
		for _, it := range items {
			if it.State == store.WorkAvailable {
				q.notify(store.TopicWork, it.Kind)
			}
		}
		_, err = exec(ctx, q.db, "ConversationLeaseReleaseOwner", sql.Named("owner", p.Worker), now)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reclaiming the work of %s: %w", p.Worker, err)
	}
	return items, nil
}

func (q *queries) WorkCancel(ctx context.Context, id uuid.UUID, now time.Time) (*store.WorkItem, error) {
	t := q.now(now)
	var item *store.WorkItem
	err := q.atomic(ctx, func() error {
		var err error
		item, err = queryOne(ctx, q.db, "WorkCancel", scanWork,
			sql.Named("id", id.String()),
			sql.Named("now", micros(t)))
		if errors.Is(err, store.ErrNotFound) {
			cur, err := queryOne(ctx, q.db, "WorkGet", scanWork, sql.Named("id", id.String()))
			if err != nil {
				return err
			}
			return fmt.Errorf("%w: work item is already %s", store.ErrConflict, cur.State)
		}
		if err != nil {
			return err
		}
		if item.ConversationID != nil && item.ClaimedBy != "" {
			// Frees the conversation only if this item's worker still holds it.
			err = q.releaseForNext(ctx, *item.ConversationID, item.ClaimedBy, t)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cancelling work %s: %w", id, err)
	}
	return item, nil
}

// releaseForNext releases owner's lease on the conversation and wakes the
// workers of the conversation's next available item, which the release made
// claimable.
func (q *queries) releaseForNext(ctx context.Context, conversationID uuid.UUID, owner string, now time.Time) error {
	n, err := q.releaseConversationLease(ctx, conversationID, owner, now)
	if err != nil || n == 0 {
		return err
	}
	var kind string
	err = q.db.queryRow(ctx, "WorkNextKind", sql.Named("conversation_id", conversationID.String())).Scan(&kind)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("finding the conversation's next item: %w", mapErr(err))
	}
	q.notify(store.TopicWork, kind)
	return nil
}

func (q *queries) WorkGet(ctx context.Context, id uuid.UUID) (*store.WorkItem, error) {
	item, err := queryOne(ctx, q.db, "WorkGet", scanWork, sql.Named("id", id.String()))
	if err != nil {
		return nil, fmt.Errorf("getting work %s: %w", id, err)
	}
	return item, nil
}

func (q *queries) WorkList(ctx context.Context, p *store.WorkListParams) ([]*store.WorkItem, error) {
	if p == nil {
		p = &store.WorkListParams{}
	}
	var states any
	if len(p.States) > 0 {
		b, err := json.Marshal(p.States)
		if err != nil {
			return nil, fmt.Errorf("listing work: encoding states: %w", err)
		}
		states = string(b)
	}
	out, err := queryList(ctx, q.db, "WorkList", scanWork,
		sql.Named("states", states),
		sql.Named("kind", p.Kind),
		sql.Named("conversation_id", uuidArg(p.ConversationID)),
		sql.Named("limit", limitArg(p.Limit)))
	if err != nil {
		return nil, fmt.Errorf("listing work: %w", err)
	}
	return out, nil
}

func (q *queries) WorkPrune(ctx context.Context, p *store.WorkPruneParams) (int, error) {
	if p == nil || p.FinishedBefore.IsZero() {
		return 0, fmt.Errorf("pruning work: %w", invalid("FinishedBefore is required"))
	}
	limit := p.Limit
	if limit <= 0 {
		limit = 1000
	}
	var n int64
	err := q.atomic(ctx, func() error {
		var err error
		n, err = exec(ctx, q.db, "WorkPrune", sql.Named("before", micros(p.FinishedBefore)), sql.Named("limit", limit))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("pruning work finished before %s: %w", p.FinishedBefore, err)
	}
	return int(n), nil
}
