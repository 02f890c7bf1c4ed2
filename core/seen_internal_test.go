package core

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/store"
)

func TestInSeenOrder(t *testing.T) {
	t.Parallel()
	turnA, turnB := uuid.New(), uuid.New()
	user := func(seq int64) *store.Entry {
		return &store.Entry{Seq: &seq, Kind: store.EntryUser, Author: store.UserAuthor("alice"), Content: mustJSON(UserContent{Text: fmt.Sprint("u", seq)})}
	}
	own := func(seq int64, turn uuid.UUID, kind store.EntryKind) *store.Entry {
		return &store.Entry{Seq: &seq, Kind: kind, Author: store.AgentAuthor("atlas"), TurnID: &turn, Content: mustJSON(ToolCallContent{CallID: fmt.Sprint("c", seq)})}
	}
	reply := func(seq, seen int64, turn uuid.UUID) *store.Entry {
		return &store.Entry{Seq: &seq, Kind: store.EntryAssistant, Author: store.AgentAuthor("atlas"), TurnID: &turn, Content: mustJSON(AssistantContent{Text: fmt.Sprint("r", seq), SeenThrough: seen})}
	}
	seqs := func(es []*store.Entry) string {
		var out []string
		for _, e := range es {
			out = append(out, fmt.Sprint(e.SeqValue()))
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		name    string
		entries []*store.Entry
		want    string
	}{
		{"no gap", []*store.Entry{user(1), reply(2, 1, turnA), user(3), reply(4, 3, turnB)}, "1,2,3,4"},
		{"not recorded (older replies)", []*store.Entry{user(1), user(2), reply(3, 0, turnA)}, "1,2,3"},
		{"a message while the model streamed", []*store.Entry{user(1), user(2), reply(3, 1, turnA)}, "1,3,2"},
		{"answered by its own turn", []*store.Entry{user(1), user(2), reply(3, 1, turnA), reply(4, 3, turnB)}, "1,3,2,4"},
		{"while a tool ran: the turn's own result stays",
			[]*store.Entry{user(1), own(2, turnA, store.EntryToolCall), user(3), own(4, turnA, store.EntryToolResult), reply(5, 2, turnA)}, "1,2,4,5,3"},
		{"two messages keep their order", []*store.Entry{user(1), user(2), user(3), reply(4, 1, turnA), user(5)}, "1,4,2,3,5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := seqs(inSeenOrder(tc.entries)); got != tc.want {
				t.Fatalf("order = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestSeenThroughIsReadFromTheContent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		content string
		want    int64
	}{
		{string(mustJSON(AssistantContent{Text: "hi", SeenThrough: 41})), 41},
		{`{"text": "hi", "agent": "atlas", "seen_through": 7}`, 7}, // as Postgres jsonb prints it
		{string(mustJSON(AssistantContent{Text: `say "seen_through": 99 to me`})), 0},
		{string(mustJSON(AssistantContent{Text: `"seen_through":5`, SeenThrough: 12})), 12},
		{`{"text":"old reply"}`, 0},
	} {
		if got := seenThrough([]byte(tc.content)); got != tc.want {
			t.Errorf("seenThrough(%s) = %d, want %d", tc.content, got, tc.want)
		}
	}
}

// BenchmarkSeenOrderCost: what inSeenOrder adds to building a turn's
// prompt from a 400-entry log without gaps (the usual case); compare
// ns/op of the two sub-benchmarks, measured in the same run.
func BenchmarkSeenOrderCost(b *testing.B) {
	turn := uuid.New()
	var es []*store.Entry
	for i := int64(1); i <= 400; i += 2 {
		u, r := i, i+1
		es = append(es,
			&store.Entry{Seq: &u, Kind: store.EntryUser, Author: store.UserAuthor("alice"), Content: mustJSON(UserContent{Text: strings.Repeat("a question ", 20)})},
			&store.Entry{Seq: &r, Kind: store.EntryAssistant, Author: store.AgentAuthor("atlas"), TurnID: &turn, Content: mustJSON(AssistantContent{Text: strings.Repeat("an answer ", 60), Agent: "atlas", SeenThrough: u})})
	}
	ag := &config.Agent{Name: "atlas", Model: "scripted:x", MaxTokens: 100}
	b.Run("buildRequest", func(b *testing.B) {
		for b.Loop() {
			if _, err := buildRequest(ag, "api", nil, nil, nil, es, nil, time.Time{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("inSeenOrder", func(b *testing.B) {
		for b.Loop() {
			if out := inSeenOrder(es); len(out) != len(es) {
				b.Fatal("reordered a log without gaps")
			}
		}
	})
}
