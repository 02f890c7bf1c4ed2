package store

import (
	"context"
	"fmt"
	"sort"
)

// usageSummaryMaxRows caps a usage report.
const usageSummaryMaxRows = 1000

func (q checked) UsageSummary(ctx context.Context, p *UsageSummaryParams) ([]*UsageTotal, error) {
	if p == nil {
		return nil, invalidf("summing usage: params are nil")
	}
	switch p.By {
	case UsageByAgent, UsageByConversation, UsageByDay:
	default:
		return nil, fmt.Errorf("summing usage: %w", invalidf("By is %q: want %q, %q or %q", p.By, UsageByAgent, UsageByConversation, UsageByDay))
	}
	if p.Limit < 0 {
		return nil, invalidf("summing usage: negative Limit")
	}
	c := *p
	if c.Limit == 0 || c.Limit > usageSummaryMaxRows {
		c.Limit = usageSummaryMaxRows
	}
	rows, err := q.Queries.UsageSummary(ctx, &c)
	if err != nil {
		return nil, err
	}
	// The drivers return the costliest rows first, so Limit keeps those;
	// agents and days read best in order.
	if c.By != UsageByConversation {
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].Key < rows[j].Key })
	}
	return rows, nil
}
