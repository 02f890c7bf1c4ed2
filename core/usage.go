package core

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/store"
)

// UsageReader is what the usage report reads: the store, or a test's fake.
type UsageReader interface {
	UsageSummary(ctx context.Context, p *store.UsageSummaryParams) ([]*store.UsageTotal, error)
	FeedbackSummary(ctx context.Context, p *store.FeedbackSummaryParams) ([]*store.FeedbackTotal, error)
}

// FeedbackTotal is the thumbs up and down of one key (an agent, a
// conversation).
type FeedbackTotal = store.FeedbackTotal

// Usage is what the model calls cost and how people rated the answers,
// per agent, per conversation (costliest first) and per day, since a time.
type Usage struct {
	ByAgent, ByConversation, ByDay          []*UsageTotal
	FeedbackByAgent, FeedbackByConversation []*FeedbackTotal
}

// ReadUsage reads the usage of the calls made at or after since (zero:
// all), at most limit rows per grouping (0: the store's maximum). It spans
// every workspace: the operator's to read (Service.Usage; the CLI reads its
// store with it).
func ReadUsage(ctx context.Context, st UsageReader, since time.Time, limit int) (*Usage, error) {
	u := &Usage{}
	for _, g := range []struct {
		by  store.UsageGroup
		out *[]*UsageTotal
	}{{store.UsageByAgent, &u.ByAgent}, {store.UsageByConversation, &u.ByConversation}, {store.UsageByDay, &u.ByDay}} {
		rows, err := st.UsageSummary(ctx, &store.UsageSummaryParams{By: g.by, Since: since, Limit: limit})
		if err != nil {
			return nil, fmt.Errorf("reading usage by %s: %w", g.by, err)
		}
		*g.out = rows
	}
	for _, g := range []struct {
		by  store.UsageGroup
		out *[]*FeedbackTotal
	}{{store.UsageByAgent, &u.FeedbackByAgent}, {store.UsageByConversation, &u.FeedbackByConversation}} {
		fb, err := st.FeedbackSummary(ctx, &store.FeedbackSummaryParams{By: g.by, Since: since, Limit: limit})
		if err != nil {
			return nil, fmt.Errorf("counting feedback by %s: %w", g.by, err)
		}
		*g.out = fb
	}
	return u, nil
}

// Usage is ReadUsage for a: the operator only, for the usage spans every
// workspace.
func (s *Service) Usage(ctx context.Context, a workspace.Actor, since time.Time, limit int) (*Usage, error) {
	if !a.Operator {
		return nil, workspace.Forbidden("only the operator may read the usage of every agent")
	}
	return ReadUsage(ctx, s.st, since, limit)
}
