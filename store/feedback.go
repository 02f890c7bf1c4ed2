package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Ratings of replies (feedback entries) counted for the usage report, and
// moving a binding to another conversation (an edit that forks).

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

// BindingMoveParams moves a binding to another conversation.
type BindingMoveParams struct {
	ID             uuid.UUID
	ConversationID uuid.UUID
	// DeliveredSeq is the cursor in the new conversation: what it holds up
	// to this seq is already on the platform.
	DeliveredSeq int64
	Now          time.Time
}

// BindingRelocateParams gives a binding another place on the same platform
// (a routine run's place becomes the thread under its first post).
type BindingRelocateParams struct {
	ID    uuid.UUID
	Place Place
	Now   time.Time
}
