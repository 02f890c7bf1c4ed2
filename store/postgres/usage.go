package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// What each model call cost.

func (q *queries) UsageRecord(ctx context.Context, u *store.Usage) error {
	err := exec(ctx, q, (*dbsqlc.Queries).UsageRecord, &dbsqlc.UsageRecordParams{
		ID: u.ID, ConversationID: u.ConversationID, TurnID: u.TurnID, AgentID: u.AgentID,
		Provider: u.Provider, Model: u.Model, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CachedTokens: u.CachedTokens, CacheWriteTokens: u.CacheWriteTokens, ReasoningTokens: u.ReasoningTokens,
		CostMicroUSD: u.CostMicroUSD, CreatedAt: ts(u.CreatedAt),
		Kind: u.Kind, AudioMs: u.AudioMs, SpeechChars: u.SpeechChars,
	})
	return wrap(err, "recording usage in conversation %s", u.ConversationID)
}

func (q *queries) UsageList(ctx context.Context, conversationID uuid.UUID) ([]*store.Usage, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).UsageList, conversationID)
	if err != nil {
		return nil, wrap(err, "listing usage of conversation %s", conversationID)
	}
	return each(rows, func(r *dbsqlc.UsageRecord) *store.Usage {
		u := store.Usage(*r)
		return &u
	}), nil
}

func (q *queries) UsageSummary(ctx context.Context, p *store.UsageSummaryParams) ([]*store.UsageTotal, error) {
	var since *time.Time
	if !p.Since.IsZero() {
		since = tsPtr(&p.Since)
	}
	rows, err := call(ctx, q, (*dbsqlc.Queries).UsageSummary, &dbsqlc.UsageSummaryParams{
		GroupBy: string(p.By), Since: since, MaxRows: int32(p.Limit),
	})
	if err != nil {
		return nil, wrap(err, "summing usage by %s", p.By)
	}
	return each(rows, func(r *dbsqlc.UsageSummaryRow) *store.UsageTotal {
		t := store.UsageTotal(*r)
		return &t
	}), nil
}
