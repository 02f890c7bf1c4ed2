package store

import (
	"context"
	"time"
)

// The usage report: what the model calls recorded with UsageRecord add up
// to, per agent, per conversation or per day.

// UsageGroup is what a usage report sums by.
type UsageGroup string

// Usage groups.
const (
	UsageByAgent        UsageGroup = "agent"        // Key: the agent's name ("" for none)
	UsageByConversation UsageGroup = "conversation" // Key: the conversation's id
	UsageByDay          UsageGroup = "day"          // Key: the UTC day, 2006-01-02
)

// UsageSummaryParams selects a usage report.
type UsageSummaryParams struct {
	By UsageGroup
	// Since, when set, counts only calls recorded at or after it.
	Since time.Time
	// Limit caps the rows (default and maximum 1000), keeping the
	// costliest.
	Limit int
}

// UsageTotal is one row of a usage report.
type UsageTotal struct {
	Key              string
	Calls            int64
	InputTokens      int64 // billed at the base input rate
	OutputTokens     int64
	CachedTokens     int64 // read from the prompt cache
	CacheWriteTokens int64 // written to the prompt cache
	ReasoningTokens  int64
	CostMicroUSD     int64
	AudioMs          int64 // heard by transcriptions
	SpeechChars      int64 // spoken by speeches
}

// PromptTokens is the size of the prompts, cached or not.
func (t UsageTotal) PromptTokens() int64 {
	return t.InputTokens + t.CachedTokens + t.CacheWriteTokens
}

// CacheHitRate is the share of the prompts read from the cache, 0 to 1
// (0 when there were none). Cache writes count as uncached input: they are
// the prompt the cache missed.
func (t UsageTotal) CacheHitRate() float64 {
	if n := t.PromptTokens(); n > 0 {
		return float64(t.CachedTokens) / float64(n)
	}
	return 0
}

// UsageQueries are the usage report's queries.
type UsageQueries interface {
	// UsageSummary sums recorded usage by p.By: agents and days in key
	// order, conversations costliest first.
	UsageSummary(ctx context.Context, p *UsageSummaryParams) ([]*UsageTotal, error)
}
