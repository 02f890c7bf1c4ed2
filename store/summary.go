package store

import (
	"context"

	"github.com/google/uuid"
)

// Summaries: a long conversation's log is never cut, but what a model is
// sent is. A summary entry (EntrySummary) condenses the log up to a seq
// that its content names; a turn reads the latest summary and the entries
// after the seq it covers, never the whole log:
//
//	seq  1 … 480 │ 481 … 530 │ 531 (summary of 1…480) │ 532 …
//	     summarised   kept        the summary            kept
//
// The summary has a seq of its own, after whatever was in the log when it
// was written, so it forks, streams and time-travels with the log. The
// store does not read its content: which seqs a summary covers is the
// engine's (core.SummaryContent).

// SummaryQueries finds the summary a turn starts from.
type SummaryQueries interface {
	// EntryLatestSummary is the summary entry of the conversation with the
	// highest seq; ErrNotFound when it has none. One index probe, however
	// long the log.
	EntryLatestSummary(ctx context.Context, conversationID uuid.UUID) (*Entry, error)
}
