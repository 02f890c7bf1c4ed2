package sqlite

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func (q *queries) AuditRecord(ctx context.Context, r *store.AuditRecord) error {
	_, err := write(ctx, q, func(t *queries) (struct{}, error) {
		return struct{}{}, t.tx.AuditInsert(ctx, dbsqlc.AuditInsertParams{
			ID: r.ID, ConversationID: uuidArg(r.ConversationID), Actor: r.Actor, Action: r.Action, Risk: r.Risk,
			Decision: r.Decision, Result: r.Result, Detail: string(r.Detail), CreatedAt: micros(r.CreatedAt),
		})
	})
	if err != nil {
		return wrap(err, "recording audit of %s by %s", r.Action, r.Actor)
	}
	return nil
}

func (q *queries) AuditList(ctx context.Context, conversationID uuid.UUID) ([]*store.AuditRecord, error) {
	rows, err := q.read().AuditList(ctx, uuid.NullUUID{UUID: conversationID, Valid: true})
	out, err := all(rows, err, func(r dbsqlc.Audit) *store.AuditRecord {
		return &store.AuditRecord{
			ID: r.ID, ConversationID: nullUUID(r.ConversationID), Actor: r.Actor, Action: r.Action, Risk: r.Risk,
			Decision: r.Decision, Result: r.Result, Detail: json.RawMessage(r.Detail), CreatedAt: fromMicros(r.CreatedAt),
			WorkspaceID: nullUUID(r.WorkspaceID),
		}
	})
	if err != nil {
		return nil, wrap(err, "listing audit of conversation %s", conversationID)
	}
	return out, nil
}

func (q *queries) UsageRecord(ctx context.Context, u *store.Usage) error {
	_, err := write(ctx, q, func(t *queries) (struct{}, error) {
		return struct{}{}, t.tx.UsageInsert(ctx, dbsqlc.UsageInsertParams{
			ID: u.ID, ConversationID: u.ConversationID, TurnID: uuidArg(u.TurnID), AgentID: uuidArg(u.AgentID),
			Provider: u.Provider, Model: u.Model, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
			CachedTokens: u.CachedTokens, ReasoningTokens: u.ReasoningTokens, CostMicroUSD: u.CostMicroUSD,
			CreatedAt: micros(u.CreatedAt),
		})
	})
	if err != nil {
		return wrap(err, "recording usage in %s", u.ConversationID)
	}
	return nil
}

func (q *queries) UsageList(ctx context.Context, conversationID uuid.UUID) ([]*store.Usage, error) {
	rows, err := q.read().UsageList(ctx, conversationID)
	out, err := all(rows, err, func(r dbsqlc.Usage) *store.Usage {
		return &store.Usage{
			ID: r.ID, ConversationID: r.ConversationID, TurnID: nullUUID(r.TurnID), AgentID: nullUUID(r.AgentID),
			Provider: r.Provider, Model: r.Model, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
			CachedTokens: r.CachedTokens, ReasoningTokens: r.ReasoningTokens, CostMicroUSD: r.CostMicroUSD,
			CreatedAt: fromMicros(r.CreatedAt), WorkspaceID: nullUUID(r.WorkspaceID),
		}
	})
	if err != nil {
		return nil, wrap(err, "listing usage of conversation %s", conversationID)
	}
	return out, nil
}
