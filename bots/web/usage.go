package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// What the model calls cost: GET /api/usage, and the report the CLI's
// `switchboard usage` prints.

// UsageQuery selects a usage report.
type UsageQuery struct {
	// Since, when set, counts only calls made at or after it.
	Since time.Time
	// Limit caps the rows of each grouping (0: the store's maximum).
	Limit int
}

// ParseUsageQuery reads the parameters of GET /api/usage: since (RFC 3339)
// or days (the last N days, today included, in UTC), and limit.
func ParseUsageQuery(v url.Values, now time.Time) (*UsageQuery, error) {
	q := &UsageQuery{}
	if s := v.Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return nil, fmt.Errorf("%w: since %q is not an RFC 3339 time", core.ErrInvalid, s)
		}
		q.Since = t
	}
	if s := v.Get("days"); s != "" {
		if !q.Since.IsZero() {
			return nil, fmt.Errorf("%w: give since or days, not both", core.ErrInvalid)
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%w: days %q must be a whole number of at least 1", core.ErrInvalid, s)
		}
		q.Since = now.UTC().Truncate(24*time.Hour).AddDate(0, 0, 1-n)
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%w: limit %q must be a whole number of at least 1", core.ErrInvalid, s)
		}
		q.Limit = n
	}
	return q, nil
}

// UsageRow is one line of a usage report.
type UsageRow struct {
	// Key is the agent's name ("" for calls of none), the conversation's
	// id or the UTC day (2006-01-02).
	Key              string  `json:"key"`
	Calls            int64   `json:"calls"`
	InputTokens      int64   `json:"input_tokens"` // uncached input
	OutputTokens     int64   `json:"output_tokens"`
	CachedTokens     int64   `json:"cached_tokens"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	ReasoningTokens  int64   `json:"reasoning_tokens"`
	CostMicroUSD     int64   `json:"cost_micro_usd"`
	CostUSD          float64 `json:"cost_usd"`
	// CacheHitRate is the share of the prompt tokens read from the cache.
	CacheHitRate float64 `json:"cache_hit_rate"`
	// FeedbackUp and FeedbackDown count the 👍 and 👎 people gave the
	// agent's replies (agents, conversations and the total; not days).
	FeedbackUp   int64 `json:"feedback_up"`
	FeedbackDown int64 `json:"feedback_down"`
}

// UsageReport is the answer of GET /api/usage.
type UsageReport struct {
	Since         *time.Time `json:"since,omitempty"`
	Total         UsageRow   `json:"total"`
	Agents        []UsageRow `json:"agents"`
	Conversations []UsageRow `json:"conversations"` // costliest first
	Days          []UsageRow `json:"days"`
}

// UsageReportOf builds the usage report of q from what core read.
func UsageReportOf(q *UsageQuery, u *core.Usage) *UsageReport {
	r := &UsageReport{Total: UsageRow{Key: "total"}}
	if !q.Since.IsZero() {
		since := q.Since.UTC()
		r.Since = &since
	}
	var total core.UsageTotal
	for _, g := range []struct {
		rows []*core.UsageTotal
		out  *[]UsageRow
	}{{u.ByAgent, &r.Agents}, {u.ByConversation, &r.Conversations}, {u.ByDay, &r.Days}} {
		*g.out = []UsageRow{}
		for _, t := range g.rows {
			*g.out = append(*g.out, usageRow(t))
		}
	}
	// Every call has one agent row (none is a row too), so the agents add
	// up to the whole.
	for _, t := range u.ByAgent {
		total.Calls += t.Calls
		total.InputTokens += t.InputTokens
		total.OutputTokens += t.OutputTokens
		total.CachedTokens += t.CachedTokens
		total.CacheWriteTokens += t.CacheWriteTokens
		total.ReasoningTokens += t.ReasoningTokens
		total.CostMicroUSD += t.CostMicroUSD
	}
	total.Key = "total"
	r.Total = usageRow(&total)
	addFeedback(&r.Agents, u.FeedbackByAgent, q.Limit)
	addFeedback(&r.Conversations, u.FeedbackByConversation, q.Limit)
	for _, f := range u.FeedbackByAgent {
		r.Total.FeedbackUp += f.Up
		r.Total.FeedbackDown += f.Down
	}
	return r
}

// addFeedback puts the thumbs counts on the rows of the same key; a key
// rated but without model calls in the window gets a row of its own, while
// the report has room (limit).
func addFeedback(rows *[]UsageRow, fb []*core.FeedbackTotal, limit int) {
	at := map[string]int{}
	for i, row := range *rows {
		at[row.Key] = i
	}
	for _, f := range fb {
		i, ok := at[f.Key]
		if !ok {
			if limit > 0 && len(*rows) >= limit {
				continue
			}
			*rows = append(*rows, UsageRow{Key: f.Key})
			i = len(*rows) - 1
		}
		(*rows)[i].FeedbackUp, (*rows)[i].FeedbackDown = f.Up, f.Down
	}
}

func usageRow(t *core.UsageTotal) UsageRow {
	return UsageRow{
		Key: t.Key, Calls: t.Calls, InputTokens: t.InputTokens, OutputTokens: t.OutputTokens,
		CachedTokens: t.CachedTokens, CacheWriteTokens: t.CacheWriteTokens, ReasoningTokens: t.ReasoningTokens,
		CostMicroUSD: t.CostMicroUSD, CostUSD: float64(t.CostMicroUSD) / 1e6, CacheHitRate: t.CacheHitRate(),
	}
}

// usage serves GET /api/usage, the operator's: it spans every workspace.
func (a *API) usage(w http.ResponseWriter, r *http.Request) error {
	if err := operatorOnly(PrincipalFrom(r.Context()), "read the usage of every agent"); err != nil {
		return err
	}
	q, err := ParseUsageQuery(r.URL.Query(), a.now())
	if err != nil {
		return err
	}
	u, err := a.svc.Usage(r.Context(), principal(r).actor(), q.Since, q.Limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, UsageReportOf(q, u))
	return nil
}

func (a *API) now() time.Time {
	if a.opts.Now != nil {
		return a.opts.Now()
	}
	return time.Now()
}
