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
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func (q *queries) WorkEnqueue(ctx context.Context, p *store.WorkEnqueueParams) (*store.WorkEnqueueResult, error) {
	res, err := write(ctx, q, func(t *queries) (*store.WorkEnqueueResult, error) {
		r, err := t.tx.WorkInsert(ctx, dbsqlc.WorkInsertParams{
			ID: newID(), Kind: p.Kind, Payload: string(p.Payload),
			ConversationID: uuidArg(p.ConversationID), AgentID: uuidArg(p.AgentID),
			RunAt: micros(p.RunAt), Priority: int64(p.Priority), MaxAttempts: int64(p.MaxAttempts),
			UniqueKey: textArg(p.UniqueKey), OrderingKey: textArg(p.OrderingKey), Now: micros(p.Now),
		})
		switch {
		case err == nil:
			t.notify(store.TopicWork, r.Kind)
			return &store.WorkEnqueueResult{Item: work(r), Inserted: true}, nil
		case errors.Is(err, sql.ErrNoRows) && p.UniqueKey != nil:
			// DO NOTHING returned no row: the key is taken.
			r, err := t.tx.WorkGetByUniqueKey(ctx, *p.UniqueKey)
			if err != nil {
				return nil, fmt.Errorf("reading the item holding unique key %q: %w", *p.UniqueKey, err)
			}
			return &store.WorkEnqueueResult{Item: work(r)}, nil
		}
		return nil, err
	})
	if err != nil {
		return nil, wrap(err, "enqueueing %s work", p.Kind)
	}
	return res, nil
}

// WorkEnqueueMany inserts every item in one write transaction (SQLite has
// one writer and no round trips: a statement an item costs nothing a
// multi-row one would save).
func (q *queries) WorkEnqueueMany(ctx context.Context, ps []*store.WorkEnqueueParams) ([]*store.WorkEnqueueResult, error) {
	return write(ctx, q, func(t *queries) ([]*store.WorkEnqueueResult, error) {
		out := make([]*store.WorkEnqueueResult, len(ps))
		for i, p := range ps {
			r, err := t.WorkEnqueue(ctx, p)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	})
}

func (q *queries) WorkClaim(ctx context.Context, p *store.WorkClaimParams) ([]*store.WorkItem, error) {
	now, kinds := micros(p.Now), listArg(p.Kinds)
	expires := micros(p.Now.Add(p.LeaseTTL))
	items, err := write(ctx, q, func(t *queries) ([]*store.WorkItem, error) {
		var ids []uuid.UUID
		if p.AvailableOnly {
			cands, err := t.tx.WorkClaimCandidatesAvailable(ctx, dbsqlc.WorkClaimCandidatesAvailableParams{Now: now, Kinds: kinds, Limit: int64(p.Limit)})
			if err != nil {
				return nil, err
			}
			for _, c := range cands {
				ids = append(ids, c.ID)
			}
		} else {
			if err := t.tx.WorkFailExhausted(ctx, dbsqlc.WorkFailExhaustedParams{Now: now, Kinds: kinds}); err != nil {
				return nil, fmt.Errorf("failing exhausted items: %w", err)
			}
			cands, err := t.tx.WorkClaimCandidates(ctx, dbsqlc.WorkClaimCandidatesParams{Now: now, Kinds: kinds, Worker: p.Worker, Limit: int64(p.Limit)})
			if err != nil {
				return nil, err
			}
			for _, c := range cands {
				ids = append(ids, c.ID)
			}
		}
		if len(ids) == 0 {
			return nil, nil
		}
		idsJSON, err := json.Marshal(ids)
		if err != nil {
			return nil, fmt.Errorf("encoding candidate ids: %w", err)
		}
		marked, err := t.tx.WorkClaimMark(ctx, dbsqlc.WorkClaimMarkParams{Worker: p.Worker, ExpiresAt: expires, Now: now, Ids: string(idsJSON)})
		if err != nil {
			return nil, fmt.Errorf("marking items running: %w", err)
		}
		err = t.tx.WorkClaimConversations(ctx, dbsqlc.WorkClaimConversationsParams{Worker: p.Worker, ExpiresAt: expires, Now: now, Ids: string(idsJSON)})
		if err != nil {
			return nil, fmt.Errorf("taking conversation leases: %w", err)
		}
		// RETURNING has no order: hand items out in the candidates' order.
		byID := make(map[uuid.UUID]dbsqlc.Work, len(marked))
		for _, r := range marked {
			byID[r.ID] = r
		}
		out := make([]*store.WorkItem, 0, len(ids))
		for _, id := range ids {
			if r, ok := byID[id]; ok {
				out = append(out, work(r))
			}
		}
		return out, nil
	})
	if err != nil {
		return nil, wrap(err, "claiming work for %s", p.Worker)
	}
	return items, nil
}

// held runs one statement of a worker on its item and tells a missing item
// (ErrNotFound) from one the worker does not hold (ErrLeaseLost).
func (q *queries) held(ctx context.Context, id uuid.UUID, run func() (dbsqlc.Work, error)) (*store.WorkItem, error) {
	r, err := run()
	if err != nil {
		return nil, orMissing(err, func() (dbsqlc.Work, error) { return q.tx.WorkGet(ctx, id) }, store.ErrLeaseLost)
	}
	return work(r), nil
}

func (q *queries) WorkHeartbeat(ctx context.Context, p *store.WorkLeaseParams) (*store.WorkItem, error) {
	now, expires := micros(p.Now), micros(p.Now.Add(p.LeaseTTL))
	item, err := write(ctx, q, func(t *queries) (*store.WorkItem, error) {
		item, err := t.held(ctx, p.ID, func() (dbsqlc.Work, error) {
			return t.tx.WorkHeartbeat(ctx, dbsqlc.WorkHeartbeatParams{ID: p.ID, Worker: p.Worker, ExpiresAt: expires, Now: now})
		})
		if err != nil || item.ConversationID == nil {
			return item, err
		}
		n, err := t.tx.ConversationLeaseExtend(ctx, dbsqlc.ConversationLeaseExtendParams{ID: *item.ConversationID, Owner: p.Worker, ExpiresAt: expires, Now: now})
		if err == nil && n == 0 {
			err = fmt.Errorf("%w: conversation %s is leased to another owner", store.ErrLeaseLost, *item.ConversationID)
		}
		return item, err
	})
	if err != nil {
		return nil, wrap(err, "heartbeating work %s for %s", p.ID, p.Worker)
	}
	return item, nil
}

func (q *queries) WorkComplete(ctx context.Context, p *store.WorkLeaseParams) (*store.WorkItem, error) {
	item, err := write(ctx, q, func(t *queries) (*store.WorkItem, error) {
		item, err := t.held(ctx, p.ID, func() (dbsqlc.Work, error) {
			return t.tx.WorkComplete(ctx, dbsqlc.WorkCompleteParams{ID: p.ID, Worker: p.Worker, Now: micros(p.Now)})
		})
		if err != nil {
			return nil, err
		}
		return item, t.releaseForNext(ctx, item, p.Worker, p.Now)
	})
	if err != nil {
		return nil, wrap(err, "completing work %s for %s", p.ID, p.Worker)
	}
	return item, nil
}

func (q *queries) WorkCompleteMany(ctx context.Context, p *store.WorkCompleteManyParams) ([]*store.WorkItem, error) {
	ids, err := json.Marshal(p.IDs)
	if err != nil {
		return nil, fmt.Errorf("completing work for %s: encoding ids: %w", p.Worker, err)
	}
	items, err := write(ctx, q, func(t *queries) ([]*store.WorkItem, error) {
		rows, err := t.tx.WorkCompleteMany(ctx, dbsqlc.WorkCompleteManyParams{Ids: string(ids), Worker: p.Worker, Now: micros(p.Now)})
		items, err := all(rows, err, work)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			if err := t.releaseForNext(ctx, it, p.Worker, p.Now); err != nil {
				return nil, err
			}
		}
		return items, nil
	})
	if err != nil {
		return nil, wrap(err, "completing %d work items for %s", len(p.IDs), p.Worker)
	}
	return items, nil
}

func (q *queries) WorkFail(ctx context.Context, p *store.WorkFailParams) (*store.WorkItem, error) {
	item, err := write(ctx, q, func(t *queries) (*store.WorkItem, error) {
		item, err := t.held(ctx, p.ID, func() (dbsqlc.Work, error) {
			return t.tx.WorkFail(ctx, dbsqlc.WorkFailParams{ID: p.ID, Worker: p.Worker, Error: p.Error, RetryAt: micros(p.RetryAt), Now: micros(p.Now)})
		})
		if err != nil {
			return nil, err
		}
		if item.State == store.WorkAvailable {
			t.notify(store.TopicWork, item.Kind)
		}
		return item, t.releaseForNext(ctx, item, p.Worker, p.Now)
	})
	if err != nil {
		return nil, wrap(err, "failing work %s for %s", p.ID, p.Worker)
	}
	return item, nil
}

func (q *queries) WorkRelease(ctx context.Context, p *store.WorkLeaseParams) (*store.WorkItem, error) {
	item, err := write(ctx, q, func(t *queries) (*store.WorkItem, error) {
		item, err := t.held(ctx, p.ID, func() (dbsqlc.Work, error) {
			return t.tx.WorkRelease(ctx, dbsqlc.WorkReleaseParams{ID: p.ID, Worker: p.Worker, Now: micros(p.Now)})
		})
		if err != nil {
			return nil, err
		}
		// The item itself is claimable again, before any other of its conversation.
		t.notify(store.TopicWork, item.Kind)
		if item.ConversationID != nil {
			_, err = t.releaseLease(ctx, *item.ConversationID, p.Worker, p.Now)
		}
		return item, err
	})
	if err != nil {
		return nil, wrap(err, "releasing work %s for %s", p.ID, p.Worker)
	}
	return item, nil
}

func (q *queries) WorkReclaim(ctx context.Context, p *store.WorkReclaimParams) ([]*store.WorkItem, error) {
	now := micros(p.Now)
	items, err := write(ctx, q, func(t *queries) ([]*store.WorkItem, error) {
		rows, err := t.tx.WorkReclaim(ctx, dbsqlc.WorkReclaimParams{Worker: p.Worker, Now: now})
		items, err := all(rows, err, work)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			if it.State == store.WorkAvailable {
				t.notify(store.TopicWork, it.Kind)
			}
		}
		return items, t.tx.ConversationLeaseReleaseOwner(ctx, dbsqlc.ConversationLeaseReleaseOwnerParams{Owner: p.Worker, Now: now})
	})
	if err != nil {
		return nil, wrap(err, "reclaiming the work of %s", p.Worker)
	}
	return items, nil
}

// releaseForNext releases owner's lease on the item's conversation, if any,
// and wakes the workers of the conversation's next available item, and of
// the next unfinished item of its ordering key, which the item's end made
// claimable.
func (q *queries) releaseForNext(ctx context.Context, item *store.WorkItem, owner string, now time.Time) error {
	if item.OrderingKey != nil {
		kind, err := q.tx.WorkNextKindOfKey(ctx, *item.OrderingKey)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return fmt.Errorf("finding the next item of ordering key %q: %w", *item.OrderingKey, err)
		default:
			q.notify(store.TopicWork, kind)
		}
	}
	if item.ConversationID == nil {
		return nil
	}
	n, err := q.releaseLease(ctx, *item.ConversationID, owner, now)
	if err != nil || n == 0 {
		return err
	}
	kind, err := q.tx.WorkNextKind(ctx, uuid.NullUUID{UUID: *item.ConversationID, Valid: true})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("finding the conversation's next item: %w", err)
	}
	q.notify(store.TopicWork, kind)
	return nil
}

func (q *queries) WorkGet(ctx context.Context, id uuid.UUID) (*store.WorkItem, error) {
	r, err := q.read().WorkGet(ctx, id)
	if err != nil {
		return nil, wrap(err, "getting work %s", id)
	}
	return work(r), nil
}

func (q *queries) WorkList(ctx context.Context, p *store.WorkListParams) ([]*store.WorkItem, error) {
	rows, err := q.read().WorkList(ctx, dbsqlc.WorkListParams{
		States: listArg(p.States), Kind: p.Kind, ConversationID: uuidArg(p.ConversationID), Limit: limitArg(p.Limit),
	})
	out, err := all(rows, err, work)
	if err != nil {
		return nil, wrap(err, "listing work")
	}
	return out, nil
}

func (q *queries) WorkPrune(ctx context.Context, p *store.WorkPruneParams) (int, error) {
	n, err := write(ctx, q, func(t *queries) (int64, error) {
		return t.tx.WorkPrune(ctx, dbsqlc.WorkPruneParams{Before: micros(p.FinishedBefore), Limit: int64(p.Limit)})
	})
	if err != nil {
		return 0, wrap(err, "pruning work finished before %s", p.FinishedBefore)
	}
	return int(n), nil
}
