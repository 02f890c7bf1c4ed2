package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
)

// The audit's rules: a row names its call, an outcome is a known one, and a
// list is bounded.

func (q checked) AuditRecord(ctx context.Context, r *AuditRecord) error {
	if r == nil {
		return invalidf("recording audit: params are nil")
	}
	// A row of an act outside any conversation (an operator's budget
	// extension) has no ConversationID; its CallID is unique on its own.
	if r.CallID == "" {
		return invalidf("recording audit of %s: CallID (with ConversationID, for a call in one) names the row and is required", r.Action)
	}
	if !r.Outcome.Valid() {
		return invalidf("recording audit of %s: unknown Outcome %q", r.Action, r.Outcome)
	}
	c := *r
	var err error
	if c.Detail, err = jsonOr("Detail", c.Detail, "{}"); err != nil {
		return fmt.Errorf("recording audit of %s: %w", r.Action, err)
	}
	if c.ID == uuid.Nil {
		c.ID = newID()
	}
	c.CreatedAt = q.at(c.CreatedAt)
	if c.UpdatedAt.IsZero() || c.UpdatedAt.Before(c.CreatedAt) {
		c.UpdatedAt = c.CreatedAt
	}
	if err := q.Queries.AuditRecord(ctx, &c); err != nil {
		return err
	}
	r.ID, r.CreatedAt, r.UpdatedAt, r.Detail = c.ID, c.CreatedAt, c.UpdatedAt, c.Detail
	return nil
}

func (q checked) AuditSettle(ctx context.Context, p *AuditSettleParams) (*AuditRecord, error) {
	if p == nil || p.ConversationID == uuid.Nil || p.CallID == "" {
		return nil, invalidf("settling audit: ConversationID and CallID are required")
	}
	if !p.Outcome.Valid() {
		return nil, invalidf("settling audit of call %s: unknown Outcome %q", p.CallID, p.Outcome)
	}
	c := *p
	if len(c.Detail) > 0 {
		var err error
		if c.Detail, err = jsonOr("Detail", c.Detail, "{}"); err != nil {
			return nil, fmt.Errorf("settling audit of call %s: %w", p.CallID, err)
		}
	}
	c.Now = q.at(c.Now)
	return q.Queries.AuditSettle(ctx, &c)
}

func (q checked) AuditList(ctx context.Context, p *AuditListParams) ([]*AuditRecord, error) {
	if p == nil {
		return nil, invalidf("listing audit: params are nil")
	}
	c := *p
	if c.Outcome != "" && !c.Outcome.Valid() {
		return nil, invalidf("listing audit: unknown Outcome %q", c.Outcome)
	}
	if !c.From.IsZero() && !c.To.IsZero() && !c.From.Before(c.To) {
		return nil, invalidf("listing audit: From (%s) must be before To (%s)", c.From, c.To)
	}
	if c.Limit < 0 || c.Limit > MaxAuditLimit {
		return nil, invalidf("listing audit: Limit %d is outside 0..%d", c.Limit, MaxAuditLimit)
	}
	if c.Limit == 0 {
		c.Limit = DefaultAuditLimit
	}
	return q.Queries.AuditList(ctx, &c)
}

func (q checked) AuditGet(ctx context.Context, id uuid.UUID) (*AuditRecord, error) {
	if id == uuid.Nil {
		return nil, invalidf("reading an audit row: the id is required")
	}
	return q.Queries.AuditGet(ctx, id)
}

func (q checked) AuditScan(ctx context.Context, p *AuditScanParams) ([]*AuditRecord, error) {
	if p == nil {
		return nil, invalidf("scanning audit: params are nil")
	}
	c := *p
	if !c.From.IsZero() && !c.To.IsZero() && !c.From.Before(c.To) {
		return nil, invalidf("scanning audit: From (%s) must be before To (%s)", c.From, c.To)
	}
	if c.Limit < 0 || c.Limit > MaxAuditLimit {
		return nil, invalidf("scanning audit: Limit %d is outside 0..%d", c.Limit, MaxAuditLimit)
	}
	if c.Limit == 0 {
		c.Limit = DefaultAuditLimit
	}
	return q.Queries.AuditScan(ctx, &c)
}
