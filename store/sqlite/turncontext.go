package sqlite

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// TurnContextGet reads the turn's context one read after another: a
// SQLite read is a call into the same process, with no round trip to save.
func (q *queries) TurnContextGet(ctx context.Context, conversationID uuid.UUID) (*store.TurnContext, error) {
	c, err := q.ConversationGet(ctx, conversationID)
	if err != nil {
		return nil, err
	}
	tc := &store.TurnContext{Conversation: c}
	if tc.LatestSummary, err = absent(q.EntryLatestSummary(ctx, conversationID)); err != nil {
		return nil, err
	}
	if tc.Bindings, err = q.BindingListByConversation(ctx, conversationID); err != nil {
		return nil, err
	}
	if tc.Rulebook, err = absent(q.RulebookGet(ctx, conversationID)); err != nil {
		return nil, err
	}
	if tc.SideThread, err = absent(q.SideThreadByChild(ctx, conversationID)); err != nil {
		return nil, err
	}
	if tc.Delegation, err = absent(q.DelegationByChild(ctx, conversationID)); err != nil {
		return nil, err
	}
	if c.AgentID != nil {
		if tc.Personality, err = absent(q.PersonalityGet(ctx, &store.PersonalityGetParams{AgentID: *c.AgentID})); err != nil {
			return nil, err
		}
	}
	return tc, nil
}

// absent turns a read's ErrNotFound into nil.
func absent[T any](v *T, err error) (*T, error) {
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return v, err
}
