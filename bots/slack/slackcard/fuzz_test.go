package slackcard_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/bots/slack/slackcard"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/cards/cardstest"
)

// Any card, whatever its text, renders within Slack's limits and never
// carries a broadcast, mention or channel link; a stored card's link is not
// checked again, so it is fuzzed unchecked too.
func FuzzRender(f *testing.F) {
	f.Add(uint8(0), "Title", "**Summary** with [a link](https://x.example)", "Item", "sub", "https://x.example/a", "Label", "Value", "# Head\n- one\n```go\ncode\n```")
	f.Add(uint8(0x81), "<!channel>", "[everyone](!channel) [](!here) [boss](@U0BOSS)", "<@U123>", "<#C1|x>", "!channel", "a|b", "&amp;", "[x](#C0GENERAL)")
	f.Add(uint8(7), "🙂", "\u3000", "日本語", "", "@U0BOSS", "", "", "```"+string(bytes.Repeat([]byte("x"), 3000)))
	lib := cards.DefaultLibrary()
	f.Fuzz(func(t *testing.T, pick uint8, title, summary, item, sub, link, label, value, text string) {
		r := cardstest.Fuzz(lib, pick, title, summary, item, sub, link, label, value, text)
		s, err := cards.Stamp(&r, lib)
		if err != nil {
			t.Skip("not a valid result")
		}
		for i := range s.Items {
			s.Items[i].Link = link
		}
		out := render(t, s)
		if err := slackcard.CheckLimits(out); err != nil {
			t.Fatalf("card breaks Slack's limits: %v\n%s", err, out)
		}
		var p any
		if err := json.Unmarshal(out, &p); err != nil {
			t.Fatalf("decoding the payload: %v", err)
		}
		for _, text := range mrkdwnTexts(p, true) {
			for _, bad := range []string{"<!", "<@", "<#"} {
				if strings.Contains(text, bad) {
					t.Fatalf("card carries %q in mrkdwn %q", bad, text)
				}
			}
		}
	})
}

// mrkdwnTexts collects the texts Slack parses for mentions: the message's
// fallback text and every mrkdwn text object (plain_text is shown as is).
func mrkdwnTexts(v any, top bool) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		if text, ok := v["text"].(string); ok && (top || v["type"] == "mrkdwn") {
			out = append(out, text)
		}
		for _, c := range v {
			out = append(out, mrkdwnTexts(c, false)...)
		}
	case []any:
		for _, c := range v {
			out = append(out, mrkdwnTexts(c, false)...)
		}
	}
	return out
}
