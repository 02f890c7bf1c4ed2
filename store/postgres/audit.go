package postgres

import (
	"context"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// The audit of guarded tool calls: one row per call, its outcome kept up to
// date, listed newest first.

func (q *queries) AuditRecord(ctx context.Context, r *store.AuditRecord) error {
	id, err := call(ctx, q, (*dbsqlc.Queries).AuditRecord, &dbsqlc.AuditRecordParams{
		ID: r.ID, ConversationID: r.ConversationID, CallID: r.CallID, Agent: r.Agent, Actor: r.Actor,
		Action: r.Action, Risk: r.Risk, Decision: r.Decision, Outcome: string(r.Outcome), DecidedBy: r.DecidedBy,
		Detail: r.Detail, CreatedAt: ts(r.CreatedAt), UpdatedAt: ts(r.UpdatedAt), TraceID: r.TraceID,
	})
	if err != nil {
		return wrap(err, "recording audit of %s", r.Action)
	}
	r.ID = id
	return nil
}

func (q *queries) AuditGet(ctx context.Context, id uuid.UUID) (*store.AuditRecord, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).AuditGet, id)
	if err != nil {
		return nil, wrap(err, "reading audit row %s", id)
	}
	return auditRecord(&row), nil
}

func (q *queries) AuditScan(ctx context.Context, p *store.AuditScanParams) ([]*store.AuditRecord, error) {
	arg := &dbsqlc.AuditScanParams{WorkspaceID: p.WorkspaceID, MaxRows: int32(p.Limit)}
	if !p.From.IsZero() {
		arg.FromAt = tsPtr(&p.From)
	}
	if !p.To.IsZero() {
		arg.ToAt = tsPtr(&p.To)
	}
	if p.After != nil {
		arg.AfterAt, arg.AfterID = tsPtr(&p.After.CreatedAt), &p.After.ID
	}
	rows, err := call(ctx, q, (*dbsqlc.Queries).AuditScan, arg)
	if err != nil {
		return nil, wrap(err, "scanning audit")
	}
	return each(rows, auditRecord), nil
}

func (q *queries) AuditSettle(ctx context.Context, p *store.AuditSettleParams) (*store.AuditRecord, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).AuditSettle, &dbsqlc.AuditSettleParams{
		ConversationID: &p.ConversationID, CallID: p.CallID, Outcome: string(p.Outcome),
		DecidedBy: p.DecidedBy, Detail: p.Detail, TraceID: p.TraceID, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "settling audit of call %s in %s", p.CallID, p.ConversationID)
	}
	return auditRecord(&row), nil
}

func (q *queries) AuditList(ctx context.Context, p *store.AuditListParams) ([]*store.AuditRecord, error) {
	arg := &dbsqlc.AuditListParams{
		ConversationID: p.ConversationID, WorkspaceID: p.WorkspaceID,
		Agent: optional(p.Agent), Action: optional(p.Action), Decision: optional(p.Decision),
		Outcome: optional(string(p.Outcome)), Workspace: optional(p.Workspace),
		MaxRows: int32(p.Limit),
	}
	if !p.From.IsZero() {
		arg.FromAt = tsPtr(&p.From)
	}
	if !p.To.IsZero() {
		arg.ToAt = tsPtr(&p.To)
	}
	if p.After != nil {
		arg.BeforeAt, arg.BeforeID = tsPtr(&p.After.CreatedAt), &p.After.ID
	}
	rows, err := call(ctx, q, (*dbsqlc.Queries).AuditList, arg)
	if err != nil {
		return nil, wrap(err, "listing audit")
	}
	return each(rows, auditRecord), nil
}

// optional is a filter's argument: NULL (any) for "".
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func auditRecord(r *dbsqlc.AuditRecord) *store.AuditRecord {
	return &store.AuditRecord{
		ID:             r.ID,
		ConversationID: r.ConversationID,
		CallID:         r.CallID,
		Agent:          r.Agent,
		Actor:          r.Actor,
		Action:         r.Action,
		Risk:           r.Risk,
		Decision:       r.Decision,
		Outcome:        store.AuditOutcome(r.Outcome),
		DecidedBy:      r.DecidedBy,
		Detail:         r.Detail,
		CreatedAt:      r.CreatedAt.UTC(),
		UpdatedAt:      r.UpdatedAt.UTC(),
		WorkspaceID:    r.WorkspaceID,
		TraceID:        r.TraceID,
	}
}

func (q *queries) AuditLog(ctx context.Context, p *store.AuditLogParams) (*store.AuditRecord, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).AuditLog, &dbsqlc.AuditLogParams{
		ID: p.ID, Actor: p.Actor, Action: p.Action, Outcome: string(p.Outcome), Detail: p.Detail,
		Now: ts(p.Now), WorkspaceID: p.WorkspaceID, TraceID: p.TraceID,
	})
	if err != nil {
		return nil, wrap(err, "logging audit of %s", p.Action)
	}
	return auditRecord(&row), nil
}
