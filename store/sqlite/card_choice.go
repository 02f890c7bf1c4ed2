package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// Card choices (migration 0029). Writes are serialised, so the insert and
// the read of an earlier choice see one state; a foreign key names a
// missing entry or conversation (ErrNotFound).

func (q *queries) CardChoiceSettle(ctx context.Context, p *store.CardChoiceSettleParams) (*store.CardChoiceSettleResult, error) {
	res, err := write(ctx, q, func(t *queries) (*store.CardChoiceSettleResult, error) {
		r, err := t.tx.CardChoiceInsert(ctx, dbsqlc.CardChoiceInsertParams{
			EntryID: p.EntryID, ConversationID: p.ConversationID, ActionID: p.ActionID, Value: p.Value, Label: p.Label,
			Platform: p.Platform, UserID: p.UserID, UserName: p.UserName, Now: micros(p.Now),
		})
		if err == nil {
			return &store.CardChoiceSettleResult{Choice: cardChoiceOf(r), Settled: true}, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		// No row back: the card has a choice already.
		r, err = t.tx.CardChoiceGet(ctx, p.EntryID)
		if err != nil {
			return nil, err
		}
		return &store.CardChoiceSettleResult{Choice: cardChoiceOf(r)}, nil
	})
	if err != nil {
		return nil, wrap(err, "settling the choice of card %s", p.EntryID)
	}
	return res, nil
}

func (q *queries) CardChoiceGet(ctx context.Context, entryID uuid.UUID) (*store.CardChoice, error) {
	r, err := q.read().CardChoiceGet(ctx, entryID)
	if err != nil {
		return nil, wrap(err, "reading the choice of card %s", entryID)
	}
	return cardChoiceOf(r), nil
}

func cardChoiceOf(r dbsqlc.CardChoice) *store.CardChoice {
	return &store.CardChoice{
		EntryID: r.EntryID, ConversationID: r.ConversationID, ActionID: r.ActionID, Value: r.Value, Label: r.Label,
		Platform: r.Platform, UserID: r.UserID, UserName: r.UserName, CreatedAt: fromMicros(r.CreatedAt),
	}
}
