package core

import (
	"testing"

	"github.com/switchboardhq/switchboard/store"
)

// logOf builds a log from a compact script: u (a person's message), a (the
// agent's text), c<id> (a tool call), r<id> (its result).
func logOf(t *testing.T, script ...string) []*store.Entry {
	t.Helper()
	var out []*store.Entry
	for i, s := range script {
		seq := int64(i + 1)
		e := &store.Entry{Seq: &seq}
		switch s[0] {
		case 'u':
			e.Kind, e.Content = store.EntryUser, mustJSON(UserContent{Text: "question"})
		case 'a':
			e.Kind, e.Content = store.EntryAssistant, mustJSON(AssistantContent{Text: "answer"})
		case 'c':
			e.Kind, e.Content = store.EntryToolCall, mustJSON(ToolCallContent{CallID: s[1:], Name: "lookup"})
		case 'r':
			e.Kind, e.Content = store.EntryToolResult, mustJSON(ToolResultContent{CallID: s[1:], Name: "lookup", Output: []byte(`"ok"`)})
		default:
			t.Fatalf("unknown script item %q", s)
		}
		out = append(out, e)
	}
	return out
}

// TestCutPoint: where a summary may end. Each entry weighs 10 tokens here.
func TestCutPoint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		log            []string
		keep, maxChunk int
		want           int // the index of the first entry kept
	}{
		{name: "keeps what fits, cut before a message", log: []string{"u", "a", "u", "a", "u", "a"}, keep: 25, maxChunk: 1000, want: 4},
		{name: "keeps at least the last exchange when little fits", log: []string{"u", "a", "u", "a", "u", "a"}, keep: 5, maxChunk: 1000, want: 4},
		{name: "a call and its result stay together", log: []string{"u", "c1", "r1", "a", "u", "c2", "u", "r2", "a"}, keep: 35, maxChunk: 1000, want: 4},
		{name: "a call still waiting keeps everything from it", log: []string{"u", "a", "u", "c1", "u", "a", "u", "a"}, keep: 10, maxChunk: 1000, want: 2},
		{name: "nothing to cut before the only message", log: []string{"u", "c1", "r1", "a"}, keep: 0, maxChunk: 1000, want: 0},
		{name: "a long catch-up goes in chunks", log: []string{"u", "a", "u", "a", "u", "a", "u", "a", "u", "a"}, keep: 20, maxChunk: 45, want: 4},
		{name: "a chunk no cut fits in takes the first cut", log: []string{"u", "c1", "r1", "c2", "r2", "a", "u", "a", "u", "a"}, keep: 20, maxChunk: 30, want: 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			entries := logOf(t, tc.log...)
			tokens := make([]int, len(entries))
			for i := range tokens {
				tokens[i] = 10
			}
			if got := cutPoint(entries, tokens, tc.keep, tc.maxChunk); got != tc.want {
				t.Fatalf("cutPoint(%v, keep %d, chunk %d) = %d; want %d", tc.log, tc.keep, tc.maxChunk, got, tc.want)
			}
		})
	}
}

// TestTailWindow: what a model call is sent when the context is over its
// limit and no summary could be written. The limit is the weight of the
// newest fit entries.
func TestTailWindow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		log   []string
		fit   int // entries of the real weight that fit in the limit
		first int // the index of the first entry sent
	}{
		{name: "the newest exchanges that fit, from a message", log: []string{"u", "a", "u", "a", "u", "a"}, fit: 3, first: 4},
		{name: "everything when it fits", log: []string{"u", "a", "u", "a"}, fit: 4, first: 0},
		{name: "never a result without its call", log: []string{"u", "a", "u", "c1", "r1", "a"}, fit: 2, first: 5},
		{name: "from a call when no message fits", log: []string{"u", "a", "u", "c1", "r1", "a"}, fit: 3, first: 3},
		{name: "the smallest part a cut allows when none fits", log: []string{"u", "c1", "r1", "c2", "r2"}, fit: 1, first: 3},
		{name: "a cut after a call without a message after it", log: []string{"u", "c1", "r1", "c2", "r2", "a"}, fit: 3, first: 3},
		{name: "never after a result whose call is not in the entries", log: []string{"r0", "u", "a", "u", "a"}, fit: 5, first: 1},
		{name: "nor before one", log: []string{"u", "r0", "a", "u", "a"}, fit: 5, first: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			entries := logOf(t, tc.log...)
			limit := 0
			for _, e := range entries[len(entries)-tc.fit:] {
				limit += entryTokens(e)
			}
			got := tailWindow(entries, limit)
			if first := len(entries) - len(got); first != tc.first {
				t.Fatalf("tailWindow(%v, %d tokens) starts at %d; want %d", tc.log, limit, first, tc.first)
			}
		})
	}
}

func TestSummaryLimit(t *testing.T) {
	t.Parallel()
	if got := summaryLimit(40000); got != 48000 {
		t.Fatalf("summaryLimit(40000) = %d; want the budget and a fifth, 48000", got)
	}
}
