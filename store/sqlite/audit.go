package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func (q *queries) AuditRecord(ctx context.Context, r *store.AuditRecord) error {
	id, err := write(ctx, q, func(t *queries) (uuid.UUID, error) {
		return t.tx.AuditInsert(ctx, dbsqlc.AuditInsertParams{
			ID: r.ID, ConversationID: uuidArg(r.ConversationID), CallID: r.CallID,
			Agent: r.Agent, Actor: r.Actor, Action: r.Action, Risk: r.Risk, Decision: r.Decision,
			Outcome: string(r.Outcome), DecidedBy: r.DecidedBy, Detail: string(r.Detail),
			CreatedAt: micros(r.CreatedAt), UpdatedAt: micros(r.UpdatedAt), TraceID: r.TraceID,
		})
	})
	if err != nil {
		return wrap(err, "recording audit of %s by %s", r.Action, r.Actor)
	}
	r.ID = id
	return nil
}

func (q *queries) AuditGet(ctx context.Context, id uuid.UUID) (*store.AuditRecord, error) {
	r, err := q.read().AuditGet(ctx, id)
	if err != nil {
		return nil, wrap(err, "reading audit row %s", id)
	}
	return fromAudit(r), nil
}

func (q *queries) AuditScan(ctx context.Context, p *store.AuditScanParams) ([]*store.AuditRecord, error) {
	arg := dbsqlc.AuditScanParams{MaxRows: int64(p.Limit)}
	if p.WorkspaceID != nil {
		arg.WorkspaceID = text(p.WorkspaceID.String())
	}
	if !p.From.IsZero() {
		arg.FromAt = microsArg(&p.From)
	}
	if !p.To.IsZero() {
		arg.ToAt = microsArg(&p.To)
	}
	if c := p.After; c != nil {
		arg.AfterAt, arg.AfterID = microsArg(&c.CreatedAt), text(c.ID.String())
	}
	rows, err := q.read().AuditScan(ctx, arg)
	out, err := all(rows, err, fromAudit)
	if err != nil {
		return nil, wrap(err, "scanning audit")
	}
	return out, nil
}

func (q *queries) AuditSettle(ctx context.Context, p *store.AuditSettleParams) (*store.AuditRecord, error) {
	arg := dbsqlc.AuditSettleParams{
		ConversationID: uuid.NullUUID{UUID: p.ConversationID, Valid: true}, CallID: p.CallID,
		Outcome: string(p.Outcome), DecidedBy: p.DecidedBy, TraceID: p.TraceID, Now: micros(p.Now),
	}
	if len(p.Detail) > 0 {
		arg.Detail = sql.NullString{String: string(p.Detail), Valid: true}
	}
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Audit, error) { return t.tx.AuditSettle(ctx, arg) })
	if err != nil {
		return nil, wrap(err, "settling audit of call %s in %s", p.CallID, p.ConversationID)
	}
	return fromAudit(r), nil
}

func (q *queries) AuditList(ctx context.Context, p *store.AuditListParams) ([]*store.AuditRecord, error) {
	arg := dbsqlc.AuditListParams{
		Agent: text(p.Agent), Action: text(p.Action), Decision: text(p.Decision),
		Outcome: text(string(p.Outcome)), Workspace: text(p.Workspace), MaxRows: int64(p.Limit),
	}
	if p.ConversationID != nil {
		arg.ConversationID = text(p.ConversationID.String())
	}
	if p.WorkspaceID != nil {
		arg.WorkspaceID = text(p.WorkspaceID.String())
	}
	if !p.From.IsZero() {
		arg.FromAt = microsArg(&p.From)
	}
	if !p.To.IsZero() {
		arg.ToAt = microsArg(&p.To)
	}
	if c := p.After; c != nil {
		arg.BeforeAt, arg.BeforeID = microsArg(&c.CreatedAt), text(c.ID.String())
	}
	rows, err := q.read().AuditList(ctx, arg)
	out, err := all(rows, err, fromAudit)
	if err != nil {
		return nil, wrap(err, "listing audit")
	}
	return out, nil
}

// text is an optional filter's argument: NULL (any) for "".
func text(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

func fromAudit(r dbsqlc.Audit) *store.AuditRecord {
	a := store.AuditRecord{ID: r.ID, ConversationID: nullUUID(r.ConversationID), CallID: r.CallID, Agent: r.Agent}
	a.Actor, a.Action, a.Risk, a.Decision = r.Actor, r.Action, r.Risk, r.Decision
	a.Outcome, a.DecidedBy, a.Detail = store.AuditOutcome(r.Outcome), r.DecidedBy, json.RawMessage(r.Detail)
	a.CreatedAt, a.UpdatedAt = fromMicros(r.CreatedAt), fromMicros(r.UpdatedAt)
	a.WorkspaceID, a.TraceID = nullUUID(r.WorkspaceID), r.TraceID
	return &a
}

func (q *queries) UsageRecord(ctx context.Context, u *store.Usage) error {
	_, err := write(ctx, q, func(t *queries) (struct{}, error) {
		return struct{}{}, t.tx.UsageInsert(ctx, dbsqlc.UsageInsertParams{
			ID: u.ID, ConversationID: u.ConversationID, TurnID: uuidArg(u.TurnID), AgentID: uuidArg(u.AgentID),
			Provider: u.Provider, Model: u.Model, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
			CachedTokens: u.CachedTokens, CacheWriteTokens: u.CacheWriteTokens, ReasoningTokens: u.ReasoningTokens,
			CostMicroUSD: u.CostMicroUSD, CreatedAt: micros(u.CreatedAt),
			Kind: u.Kind, AudioMs: u.AudioMs, SpeechChars: u.SpeechChars,
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
			CachedTokens: r.CachedTokens, CacheWriteTokens: r.CacheWriteTokens, ReasoningTokens: r.ReasoningTokens,
			CostMicroUSD: r.CostMicroUSD, CreatedAt: fromMicros(r.CreatedAt), WorkspaceID: nullUUID(r.WorkspaceID),
			Kind: r.Kind, AudioMs: r.AudioMs, SpeechChars: r.SpeechChars,
		}
	})
	if err != nil {
		return nil, wrap(err, "listing usage of conversation %s", conversationID)
	}
	return out, nil
}

func (q *queries) AuditLog(ctx context.Context, p *store.AuditLogParams) (*store.AuditRecord, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Audit, error) {
		return t.tx.AuditLog(ctx, dbsqlc.AuditLogParams{
			ID: p.ID, Actor: p.Actor, Action: p.Action, Outcome: string(p.Outcome), Detail: string(p.Detail),
			Now: micros(p.Now), WorkspaceID: uuidArg(p.WorkspaceID), TraceID: p.TraceID,
		})
	})
	if err != nil {
		return nil, wrap(err, "logging audit of %s", p.Action)
	}
	return fromAudit(r), nil
}
