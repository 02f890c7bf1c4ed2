package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/modeltest"
	"github.com/switchboardhq/switchboard/store"
)

// summarizerPrompt starts the system prompt of a summary request.
const summarizerPrompt = "You keep the running summary of a chat conversation"

// requestTokens is the fake's own estimate of a request's prompt (the one
// it reports as usage): a quarter of its bytes.
func requestTokens(r modeltest.Request) int { return len(r.Body) / 4 }

func isSummaryRequest(r modeltest.Request) bool {
	return strings.Contains(string(r.Body), summarizerPrompt)
}

// TestSlackLongConversationIsSummarised: a Slack thread whose log holds
// 2,000 entries more than the agent's context budget. The turn that finds
// it so long summarises it before its model call (the summary item queued
// behind turns could come too late): in rounds, each summary request (to
// the context.summary_model, another fake) under the budget itself,
// written as one entry covering the log from seq 1. That turn's request and
// the next one's to the (fake) Anthropic model are the summary and the
// newest entries, under the budget, while the log still holds every entry.
func TestSlackLongConversationIsSummarised(t *testing.T) {
	t.Parallel()
	const budget, keep = 20000, 2000
	eachStore(t, func(t *testing.T, db databaseFunc) {
		fake := modeltest.NewAnthropic(t)
		fake.Push(modeltest.Reply{Text: "Noted, I keep the harbour log."})
		summarizer := modeltest.NewOpenAI(t)
		summarizer.Default(modeltest.Reply{Text: "## Harbour log\n- Alice logs tide gauge readings (3.0 to 3.9 m) and south-west winds; the agent acknowledges each."})
		env := anthropicEnv(fake)
		env["OPENAI_API_KEY"], env["OPENAI_BASE_URL"] = "sk-test-summaries", summarizer.URL
		cfg := openAccess + fmt.Sprintf("context:\n  summarize_at: %d\n  keep_recent: %d\n  summary_model: openai:gpt-4.1-mini\n", budget, keep)
		e := startSlack(t, db(t), envOptions{env: env, config: cfg})
		const ch, ts = "C0HARBOUR", "1700000700.000100"
		e.mustPost(newEvent("EvLong1", mention(ch, ts, "", alice, "keep the harbour log for me")))
		e.waitIdle()
		conv := e.conversation(ch, ts)

		// 2,000 entries of harbour log, as if the thread had run for months.
		ctx := context.Background()
		err := e.store.InTx(ctx, func(q store.Queries) error {
			for i := 1; i <= 2000; i++ {
				kind, content := store.EntryUser, any(core.UserContent{
					Text:   fmt.Sprintf("Entry %04d: the tide gauge read 3.%d m at 06:%02d and the wind came from the south-west.", i, i%10, i%60),
					UserID: alice, Platform: "slack", Workspace: e2eTeam,
				})
				author := store.UserAuthor(alice)
				if i%2 == 0 {
					kind, author = store.EntryAssistant, store.AgentAuthor("assistant")
					content = core.AssistantContent{Text: fmt.Sprintf("Entry %04d logged: noted the reading and the wind.", i)}
				}
				if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: conv.ID, Kind: kind, Author: author, Content: mustMarshal(t, content)}); err != nil {
					return err
				}
			}
			// Shown in the thread long ago: not for delivery now.
			bs, err := q.BindingListByConversation(ctx, conv.ID)
			if err != nil || len(bs) != 1 {
				return fmt.Errorf("the thread's binding: %v (%d)", err, len(bs))
			}
			_, err = q.BindingAdvance(ctx, &store.BindingAdvanceParams{ID: bs[0].ID, DeliveredSeq: conv.LastSeq + 2000})
			return err
		})
		if err != nil {
			t.Fatalf("seeding the log: %v", err)
		}

		fake.Push(modeltest.Reply{Text: "The highest reading was 3.9 m."})
		e.mustPost(newEvent("EvLong2", mention(ch, "1700000701.000100", ts, alice, "what was the highest reading?")))
		e.waitReply(ch, "The highest reading was 3.9 m.")
		e.waitIdle()
		summaries := e.entries(conv.ID, store.EntrySummary)
		if len(summaries) == 0 {
			t.Fatal("no summary entry after a turn over the budget")
		}
		rounds := len(summarizer.Requests())
		for _, r := range summarizer.Requests() {
			if !isSummaryRequest(r) {
				t.Fatalf("a request to the summary model is not a summary request: %.300s", r.Body)
			}
			if requestTokens(r) > budget+keep {
				t.Errorf("a summary request sent %d tokens; want each round within the budget (%d)", requestTokens(r), budget)
			}
		}
		if rounds < 2 || len(summaries) != 1 {
			t.Errorf("%d summary requests and %d summary entries; want several rounds written as one summary", rounds, len(summaries))
		}
		last := decode[core.SummaryContent](t, summaries[len(summaries)-1])
		if last.FromSeq != 1 || last.ThroughSeq < 1900 || !strings.Contains(last.Text, "Harbour log") {
			t.Errorf("the latest summary = %+v; want it to cover the log from seq 1 to all but its newest entries", last)
		}
		if reqs := fake.Requests(); len(reqs) != 2 || requestTokens(reqs[1]) > budget {
			t.Fatalf("the turn over the budget made %d requests, its last of %d tokens; want one, summarised under the %d budget", len(reqs)-1, requestTokens(reqs[len(reqs)-1]), budget)
		}

		fake.Push(modeltest.Reply{Text: "The wind was south-west throughout."})
		e.mustPost(newEvent("EvLong3", mention(ch, "1700000702.000100", ts, alice, "and the wind?")))
		e.waitReply(ch, "The wind was south-west throughout.")
		e.waitIdle()
		reqs := fake.Requests()
		next := reqs[len(reqs)-1]
		if isSummaryRequest(next) {
			t.Fatal("the last request is a summary request; want the turn's")
		}
		if got := requestTokens(next); got > budget {
			t.Errorf("the turn after the summary sent %d tokens; want under the %d budget", got, budget)
		}
		body := next.JSON()
		system := body["system"].([]any)
		if len(system) != 2 || !strings.Contains(system[1].(map[string]any)["text"].(string), "## Harbour log") {
			t.Errorf("the turn's system = %v; want the stable block, then the summary", system)
		}
		sent := string(next.Body)
		if strings.Contains(sent, "Entry 0001:") || !strings.Contains(sent, "Entry 2000 logged") || !strings.Contains(sent, "and the wind?") {
			t.Errorf("the turn after the summary must send the newest entries and not the oldest; sent %d bytes", len(sent))
		}

		// The log is whole: every seeded entry, the three exchanges and the
		// summaries, seqs without a gap.
		all := e.entries(conv.ID, "")
		if got := len(e.entries(conv.ID, store.EntryUser)); got != 1003 {
			t.Errorf("user entries = %d; want 1,000 seeded and 3 mentions", got)
		}
		if got := len(e.entries(conv.ID, store.EntryAssistant)); got != 1003 {
			t.Errorf("assistant entries = %d; want 1,000 seeded and 3 replies", got)
		}
		for i, en := range all {
			if en.SeqValue() != int64(i+1) {
				t.Fatalf("entry %d has seq %d; want the log without a gap", i, en.SeqValue())
			}
		}
	})
}

// TestSlackRulebook: "!rules <text>" typed in a Slack thread sets the
// thread's rulebook, which the next turn sends in its stable block, apart
// from the personality; "!rules" shows it; the API reads and replaces it
// (the new text reaches the next turn, byte-identical across turns until
// it changes) and an empty text clears it.
func TestSlackRulebook(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		fake := modeltest.NewAnthropic(t)
		fake.Push(modeltest.Reply{Text: "High tide is at noon."}, modeltest.Reply{Text: "Noon."}, modeltest.Reply{Text: "Six."},
			modeltest.Reply{Text: "Six, as before."}, modeltest.Reply{Text: "At six in the evening."})
		e := startSlack(t, db(t), envOptions{env: anthropicEnv(fake)})
		const ch, ts = "C0RULES", "1700000800.000100"
		e.mustPost(newEvent("EvRules1", mention(ch, ts, "", alice, "when is high tide?")))
		e.waitReply(ch, "High tide is at noon.")
		e.waitIdle()
		if sys := systemOf(t, lastRequest(fake)); strings.Contains(sys, core.RulebookHeading) {
			t.Fatalf("a conversation without a rulebook sent one:\n%s", sys)
		}

		e.mustPost(newEvent("EvRules2", mention(ch, "1700000801.000100", ts, alice, "!rules Answer in one word.\nNever use emojis.")))
		e.waitReply(ch, "Rulebook set.")
		e.mustPost(newEvent("EvRules3", mention(ch, "1700000802.000100", ts, alice, "!rules")))
		shownRules := shown(e.waitReply(ch, "Rulebook of this conversation"))
		if !strings.Contains(shownRules, "Answer in one word.\nNever use emojis.") || !strings.Contains(shownRules, "set by "+alice) {
			t.Errorf("!rules shows %q; want the rulebook and who set it", shownRules)
		}
		e.waitIdle()
		if n := len(fake.Requests()); n != 1 {
			t.Fatalf("model requests after two commands = %d; want none for the commands", n)
		}
		e.mustPost(newEvent("EvRules4", mention(ch, "1700000803.000100", ts, alice, "when exactly?")))
		e.waitReply(ch, "Noon.")
		e.waitIdle()
		stable := stableBlockOf(t, lastRequest(fake))
		want := core.RulebookHeading + "\nAnswer in one word.\nNever use emojis."
		if !strings.Contains(stable, want) {
			t.Fatalf("the stable block lacks the rulebook %q:\n%s", want, stable)
		}
		if i, j := strings.Index(stable, "How you work:"), strings.Index(stable, core.RulebookHeading); i < 0 || j < i {
			t.Errorf("the rulebook must follow the personality and the house rules in the stable block:\n%s", stable)
		}

		conv := e.conversation(ch, ts)
		path := "/api/conversations/" + conv.ID.String() + "/rules"
		var got web.RulebookJSON
		e.apiJSON(t, http.MethodGet, path, nil, http.StatusOK, &got)
		if got.Text != "Answer in one word.\nNever use emojis." || got.SetBy != string(store.UserAuthor(alice)) || got.UpdatedAt == nil {
			t.Errorf("GET %s = %+v; want the rulebook alice set", path, got)
		}
		e.apiJSON(t, http.MethodPut, path, map[string]string{"text": "Answer with a time of day, nothing else."}, http.StatusOK, &got)
		if got.Text != "Answer with a time of day, nothing else." || got.SetBy != "local" {
			t.Errorf("PUT %s = %+v; want the new rulebook, set by the local operator", path, got)
		}
		for i, q := range []string{"and low tide?", "low tide again?"} {
			e.mustPost(newEvent(fmt.Sprintf("EvRules%d", 5+i), mention(ch, fmt.Sprintf("1700000804.00010%d", i), ts, alice, q)))
			e.waitIdle()
		}
		reqs := fake.Requests()
		a, b := stableBlockOf(t, reqs[len(reqs)-2].JSON()), stableBlockOf(t, reqs[len(reqs)-1].JSON())
		if !strings.Contains(b, "Answer with a time of day, nothing else.") || strings.Contains(b, "Never use emojis.") {
			t.Errorf("the stable block after PUT = %q; want the new rulebook only", b)
		}
		if a != b {
			t.Errorf("the stable block changed between two turns with the same rulebook:\n%s\n---\n%s", a, b)
		}
		e.apiJSON(t, http.MethodPut, path, map[string]string{"text": ""}, http.StatusOK, &got)
		e.apiJSON(t, http.MethodGet, path, nil, http.StatusOK, &got)
		if got.Text != "" {
			t.Errorf("GET after an empty PUT = %+v; want no rulebook", got)
		}
		e.mustPost(newEvent("EvRules7", mention(ch, "1700000805.000100", ts, alice, "one last time?")))
		e.waitIdle()
		if sys := systemOf(t, lastRequest(fake)); strings.Contains(sys, core.RulebookHeading) {
			t.Errorf("the rulebook was cleared but is still sent:\n%s", sys)
		}
	})
}

// stableBlockOf is the text of the request's cached system block.
func stableBlockOf(tb testing.TB, body map[string]any) string {
	tb.Helper()
	system, _ := body["system"].([]any)
	for _, b := range system {
		m, _ := b.(map[string]any)
		if _, cached := m["cache_control"]; cached {
			return m["text"].(string)
		}
	}
	tb.Fatalf("no system block carries cache_control: %v", system)
	return ""
}

func mustMarshal(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
