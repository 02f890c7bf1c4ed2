package store

import (
	"context"

	"github.com/google/uuid"
)

// The summaries' rule: the query names its conversation.

func (q checked) EntryLatestSummary(ctx context.Context, conversationID uuid.UUID) (*Entry, error) {
	if conversationID == uuid.Nil {
		return nil, invalidf("finding the latest summary: ConversationID is required")
	}
	return q.Queries.EntryLatestSummary(ctx, conversationID)
}
