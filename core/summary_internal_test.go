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
