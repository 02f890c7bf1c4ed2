package sqlite

import (
	"context"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func (q *queries) RulebookGet(ctx context.Context, conversationID uuid.UUID) (*store.Rulebook, error) {
	r, err := q.read().RulebookGet(ctx, conversationID)
	if err != nil {
		return nil, wrap(err, "reading the rulebook of %s", conversationID)
	}
	return rulebookOf(r), nil
}

func (q *queries) RulebookSet(ctx context.Context, p *store.RulebookSetParams) (*store.Rulebook, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.ConversationRulebook, error) {
		if err := t.mustExist(ctx, p.ConversationID); err != nil {
			return dbsqlc.ConversationRulebook{}, err
		}
		return t.tx.RulebookUpsert(ctx, dbsqlc.RulebookUpsertParams{
			ConversationID: p.ConversationID, Text: p.Text, SetBy: p.SetBy, Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "setting the rulebook of %s", p.ConversationID)
	}
	return rulebookOf(r), nil
}

func (q *queries) RulebookClear(ctx context.Context, conversationID uuid.UUID) (bool, error) {
	n, err := write(ctx, q, func(t *queries) (int64, error) {
		return t.tx.RulebookDelete(ctx, conversationID)
	})
	if err != nil {
		return false, wrap(err, "clearing the rulebook of %s", conversationID)
	}
	return n > 0, nil
}

func rulebookOf(r dbsqlc.ConversationRulebook) *store.Rulebook {
	return &store.Rulebook{ConversationID: r.ConversationID, Text: r.Text, SetBy: r.SetBy, UpdatedAt: fromMicros(r.UpdatedAt)}
}
