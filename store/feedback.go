package store

import (
	"context"
	"time"
)

// Ratings of replies (feedback entries) counted for the usage report.

// FeedbackSummaryParams selects a feedback count.
type FeedbackSummaryParams struct {
	// By is UsageByAgent (the agent that wrote the rated reply) or
	// UsageByConversation.
	By UsageGroup
	// Since, when set, counts only ratings given at or after it.
	Since time.Time
	// Limit caps the rows (default and maximum 1000), keeping the most
	// rated.
	Limit int
}

// FeedbackTotal is one row of a feedback count: thumbs up and down.
type FeedbackTotal struct {
	Key  string
	Up   int64
	Down int64
}

// FeedbackQueries are the feedback count's queries.
type FeedbackQueries interface {
	// FeedbackSummary counts feedback entries by p.By: agents in name
	// order, conversations most rated first.
	FeedbackSummary(ctx context.Context, p *FeedbackSummaryParams) ([]*FeedbackTotal, error)
}
