package mrkdwn

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Whatever the model writes, the only Slack markup in the output is links
// to web or mail addresses: no broadcast, mention or channel link.
func FuzzConvert(f *testing.F) {
	for _, s := range []string{
		"[everyone](!channel)", "[](!here)", "[boss](@U0BOSS)", "<!channel> <@U123> <#C1|x>",
		"see [docs](https://x.test/a?b=1&c=2) and <https://x.test>", "![x](@U1) [a](<!here>)",
		"# T\n- a\n1. b\n> q\n```go\n<!channel>\n```\n| a | b |\n|---|---|\n| <@U1> | 2 |",
		"**b** _i_ ~~s~~ `c` \\<!here\\>", "[x](mailto:a@b) [y](HTTP://x|<!channel>)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		out := Convert(md)
		if utf8.ValidString(md) && !utf8.ValidString(out) {
			t.Fatalf("Convert(%q) = %q: not valid UTF-8", md, out)
		}
		for i := 0; i < len(out); i++ {
			if out[i] != '<' {
				continue
			}
			if !SafeURL(out[i+1:]) {
				t.Fatalf("Convert(%q) = %q: markup at %d is not a web or mail link", md, out, i)
			}
			end := strings.IndexByte(out[i:], '>')
			if end < 0 {
				t.Fatalf("Convert(%q) = %q: link at %d is not closed", md, out, i)
			}
			if strings.ContainsAny(out[i+1:i+end], "<\n") {
				t.Fatalf("Convert(%q) = %q: link at %d holds markup", md, out, i)
			}
		}
	})
}

// For any text and limit, Split keeps its promises (see partsValid).
func FuzzSplit(f *testing.F) {
	f.Add("```"+strings.Repeat("x", 210), uint16(100))
	f.Add("```\n"+strings.Repeat("&amp;", 300)+"\n```", uint16(40))
	f.Add(strings.Repeat("a\n"+strings.Repeat("b", 120)+"\n", 10), uint16(100))
	f.Add(strings.Repeat("```\n \n", 50), uint16(16))
	f.Add("intro\n```\ncode <https://x.test|a link> more code\n```\noutro "+strings.Repeat("é🙂 ", 40), uint16(32))
	f.Fuzz(func(t *testing.T, text string, limit uint16) {
		n := int(limit % 4000)
		if err := partsValid(text, Split(text, n), n); err != nil {
			t.Fatal(err)
		}
	})
}
