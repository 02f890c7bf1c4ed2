package store

import (
	"context"
	"time"
)

// Counts for monitoring: what a metrics scrape reads. Each is one
// aggregate query, cheap enough to run on every scrape.

// WorkDepth is how many work items of one kind are in one state.
type WorkDepth struct {
	Kind  string
	State WorkState
	Count int64
}

// ApprovalCountParams counts the approvals still waiting for a person.
type ApprovalCountParams struct {
	// Now: a pending approval whose expiry is before it no longer waits
	// (the sweep marks it expired).
	Now time.Time
}

// StatsQueries are the monitoring counts.
type StatsQueries interface {
	// WorkCount counts the work items that are not finished (available,
	// running) and those that failed for good, by kind and state, in one
	// query. Done and cancelled items are not counted. Kinds and states
	// with no items have no row.
	WorkCount(ctx context.Context) ([]*WorkDepth, error)
	// ApprovalCount counts the approvals pending at p.Now.
	ApprovalCount(ctx context.Context, p *ApprovalCountParams) (int64, error)
}
