package postgres

import (
	"context"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func (q *queries) EntryLatestSummary(ctx context.Context, conversationID uuid.UUID) (*store.Entry, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).EntryLatestSummary, conversationID)
	if err != nil {
		return nil, wrap(err, "finding the latest summary of %s", conversationID)
	}
	return entry(&row), nil
}
