package discordcard_test

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/bots/discord/discordcard"
	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/cards/cardstest"
)

// Any card, whatever its text, renders within Discord's limits; a stored
// card's link is not checked again, so it is fuzzed unchecked too.
func FuzzRender(f *testing.F) {
	f.Add(uint8(0), "Title", "**Summary** with [a link](https://x.example)", "Item", "sub", "https://x.example/a", "Label", "Value", "# Head\n- one\n```go\ncode\n```")
	f.Add(uint8(0x81), "@everyone", "[everyone](!channel) <@&1> <@123>", "@here", "<#1>", "!channel", "a|b", "&amp;", "[x](#C0GENERAL)")
	f.Add(uint8(7), "🙂", "\u3000", "日本語", "", "javascript:alert(1)", "", "", "```"+strings.Repeat("x", 3000))
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
		out, files := render(t, s, opts())
		if err := discordcard.CheckLimits(out, files); err != nil {
			t.Fatalf("card breaks Discord's limits: %v\n%s", err, out)
		}
	})
}
