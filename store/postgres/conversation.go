package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (q *queries) ConversationCreate(ctx context.Context, p *store.ConversationCreateParams) (*store.Conversation, error) {
	meta, err := jsonArg("Metadata", p.Metadata, "{}")
	if err != nil {
		return nil, fmt.Errorf("creating conversation: %w", err)
	}
	id := p.ID
	if id == uuid.Nil {
		id = newID()
	}
	row, err := one[conversationRow](ctx, q, sqlq.Get("ConversationCreate"),
		id, p.AgentID, p.Title, p.Provider, p.Model, p.Thinking, meta, q.now(p.Now))
	if errors.Is(err, pgxNoRows) {
		return nil, fmt.Errorf("creating conversation %s: %w: id already exists", id, store.ErrConflict)
	}
	if err != nil {
		return nil, wrap(err, "creating conversation %s", id)
	}
	return row.domain(), nil
}

func (q *queries) ConversationGet(ctx context.Context, id uuid.UUID) (*store.Conversation, error) {
	row, err := one[conversationRow](ctx, q, sqlq.Get("ConversationGet"), id)
	if err != nil {
		return nil, wrap(err, "getting conversation %s", id)
	}
	return row.domain(), nil
}

func (q *queries) ConversationForks(ctx context.Context, id uuid.UUID) ([]*store.Conversation, error) {
	rows, err := all[conversationRow](ctx, q, sqlq.Get("ConversationForks"), id)
	if err != nil {
		return nil, wrap(err, "listing forks of conversation %s", id)
	}
	return conversations(rows), nil
}

func (q *queries) ConversationLineage(ctx context.Context, id uuid.UUID) ([]*store.Conversation, error) {
	rows, err := all[conversationRow](ctx, q, sqlq.Get("ConversationLineage"), id)
	if err != nil {
		return nil, wrap(err, "listing lineage of conversation %s", id)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("listing lineage of conversation %s: %w", id, store.ErrNotFound)
	}
	return conversations(rows), nil
}

func (q *queries) ConversationSetStatus(ctx context.Context, p *store.ConversationStatusParams) (*store.Conversation, error) {
	switch p.Status {
	case store.ConversationIdle, store.ConversationRunning, store.ConversationPaused:
	default:
		return nil, fmt.Errorf("setting status of conversation %s: %w: unknown status %q",
			p.ConversationID, store.ErrInvalid, p.Status)
	}
	if p.TurnAttempts != nil && *p.TurnAttempts < 0 {
		return nil, fmt.Errorf("setting status of conversation %s: %w: TurnAttempts is negative",
			p.ConversationID, store.ErrInvalid)
	}
	row, err := one[conversationRow](ctx, q, sqlq.Get("ConversationSetStatus"),
		p.ConversationID, string(p.Status), p.TurnAttempts, q.now(p.Now))
	if err != nil {
		return nil, wrap(err, "setting status of conversation %s", p.ConversationID)
	}
	return row.domain(), nil
}

func (q *queries) ConversationLeaseAcquire(ctx context.Context, p *store.ConversationLeaseParams) (*store.Conversation, error) {
	if err := validLease(p.Owner, p.LeaseTTL); err != nil {
		return nil, fmt.Errorf("acquiring lease on conversation %s: %w", p.ConversationID, err)
	}
	now := q.now(p.Now)
	row, err := one[conversationRow](ctx, q, sqlq.Get("ConversationLeaseAcquire"),
		p.ConversationID, p.Owner, ts(now.Add(p.LeaseTTL)), now)
	if errors.Is(err, pgxNoRows) {
		ok, err := q.exists(ctx, "ConversationExists", p.ConversationID)
		switch {
		case err != nil:
			return nil, wrap(err, "acquiring lease on conversation %s", p.ConversationID)
		case !ok:
			return nil, fmt.Errorf("acquiring lease on conversation %s: %w", p.ConversationID, store.ErrNotFound)
		}
		return nil, fmt.Errorf("acquiring lease on conversation %s: %w: held by another owner",
			p.ConversationID, store.ErrConflict)
	}
	if err != nil {
		return nil, wrap(err, "acquiring lease on conversation %s", p.ConversationID)
	}
	return row.domain(), nil
}

func (q *queries) ConversationLeaseRelease(ctx context.Context, p *store.ConversationLeaseParams) error {
	tag, err := q.exec(ctx, sqlq.Get("ConversationLeaseRelease"), p.ConversationID, p.Owner, q.now(p.Now))
	if err != nil {
		return wrap(err, "releasing lease on conversation %s", p.ConversationID)
	}
	if tag.RowsAffected() == 0 {
		ok, err := q.exists(ctx, "ConversationExists", p.ConversationID)
		if err != nil {
			return wrap(err, "releasing lease on conversation %s", p.ConversationID)
		}
		if !ok {
			return fmt.Errorf("releasing lease on conversation %s: %w", p.ConversationID, store.ErrNotFound)
		}
		// Not the holder: nothing to release.
	}
	return nil
}

func (q *queries) ConversationListExpiredLeases(ctx context.Context, now time.Time, limit int) ([]*store.Conversation, error) {
	rows, err := all[conversationRow](ctx, q, sqlq.Get("ConversationListExpiredLeases"), q.now(now), limitArg(limit))
	if err != nil {
		return nil, wrap(err, "listing expired conversation leases")
	}
	return conversations(rows), nil
}

func conversations(rows []*conversationRow) []*store.Conversation {
	out := make([]*store.Conversation, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out
}

func validLease(owner string, ttl time.Duration) error {
	if owner == "" {
		return fmt.Errorf("%w: empty owner", store.ErrInvalid)
	}
	if ttl <= 0 {
		return fmt.Errorf("%w: lease TTL must be positive, got %s", store.ErrInvalid, ttl)
	}
	return nil
}
