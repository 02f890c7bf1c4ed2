package sqlite

import (
	"context"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (q *queries) EntryLatestSummary(ctx context.Context, conversationID uuid.UUID) (*store.Entry, error) {
	r, err := q.read().EntryLatestSummary(ctx, conversationID)
	if err != nil {
		return nil, wrap(err, "finding the latest summary of %s", conversationID)
	}
	return entry(r), nil
}
