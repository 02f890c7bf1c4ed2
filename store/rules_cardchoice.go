package store

import (
	"context"

	"github.com/google/uuid"
)

func (q checked) CardChoiceSettle(ctx context.Context, p *CardChoiceSettleParams) (*CardChoiceSettleResult, error) {
	switch {
	case p == nil || p.EntryID == uuid.Nil:
		return nil, invalidf("settling a card's choice: EntryID is required")
	case p.ConversationID == uuid.Nil:
		return nil, invalidf("settling the choice of card %s: ConversationID is required", p.EntryID)
	case p.ActionID == "":
		return nil, invalidf("settling the choice of card %s: ActionID is required", p.EntryID)
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.CardChoiceSettle(ctx, &c)
}

func (q checked) CardChoiceGet(ctx context.Context, entryID uuid.UUID) (*CardChoice, error) {
	if entryID == uuid.Nil {
		return nil, invalidf("reading a card's choice: the entry id is required")
	}
	return q.Queries.CardChoiceGet(ctx, entryID)
}
