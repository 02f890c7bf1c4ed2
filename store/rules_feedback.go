package store

import (
	"context"
	"fmt"
	"sort"
)

func (q checked) FeedbackSummary(ctx context.Context, p *FeedbackSummaryParams) ([]*FeedbackTotal, error) {
	if p == nil {
		return nil, invalidf("counting feedback: params are nil")
	}
	if p.By != UsageByAgent && p.By != UsageByConversation {
		return nil, fmt.Errorf("counting feedback: %w", invalidf("By is %q: want %q or %q", p.By, UsageByAgent, UsageByConversation))
	}
	if p.Limit < 0 {
		return nil, invalidf("counting feedback: negative Limit")
	}
	c := *p
	if c.Limit == 0 || c.Limit > usageSummaryMaxRows {
		c.Limit = usageSummaryMaxRows
	}
	rows, err := q.Queries.FeedbackSummary(ctx, &c)
	if err != nil {
		return nil, err
	}
	if c.By == UsageByAgent {
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].Key < rows[j].Key })
	}
	return rows, nil
}

func (q checked) BindingMove(ctx context.Context, p *BindingMoveParams) (*Binding, error) {
	if p == nil || p.DeliveredSeq < 0 {
		return nil, invalidf("moving a binding: params are nil or the cursor is negative")
	}
	return q.Queries.BindingMove(ctx, p)
}

func (q checked) BindingRelocate(ctx context.Context, p *BindingRelocateParams) (*Binding, error) {
	if p == nil {
		return nil, invalidf("relocating a binding: params are nil")
	}
	if err := p.Place.Validate(); err != nil {
		return nil, fmt.Errorf("relocating binding %s: %w", p.ID, err)
	}
	return q.Queries.BindingRelocate(ctx, p)
}
