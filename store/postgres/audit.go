package postgres

import (
	"context"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// The audit of guarded tool calls: who, what, the risk, the decision, the
// outcome.

func (q *queries) AuditRecord(ctx context.Context, r *store.AuditRecord) error {
	err := exec(ctx, q, (*dbsqlc.Queries).AuditRecord, &dbsqlc.AuditRecordParams{
		ID: r.ID, ConversationID: r.ConversationID, Actor: r.Actor, Action: r.Action, Risk: r.Risk,
		Decision: r.Decision, Result: r.Result, Detail: r.Detail, CreatedAt: ts(r.CreatedAt),
	})
	return wrap(err, "recording audit of %s", r.Action)
}

func (q *queries) AuditList(ctx context.Context, conversationID uuid.UUID) ([]*store.AuditRecord, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).AuditList, &conversationID)
	if err != nil {
		return nil, wrap(err, "listing audit of conversation %s", conversationID)
	}
	return each(rows, func(r *dbsqlc.AuditRecord) *store.AuditRecord { return (*store.AuditRecord)(r) }), nil
}
