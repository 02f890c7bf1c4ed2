package slackcard_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/google/uuid"
	"github.com/slack-go/slack"

	"github.com/switchboardhq/switchboard/bots/slack/slackcard"
	"github.com/switchboardhq/switchboard/bots/slack/slacklimit"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/cards/cardstest"
)

var (
	update = flag.Bool("update", false, "rewrite golden files")
)

// payload is what chat.postMessage would carry for the card.
func payload(t testing.TB, blocks []slack.Block, fallback string) []byte {
	t.Helper()
	// Goldens keep <, > and & readable; the wire meaning is the same.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(struct {
		Text   string        `json:"text"`
		Blocks []slack.Block `json:"blocks"`
	}{fallback, blocks})
	require.NoError(t, err, "marshalling blocks")
	return buf.Bytes()
}

func render(t testing.TB, s *cards.Stamped) []byte {
	t.Helper()
	blocks, fallback, err := slackcard.Render(s, slackcard.Options{EntryID: cardstest.EntryID})
	require.NoError(t, err, "rendering")
	return payload(t, blocks, fallback)
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".json")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test -update")
	if !bytes.Equal(want, got) {
		t.Fatalf("%s differs from the golden file (run go test -update and review the diff); got:\n%s", path, got)
	}
	// Every golden is held to Slack's limits, as stored on disk.
	require.NoError(t, slackcard.CheckLimits(want), "golden %s breaks Slack's limits", path)
}

func TestGolden(t *testing.T) {
	for _, ex := range cardstest.Examples() {
		t.Run(ex.Name, func(t *testing.T) {
			s, err := cards.Stamp(&ex.Result, nil)
			require.NoError(t, err)
			golden(t, ex.Name, render(t, s))
		})
	}
}

func TestGoldenOutcome(t *testing.T) {
	ex := exampleNamed(t, "email_full")
	s, err := cards.Stamp(&ex.Result, nil)
	require.NoError(t, err)
	out := render(t, s.WithOutcome("✅ Sent by <@U123> & archived"))
	golden(t, "email_full_outcome", out)
	require.NotContains(t, string(out), `"type": "actions"`, "buttons give way to the outcome")
	require.Contains(t, string(out), "✅ Sent by &lt;@U123&gt; &amp; archived", "the outcome is shown, escaped")
}

func exampleNamed(t *testing.T, name string) cardstest.Example {
	for _, ex := range cardstest.Examples() {
		if ex.Name == name {
			return ex
		}
	}
	t.Fatalf("no example %s", name)
	return cardstest.Example{}
}

// A card saved before its template changed or disappeared renders exactly
// as it was sent: byte for byte the golden drawn with the original library.
func TestSavedCardSurvivesTemplateChange(t *testing.T) {
	for _, name := range []string{"hotel_full", "email_full", "stock_quote_full", "news_full"} {
		t.Run(name, func(t *testing.T) {
			ex := exampleNamed(t, name)
			lib := cards.DefaultLibrary()
			s, err := cards.Stamp(&ex.Result, lib)
			require.NoError(t, err)
			saved, err := json.Marshal(s)
			require.NoError(t, err)

			tm, ok := lib.Get(ex.Result.Template)
			require.True(t, ok)
			tm.Layout.Style, tm.Layout.Icon, tm.Layout.Label = cards.StyleList, "🤡", "Changed"
			require.NoError(t, lib.Put(tm))
			changed, err := cards.Stamp(&ex.Result, lib)
			require.NoError(t, err)
			require.NotEqual(t, string(render(t, s)), string(render(t, changed)), "the change must be visible on new cards, else this test proves nothing")

			for _, step := range []string{"changed", "removed"} {
				if step == "removed" {
					lib.Remove(ex.Result.Template)
					lib.Remove(cards.DefaultPrefix + tm.Kind)
				}
				var back cards.Stamped
				require.NoError(t, json.Unmarshal(saved, &back))
				want, err := os.ReadFile(filepath.Join("testdata", name+".json"))
				require.NoError(t, err)
				require.Equal(t, string(want), string(render(t, &back)), "saved card after its template was %s", step)
			}
		})
	}
}

func TestButtonsRouteBack(t *testing.T) {
	ex := exampleNamed(t, "calendar_event_full")
	s, err := cards.Stamp(&ex.Result, nil)
	require.NoError(t, err)
	entry := uuid.MustParse("01900000-0000-7000-8000-000000000042")
	blocks, _, err := slackcard.Render(s, slackcard.Options{EntryID: entry})
	require.NoError(t, err)
	last, ok := blocks[len(blocks)-1].(*slack.ActionBlock)
	require.True(t, ok, "the last block holds the buttons")
	var got []string
	for _, el := range last.Elements.ElementSet {
		btn := el.(*slack.ButtonBlockElement)
		id, act, ok := cards.ParseActionID(btn.ActionID)
		require.True(t, ok, "action_id %q must parse", btn.ActionID)
		require.Equal(t, entry, id)
		got = append(got, act+":"+string(btn.Style))
	}
	require.Equal(t, []string{"accept:primary", "decline:danger"}, got)
}

func TestRenderNeedsEntryIDForButtons(t *testing.T) {
	ex := exampleNamed(t, "email_full")
	s, err := cards.Stamp(&ex.Result, nil)
	require.NoError(t, err)
	_, _, err = slackcard.Render(s, slackcard.Options{})
	require.ErrorContains(t, err, "options.EntryID: required")
	_, _, err = slackcard.Render(s.WithOutcome("done"), slackcard.Options{})
	require.NoError(t, err, "a card with an outcome shows no buttons and needs no entry id")
	_, _, err = slackcard.Render(nil, slackcard.Options{})
	require.Error(t, err)
}

func TestDamagedLayoutStillDraws(t *testing.T) {
	raw := `{"v":1,"layout":{"name":"gone","style":"hologram","parts":["x"]},"items":[{"title":"Still here","rows":[{"label":"A","value":"B"}]}]}`
	var s cards.Stamped
	require.NoError(t, json.Unmarshal([]byte(raw), &s))
	out := render(t, &s)
	require.NoError(t, slackcard.CheckLimits(out))
	require.Contains(t, string(out), "Still here")
	require.Contains(t, string(out), "🔎 Results", "the generic heading stands in")
	require.NotContains(t, string(out), `\"title\"`, "never raw data")
}

func TestMrkdwn(t *testing.T) {
	ex := cards.Result{Items: []cards.Item{{Title: "t", Sections: []cards.Section{{Text: "# Head\n**bold** and *it* and ~~old~~\n- one\n* two\nsee [docs](https://x.example/a?b=1&c=2) <!channel> a|b"}}}}}
	s, err := cards.Stamp(&ex, nil)
	require.NoError(t, err)
	blocks, _, err := slackcard.Render(s, slackcard.Options{})
	require.NoError(t, err)
	var text string
	for _, b := range blocks {
		if sec, ok := b.(*slack.SectionBlock); ok && sec.Text != nil && strings.Contains(sec.Text.Text, "Head") {
			text = sec.Text.Text
		}
	}
	require.Equal(t, "*Head*\n*bold* and _it_ and ~old~\n• one\n• two\nsee <https://x.example/a?b=1&amp;c=2|docs> &lt;!channel&gt; a|b", text)
}

// A card is model text too: neither its Markdown nor a stored item link may
// broadcast or mention.
func TestCardNeverBroadcastsOrMentions(t *testing.T) {
	raw := `{"v":1,"items":[` +
		`{"title":"boss","link":"@U0BOSS","sections":[{"text":"[everyone](!channel) [](!here) [boss](@U0BOSS) <!channel> <@U123>"}]},` +
		`{"title":"all","link":"!channel"},{"title":"ok","link":"https://x.example/a"}]}`
	var s cards.Stamped
	require.NoError(t, json.Unmarshal([]byte(raw), &s))
	out := render(t, &s)
	require.NoError(t, slackcard.CheckLimits(out))
	for _, bad := range []string{"<!", "<@", "<#"} {
		require.NotContains(t, string(out), bad, "card output carries Slack mention markup")
	}
	require.Contains(t, string(out), "<https://x.example/a|ok>", "a web link stays a link")
}

func TestLongTextIsCutCleanly(t *testing.T) {
	long := strings.Repeat("a&b<c>", 2000) // escapes lengthen the text
	link := "[" + strings.Repeat("x", 10) + "](https://example.com/" + strings.Repeat("p", 100) + ")"
	r := cards.Result{Title: strings.Repeat("T", 500), Items: []cards.Item{{
		Title: long, Subtitle: long,
		Sections: []cards.Section{{Text: strings.Repeat("y", 2950) + link + long}},
	}}}
	s, err := cards.Stamp(&r, nil)
	require.NoError(t, err)
	blocks, fallback, err := slackcard.Render(s, slackcard.Options{})
	require.NoError(t, err)
	out := payload(t, blocks, fallback)
	require.NoError(t, slackcard.CheckLimits(out))
	for _, b := range blocks {
		sec, ok := b.(*slack.SectionBlock)
		if !ok || sec.Text == nil {
			continue
		}
		txt := sec.Text.Text
		if open := strings.LastIndex(txt, "<"); open >= 0 {
			require.True(t, strings.Contains(txt[open:], ">"), "a link must not be cut open: ...%s", txt[max(0, len(txt)-80):])
		}
		amp := strings.LastIndex(txt, "&")
		require.True(t, amp < 0 || strings.Contains(txt[amp:], ";"), "an escape must not be cut: ...%s", txt[max(0, len(txt)-20):])
		require.True(t, strings.HasSuffix(txt, cards.Ellipsis) || cards.Len(txt) < slacklimit.SectionText, "long text ends in an ellipsis")
	}
	header := blocks[0].(*slack.HeaderBlock).Text.Text
	require.Equal(t, slacklimit.HeaderText, cards.Len(header))
	require.True(t, strings.HasSuffix(header, "…"))
	require.LessOrEqual(t, cards.Len(fallback), slackcard.FallbackMaxLen)
}

func TestManyItemsAreCounted(t *testing.T) {
	r := cards.Result{Template: "briefing"}
	for range 40 {
		it := cards.Item{Title: "Topic"}
		for range 20 {
			it.Sections = append(it.Sections, cards.Section{Text: "para"})
		}
		r.Items = append(r.Items, it)
	}
	s, err := cards.Stamp(&r, nil)
	require.NoError(t, err)
	blocks, fallback, err := slackcard.Render(s, slackcard.Options{})
	require.NoError(t, err)
	require.NoError(t, slackcard.CheckLimits(payload(t, blocks, fallback)))
	require.LessOrEqual(t, len(blocks), slacklimit.Blocks)
	last := blocks[len(blocks)-1].(*slack.ContextBlock)
	require.Equal(t, "+30 more items", last.ContextElements.Elements[0].(*slack.TextBlockObject).Text,
		"briefing shows 10 items; the other 30 are counted")
	found := false
	for _, b := range blocks {
		if sec, ok := b.(*slack.SectionBlock); ok && sec.Text != nil && strings.Contains(sec.Text.Text, "more sections_") {
			found = true
		}
	}
	require.True(t, found, "sections that do not fit are counted")
}

// Any valid result, however large, renders within Slack's limits.
func TestPropertyWithinLimits(t *testing.T) {
	iterations := propertyIterations
	if testing.Short() {
		iterations = 50
	}
	lib := cards.DefaultLibrary()
	g := cardstest.NewGenerator(20240611, lib)
	for i := range iterations {
		r := g.Result()
		s, err := cards.Stamp(&r, lib)
		if err != nil {
			t.Fatalf("iteration %d: the generator made an invalid result: %v", i, err)
		}
		blocks, fallback, err := slackcard.Render(s, slackcard.Options{EntryID: cardstest.EntryID})
		if err != nil {
			t.Fatalf("iteration %d: render failed: %v", i, err)
		}
		out := payload(t, blocks, fallback)
		if err := slackcard.CheckLimits(out); err != nil {
			t.Fatalf("iteration %d (template %q, %d items, %d actions): %v", i, r.Template, len(r.Items), len(r.Actions), err)
		}
		if !utf8.Valid(out) || bytes.Contains(out, []byte(`\ufffd`)) {
			t.Fatalf("iteration %d: output is not clean UTF-8", i)
		}
		if cards.Len(fallback) > slackcard.FallbackMaxLen {
			t.Fatalf("iteration %d: fallback has %d characters", i, cards.Len(fallback))
		}
		if len(s.Actions) > 0 && !bytes.Contains(out, []byte(`"type": "actions"`)) {
			t.Fatalf("iteration %d: the card's %d buttons were dropped", i, len(s.Actions))
		}
		// After a round trip through JSON the card renders the same.
		saved, err := json.Marshal(s)
		require.NoError(t, err)
		var back cards.Stamped
		require.NoError(t, json.Unmarshal(saved, &back))
		if got := render(t, &back); !bytes.Equal(got, out) {
			t.Fatalf("iteration %d: rendering differs after a JSON round trip", i)
		}
	}
}

func TestCheckLimitsCatchesViolations(t *testing.T) {
	mk := func(blocks ...string) []byte {
		return []byte(`{"text":"x","blocks":[` + strings.Join(blocks, ",") + `]}`)
	}
	long := func(n int) string { return strings.Repeat("é", n) }
	fields := make([]string, 11)
	for i := range fields {
		fields[i] = `{"type":"mrkdwn","text":"f"}`
	}
	buttons := make([]string, 26)
	for i := range buttons {
		buttons[i] = `{"type":"button","text":{"type":"plain_text","text":"b"},"action_id":"a` + strings.Repeat("x", i) + `"}`
	}
	many := make([]string, 51)
	for i := range many {
		many[i] = `{"type":"divider"}`
	}
	tests := []struct {
		name    string
		payload []byte
		want    string
	}{
		{"too many blocks", mk(many...), "blocks: 51 blocks, at most 50"},
		{"header length", mk(`{"type":"header","text":{"type":"plain_text","text":"` + long(151) + `"}}`), "blocks[0].text.text: 151 characters, at most 150"},
		{"header mrkdwn", mk(`{"type":"header","text":{"type":"mrkdwn","text":"x"}}`), "blocks[0].text.type: must be plain_text"},
		{"section text", mk(`{"type":"section","text":{"type":"mrkdwn","text":"` + long(3001) + `"}}`), "3001 characters, at most 3000"},
		{"section fields", mk(`{"type":"section","fields":[` + strings.Join(fields, ",") + `]}`), "11 fields, at most 10"},
		{"field length", mk(`{"type":"section","fields":[{"type":"mrkdwn","text":"` + long(2001) + `"}]}`), "blocks[0].fields[0].text: 2001 characters, at most 2000"},
		{"empty section", mk(`{"type":"section"}`), "a section needs text or fields"},
		{"accessory alt", mk(`{"type":"section","text":{"type":"mrkdwn","text":"x"},"accessory":{"type":"image","image_url":"https://x"}}`), "accessory.alt_text: required"},
		{"context elements", mk(`{"type":"context","elements":[` + strings.Repeat(`{"type":"mrkdwn","text":"c"},`, 10) + `{"type":"mrkdwn","text":"c"}]}`), "11 elements, want 1 to 10"},
		{"actions elements", mk(`{"type":"actions","elements":[` + strings.Join(buttons, ",") + `]}`), "26 elements, want 1 to 25"},
		{"button text", mk(`{"type":"actions","elements":[{"type":"button","text":{"type":"plain_text","text":"` + long(76) + `"},"action_id":"a"}]}`), "76 characters, at most 75"},
		{"action id", mk(`{"type":"actions","elements":[{"type":"button","text":{"type":"plain_text","text":"b"},"action_id":"` + long(256) + `"}]}`), "action_id: 256 characters, at most 255"},
		{"duplicate action id", mk(`{"type":"actions","elements":[{"type":"button","text":{"type":"plain_text","text":"b"},"action_id":"a"},{"type":"button","text":{"type":"plain_text","text":"b"},"action_id":"a"}]}`), `duplicate "a"`},
		{"value", mk(`{"type":"actions","elements":[{"type":"button","text":{"type":"plain_text","text":"b"},"action_id":"a","value":"` + long(2001) + `"}]}`), "value: 2001 characters, at most 2000"},
		{"image url", mk(`{"type":"image","image_url":"https://` + long(3000) + `","alt_text":"a"}`), "image_url: 3008 characters, at most 3000"},
		{"fallback", []byte(`{"text":"` + long(40001) + `","blocks":[]}`), "text: 40001 characters, at most 40000"},
		{"unknown block", mk(`{"type":"video"}`), `unexpected block type "video"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorContains(t, slackcard.CheckLimits(tt.payload), tt.want)
		})
	}
}

func TestEmptyCardStillDraws(t *testing.T) {
	for _, raw := range []string{`{}`, `{"v":1,"layout":{"style":"list"},"items":[]}`, `{"items":[{"title":""}]}`} {
		var s cards.Stamped
		require.NoError(t, json.Unmarshal([]byte(raw), &s))
		out := render(t, &s)
		require.NoError(t, slackcard.CheckLimits(out), "card %s", raw)
		require.Contains(t, string(out), "🔎 Results", "card %s shows the generic heading", raw)
	}
}

func BenchmarkRender(b *testing.B) {
	lib := cards.DefaultLibrary()
	hotel := cardstest.Examples()
	var small *cards.Stamped
	for _, ex := range hotel {
		if ex.Name == "hotel_full" {
			small, _ = cards.Stamp(&ex.Result, lib)
		}
	}
	g := cardstest.NewGenerator(7, lib)
	var large *cards.Stamped
	for large == nil || len(large.Items) < 300 {
		r := g.Result()
		large, _ = cards.Stamp(&r, lib)
	}
	for _, bc := range []struct {
		name string
		s    *cards.Stamped
	}{{"hotel_full", small}, {"generated_300_items", large}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := slackcard.Render(bc.s, slackcard.Options{EntryID: cardstest.EntryID}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
