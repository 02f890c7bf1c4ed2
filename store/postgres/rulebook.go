package postgres

import (
	"context"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func (q *queries) RulebookGet(ctx context.Context, conversationID uuid.UUID) (*store.Rulebook, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).RulebookGet, conversationID)
	if err != nil {
		return nil, wrap(err, "reading the rulebook of %s", conversationID)
	}
	return rulebook(&row), nil
}

// RulebookSet relies on the foreign key: a missing conversation is a
// foreign-key violation, which the driver maps to ErrNotFound.
func (q *queries) RulebookSet(ctx context.Context, p *store.RulebookSetParams) (*store.Rulebook, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).RulebookUpsert, &dbsqlc.RulebookUpsertParams{
		ConversationID: p.ConversationID, Text: p.Text, SetBy: p.SetBy, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "setting the rulebook of %s", p.ConversationID)
	}
	return rulebook(&row), nil
}

func (q *queries) RulebookClear(ctx context.Context, conversationID uuid.UUID) (bool, error) {
	n, err := call(ctx, q, (*dbsqlc.Queries).RulebookDelete, conversationID)
	if err != nil {
		return false, wrap(err, "clearing the rulebook of %s", conversationID)
	}
	return n > 0, nil
}

func rulebook(r *dbsqlc.ConversationRulebook) *store.Rulebook {
	return &store.Rulebook{ConversationID: r.ConversationID, Text: r.Text, SetBy: r.SetBy, UpdatedAt: r.UpdatedAt}
}
