package postgres

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// Card choices (migration 0029). The insert does nothing on a card that
// has a choice (ON CONFLICT DO NOTHING waits for a concurrent insert to
// commit or roll back), and the earlier choice is read back: under read
// committed the read sees the row that won. A foreign key names a missing
// entry or conversation (ErrNotFound).

func (q *queries) CardChoiceSettle(ctx context.Context, p *store.CardChoiceSettleParams) (*store.CardChoiceSettleResult, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).CardChoiceInsert, &dbsqlc.CardChoiceInsertParams{
		EntryID: p.EntryID, ConversationID: p.ConversationID, ActionID: p.ActionID, Value: p.Value, Label: p.Label,
		Platform: p.Platform, UserID: p.UserID, UserName: p.UserName, Now: ts(p.Now),
	})
	if err == nil {
		return &store.CardChoiceSettleResult{Choice: cardChoice(&row), Settled: true}, nil
	}
	if errors.Is(err, errNoRow) {
		row, err = call(ctx, q, (*dbsqlc.Queries).CardChoiceGet, p.EntryID)
		if err == nil {
			return &store.CardChoiceSettleResult{Choice: cardChoice(&row)}, nil
		}
	}
	return nil, wrap(err, "settling the choice of card %s", p.EntryID)
}

func (q *queries) CardChoiceGet(ctx context.Context, entryID uuid.UUID) (*store.CardChoice, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).CardChoiceGet, entryID)
	if err != nil {
		return nil, wrap(err, "reading the choice of card %s", entryID)
	}
	return cardChoice(&row), nil
}

func cardChoice(r *dbsqlc.CardChoice) *store.CardChoice {
	return &store.CardChoice{
		EntryID: r.EntryID, ConversationID: r.ConversationID, ActionID: r.ActionID, Value: r.Value, Label: r.Label,
		Platform: r.Platform, UserID: r.UserID, UserName: r.UserName, CreatedAt: r.CreatedAt,
	}
}
