package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (q *queries) ConversationCreate(ctx context.Context, p *store.ConversationCreateParams) (*store.Conversation, error) {
	if p == nil {
		return nil, fmt.Errorf("creating conversation: %w", invalid("params are nil"))
	}
	var c *store.Conversation
	err := q.atomic(ctx, func() error {
		var err error
		c, err = q.conversationInsert(ctx, p, nil, 0)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("creating conversation: %w", err)
	}
	return c, nil
}

// conversationInsert inserts a root conversation, or a fork of parent at
// forkSeq (whose log then ends at forkSeq).
func (q *queries) conversationInsert(ctx context.Context, p *store.ConversationCreateParams, parent *store.Conversation, forkSeq int64) (*store.Conversation, error) {
	meta, err := jsonArg("Metadata", p.Metadata, "{}")
	if err != nil {
		return nil, err
	}
	id := p.ID
	if id == uuid.Nil {
		id = newID()
	}
	rootID, parentID, fork, lastSeq := id, any(nil), any(nil), int64(0)
	if parent != nil {
		rootID, parentID, fork, lastSeq = parent.RootID, parent.ID.String(), forkSeq, forkSeq
	}
	return queryOne(ctx, q.db, "ConversationInsert", scanConversation,
		sql.Named("id", id.String()),
		sql.Named("parent_id", parentID),
		sql.Named("root_id", rootID.String()),
		sql.Named("fork_seq", fork),
		sql.Named("agent_id", uuidArg(p.AgentID)),
		sql.Named("title", p.Title),
		sql.Named("provider", p.Provider),
		sql.Named("model", p.Model),
		sql.Named("thinking", p.Thinking),
		sql.Named("metadata", meta),
		sql.Named("last_seq", lastSeq),
		sql.Named("now", micros(q.now(p.Now))),
	)
}

func (q *queries) ConversationGet(ctx context.Context, id uuid.UUID) (*store.Conversation, error) {
	c, err := queryOne(ctx, q.db, "ConversationGet", scanConversation, sql.Named("id", id.String()))
	if err != nil {
		return nil, fmt.Errorf("getting conversation %s: %w", id, err)
	}
	return c, nil
}

func (q *queries) ConversationForks(ctx context.Context, id uuid.UUID) ([]*store.Conversation, error) {
	out, err := queryList(ctx, q.db, "ConversationForks", scanConversation, sql.Named("id", id.String()))
	if err != nil {
		return nil, fmt.Errorf("listing forks of conversation %s: %w", id, err)
	}
	return out, nil
}

func (q *queries) ConversationLineage(ctx context.Context, id uuid.UUID) ([]*store.Conversation, error) {
	out, err := queryList(ctx, q.db, "ConversationLineage", scanConversation, sql.Named("id", id.String()))
	if err == nil && len(out) == 0 {
		err = store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading lineage of conversation %s: %w", id, err)
	}
	return out, nil
}

func (q *queries) ConversationSetStatus(ctx context.Context, p *store.ConversationStatusParams) (*store.Conversation, error) {
	if p == nil {
		return nil, fmt.Errorf("setting conversation status: %w", invalid("params are nil"))
	}
	switch p.Status {
	case store.ConversationIdle, store.ConversationRunning, store.ConversationPaused:
	default:
		return nil, fmt.Errorf("setting status of conversation %s: %w", p.ConversationID, invalid("Status %q is not a conversation status", p.Status))
	}
	var attempts any
	if p.TurnAttempts != nil {
		if *p.TurnAttempts < 0 {
			return nil, fmt.Errorf("setting status of conversation %s: %w", p.ConversationID, invalid("TurnAttempts %d is negative", *p.TurnAttempts))
		}
		attempts = int64(*p.TurnAttempts)
	}
	var c *store.Conversation
	err := q.atomic(ctx, func() error {
		var err error
		c, err = queryOne(ctx, q.db, "ConversationSetStatus", scanConversation,
			sql.Named("id", p.ConversationID.String()),
			sql.Named("status", string(p.Status)),
			sql.Named("turn_attempts", attempts),
			sql.Named("now", micros(q.now(p.Now))),
		)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("setting status of conversation %s: %w", p.ConversationID, err)
	}
	return c, nil
}

func validateLease(p *store.ConversationLeaseParams, needTTL bool) error {
	switch {
	case p == nil:
		return invalid("params are nil")
	case p.Owner == "":
		return invalid("Owner is empty")
	case needTTL && p.LeaseTTL <= 0:
		return invalid("LeaseTTL %s must be positive", p.LeaseTTL)
	}
	return nil
}

func (q *queries) ConversationLeaseAcquire(ctx context.Context, p *store.ConversationLeaseParams) (*store.Conversation, error) {
	if err := validateLease(p, true); err != nil {
		return nil, fmt.Errorf("acquiring conversation lease: %w", err)
	}
	now := q.now(p.Now)
	var c *store.Conversation
	err := q.atomic(ctx, func() error {
		var err error
		c, err = queryOne(ctx, q.db, "ConversationLeaseAcquire", scanConversation,
			sql.Named("id", p.ConversationID.String()),
			sql.Named("owner", p.Owner),
			sql.Named("expires_at", micros(now.Add(p.LeaseTTL))),
			sql.Named("now", micros(now)),
		)
		if errors.Is(err, store.ErrNotFound) {
			// Either there is no such conversation or someone else holds it.
			if err := q.mustExist(ctx, p.ConversationID); err != nil {
				return err
			}
			return fmt.Errorf("%w: conversation lease is held by another owner", store.ErrConflict)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("acquiring lease on conversation %s for %s: %w", p.ConversationID, p.Owner, err)
	}
	return c, nil
}

func (q *queries) ConversationLeaseRelease(ctx context.Context, p *store.ConversationLeaseParams) error {
	if err := validateLease(p, false); err != nil {
		return fmt.Errorf("releasing conversation lease: %w", err)
	}
	err := q.atomic(ctx, func() error {
		n, err := q.releaseConversationLease(ctx, p.ConversationID, p.Owner, q.now(p.Now))
		if err != nil || n > 0 {
			return err
		}
		return q.mustExist(ctx, p.ConversationID) // not held by Owner: a no-op
	})
	if err != nil {
		return fmt.Errorf("releasing lease on conversation %s for %s: %w", p.ConversationID, p.Owner, err)
	}
	return nil
}

func (q *queries) releaseConversationLease(ctx context.Context, id uuid.UUID, owner string, now time.Time) (int64, error) {
	return exec(ctx, q.db, "ConversationLeaseRelease",
		sql.Named("id", id.String()),
		sql.Named("owner", owner),
		sql.Named("now", micros(now)),
	)
}

func (q *queries) ConversationListExpiredLeases(ctx context.Context, now time.Time, limit int) ([]*store.Conversation, error) {
	out, err := queryList(ctx, q.db, "ConversationListExpiredLeases", scanConversation,
		sql.Named("now", micros(q.now(now))),
		sql.Named("limit", limitArg(limit)),
	)
	if err != nil {
		return nil, fmt.Errorf("listing expired conversation leases: %w", err)
	}
	return out, nil
}

// mustExist returns ErrNotFound when the conversation does not exist.
func (q *queries) mustExist(ctx context.Context, id uuid.UUID) error {
	n, err := count(ctx, q.db, "ConversationExists", sql.Named("id", id.String()))
	if err != nil {
		return err
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// fence refuses a write by owner unless owner holds the conversation's lease,
// unexpired at now. Callers run it in the writing transaction, on the single
// writer, so the lease cannot change before their write.
func (q *queries) fence(ctx context.Context, id uuid.UUID, owner string, now time.Time) error {
	n, err := count(ctx, q.db, "ConversationLeaseHeldBy",
		sql.Named("id", id.String()), sql.Named("owner", owner), sql.Named("now", micros(now)))
	if err != nil || n > 0 {
		return err
	}
	if err := q.mustExist(ctx, id); err != nil {
		return err
	}
	return fmt.Errorf("%w: %q does not hold the lease of conversation %s", store.ErrLeaseLost, owner, id)
}
