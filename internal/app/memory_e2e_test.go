package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/store"
)

// TestMemoryEndToEnd, on both stores, through the real app on the fake
// Anthropic: in one Slack thread the agent calls remember; in another
// thread, a later turn is sent the note in its layered memory (in the
// per-turn block after the history, never in the cached system prompt),
// and the agent's recall finds it and counts its use.
func TestMemoryEndToEnd(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		fake := modeltest.NewAnthropic(t)
		env := anthropicEnv(fake)
		// A budget a loaded machine does not miss: the test is about the
		// layers (memory's own tests are about the budget).
		config := "agents:\n  - name: atlas\n    persona: You plan travel.\n    family: travel\nmemory:\n  budget: 10s\n" + openAccess
		e := startSlack(t, db(t), envOptions{env: env, config: config})

		fact := "Ana's favourite city is Lisbon"
		input, _ := json.Marshal(map[string]any{"text": fact, "tags": []string{"ana"}})
		fake.Push(
			modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "toolu_remember", Name: "remember", Input: string(input)}}},
			modeltest.Reply{Text: "Noted."},
		)
		e.mustPost(newEvent("EvMem1", mention("C0MEM", "1700003000.000001", "", alice, "remember that "+fact)))
		e.waitReply("C0MEM", "Noted.")
		e.waitIdle()
		reqs := fake.Requests()
		if len(reqs) != 2 {
			t.Fatalf("the fake model got %d requests; want 2", len(reqs))
		}
		if tools := toolNames(reqs[0].JSON()); !strings.Contains(tools, "remember") || !strings.Contains(tools, "recall") {
			t.Fatalf("tools offered = %s; want remember and recall", tools)
		}
		if r := toolResult(t, reqs[1].JSON(), "toolu_remember"); r.isError || !strings.Contains(r.text, `\"scope\":\"agent\"`) {
			t.Fatalf("remember's result = %+v; want the note saved in the agent scope", r)
		}
		notes, err := e.store.NoteList(context.Background(), &store.NoteListParams{Agent: "atlas"})
		if err != nil || len(notes) != 1 || notes[0].Text != fact || notes[0].Family != "travel" {
			t.Fatalf("stored notes = %+v, %v; want the one note, of family travel", notes, err)
		}

		// Another conversation: a new thread in another channel.
		fake.Push(
			modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "toolu_recall", Name: "recall", Input: `{"query": "Ana favourite city"}`}}},
			modeltest.Reply{Text: "Ana loves Lisbon."},
		)
		e.mustPost(newEvent("EvMem2", mention("C0MEM2", "1700003000.000002", "", alice, "Which city does Ana like best? Her favourite.")))
		e.waitReply("C0MEM2", "Ana loves Lisbon.")
		e.waitIdle()
		reqs = fake.Requests()
		if len(reqs) != 4 {
			t.Fatalf("the fake model got %d requests; want 4", len(reqs))
		}
		first := reqs[2].JSON()
		if sys := systemOf(t, first); strings.Contains(sys, fact) {
			t.Fatalf("the note is in the cached system prompt; it belongs in the per-turn block:\n%s", sys)
		}
		turn := lastUserText(t, first)
		if !strings.Contains(turn, "Background from your notes:\n- "+fact+" [ana]") {
			t.Fatalf("the per-turn block of the other conversation lacks the note:\n%s", turn)
		}
		if r := toolResult(t, reqs[3].JSON(), "toolu_recall"); r.isError || !strings.Contains(r.text, "Lisbon") {
			t.Fatalf("recall's result = %+v; want the note", r)
		}
		notes, err = e.store.NoteList(context.Background(), &store.NoteListParams{Agent: "atlas"})
		if err != nil || len(notes) != 1 || notes[0].Uses != 1 || notes[0].LastUsedAt == nil {
			t.Fatalf("after recall the note = %+v, %v; want one use counted", notes, err)
		}
	})
}

// lastUserText is the text of the last user message of a request: where
// the per-turn block goes.
func lastUserText(tb testing.TB, body map[string]any) string {
	tb.Helper()
	msgs, _ := body["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		if m["role"] != "user" {
			continue
		}
		var parts []string
		content, _ := m["content"].([]any)
		for _, c := range content {
			if block, _ := c.(map[string]any); block["type"] == "text" {
				parts = append(parts, block["text"].(string))
			}
		}
		return strings.Join(parts, "\n")
	}
	tb.Fatal("no user message in the request")
	return ""
}
