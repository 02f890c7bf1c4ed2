package mrkdwn

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// Slack writes broadcasts, mentions and channel links in its link syntax;
// none may come out of a model's text.
func TestConvertNeverBroadcastsOrMentions(t *testing.T) {
	tests := []struct {
		name, md, want string
	}{
		{"channel link", "[everyone](!channel)", "everyone"},
		{"here link without text", "[](!here)", "!here"},
		{"user link", "[boss](@U0BOSS)", "boss"},
		{"everyone link", "ping [all](!everyone) now", "ping all now"},
		{"user group link", "[team](!subteam^S0TEAM)", "team"},
		{"enterprise user link", "[w](@W0USER)", "w"},
		{"channel reference", "[general](#C0GENERAL)", "general"},
		{"image with a mention", "![x](@U0BOSS)", "x"},
		{"relative link", "[readme](docs/README.md)", "readme"},
		{"script link", "[click](javascript:alert)", "click"},
		{"date token", "[d](!date^1392734382^{date}|x)", "d"},
		{"raw channel", "<!channel> and <!here|here>", "&lt;!channel&gt; and &lt;!here|here&gt;"},
		{"raw user", "hi <@U123>", "hi &lt;@U123&gt;"},
		{"raw channel reference", "<#C123|general>", "&lt;#C123|general&gt;"},
		{"raw in a heading", "# <!channel>", "*&lt;!channel&gt;*"},
		{"raw in a code block", "```\n<!channel>\n```", "```\n&lt;!channel&gt;\n```"},
		{"raw in a table", "| <!here> | b |\n|---|---|", "```\n| &lt;!here&gt; | b |\n|---|---|\n```"},
		{"web link kept", "[docs](https://x.test/a)", "<https://x.test/a|docs>"},
		{"upper-case scheme kept", "[docs](HTTPS://x.test)", "<HTTPS://x.test|docs>"},
		{"mail link kept", "[me](mailto:a@x.test)", "<mailto:a@x.test|me>"},
		{"bar in a web link cannot start a label", "[x](https://x.test/|<!channel>)", "<https://x.test/%7C%3C!channel|x>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Convert(tt.md); got != tt.want {
				t.Fatalf("Convert(%q)\n got %q\nwant %q", tt.md, got, tt.want)
			}
		})
	}
}

func TestConvert(t *testing.T) {
	tests := []struct {
		name, md, want string
	}{
		{"bold", "this is **bold** text", "this is *bold* text"},
		{"bold underscores", "__bold__", "*bold*"},
		{"italic star", "an *italic* word", "an _italic_ word"},
		{"italic underscore", "an _italic_ word", "an _italic_ word"},
		{"bold italic", "***both***", "*_both_*"},
		{"strike", "~~gone~~", "~gone~"},
		{"link", "see [the docs](https://example.com/a?b=1&c=2)", "see <https://example.com/a?b=1&amp;c=2|the docs>"},
		{"link label with markup", "[**Docs** & more](https://x.test)", "<https://x.test|Docs &amp; more>"},
		{"image", "![chart](https://x.test/c.png)", "<https://x.test/c.png|chart>"},
		{"autolink", "<https://x.test/path>", "<https://x.test/path>"},
		{"escaping", "a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"},
		{"html is shown, not parsed", "<b>hi</b>", "&lt;b&gt;hi&lt;/b&gt;"},
		{"inline code kept and escaped", "run `a **b** <c>` now", "run `a **b** &lt;c&gt;` now"},
		{"double backtick code", "``a ` b``", "`a ` b`"},
		{"snake_case left alone", "call my_func_name now", "call my_func_name now"},
		{"lone star", "5 * 3 = 15", "5 * 3 = 15"},
		{"heading", "# Title", "*Title*"},
		{"heading with bold", "## The **big** one", "*The big one*"},
		{"bullets", "- one\n* two\n+ three", "• one\n• two\n• three"},
		{"nested bullet", "- one\n  - inner", "• one\n  • inner"},
		{"ordered", "1. first\n2) second", "1. first\n2. second"},
		{"tasks", "- [ ] todo\n- [x] done", "☐ todo\n☑ done"},
		{"quote", "> quoted **x**", "> quoted *x*"},
		{"rule", "---", "──────────"},
		{"escaped marker", `\*not italic\*`, "*not italic*"},
		{
			"fenced code keeps content, drops language",
			"```go\nif a < b && **c** {\n}\n```",
			"```\nif a &lt; b &amp;&amp; **c** {\n}\n```",
		},
		{"tilde fence", "~~~\nx\n~~~", "```\nx\n```"},
		{"unclosed fence is closed", "```\ncode", "```\ncode\n```"},
		{"triple backticks on one line are inline", "use ```x``` here", "use `x` here"},
		{
			"table becomes a code block",
			"| a | b |\n|---|---|\n| 1 | 2 |\nafter",
			"```\n| a | b |\n|---|---|\n| 1 | 2 |\n```\nafter",
		},
		{"unmatched bold left as is", "**open", "**open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Convert(tt.md); got != tt.want {
				t.Fatalf("Convert(%q)\n got %q\nwant %q", tt.md, got, tt.want)
			}
		})
	}
}

// checkParts asserts every part is within limit, has balanced fences, and
// that together they hold all of text's content.
func checkParts(t *testing.T, text string, parts []string, limit int) {
	t.Helper()
	if err := partsValid(text, parts, limit); err != nil {
		t.Fatal(err)
	}
}

// partsValid checks Split's promises for any text: parts within the limit,
// none blank, fences balanced, at most 2·len/limit + 2 of them, and
// together all of text's content.
func partsValid(text string, parts []string, limit int) error {
	limit = max(limit, minSplitLimit)
	if n, most := len(parts), 2*utf8.RuneCountInString(text)/limit+2; n > most {
		return fmt.Errorf("%d parts for %d characters at limit %d; want at most %d", n, utf8.RuneCountInString(text), limit, most)
	}
	for i, p := range parts {
		if n := utf8.RuneCountInString(p); n > limit {
			return fmt.Errorf("part %d has %d characters, limit %d", i, n, limit)
		}
		if blank(p) {
			return fmt.Errorf("part %d shows nothing: %q", i, p)
		}
		fences := 0
		for _, line := range strings.Split(p, "\n") {
			if strings.TrimSpace(line) == codeFence {
				fences++
			}
		}
		// A text that fits is left as it is; a cut always closes the block.
		if fences%2 != 0 && !(len(parts) == 1 && p == text) {
			return fmt.Errorf("part %d leaves a code block open:\n%s", i, p)
		}
	}
	// Cuts add fences and drop spaces; the rest must survive in order.
	squash := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '`' || unicode.IsSpace(r) {
				return -1
			}
			return r
		}, s)
	}
	if got, want := squash(strings.Join(parts, "\n")), squash(text); got != want {
		return fmt.Errorf("parts lost or changed content:\n got %q\nwant %q", got, want)
	}
	return nil
}

func TestSplit(t *testing.T) {
	long := strings.Repeat("word ", 700) // 3,500 characters on one line
	code := "```\n" + strings.Repeat("fmt.Println(\"hello, world\")\n", 300) + "```"
	tests := []struct {
		name      string
		text      string
		limit     int
		wantParts int
	}{
		{"short stays whole", "hello", 3000, 1},
		{"paragraphs", strings.Repeat("a paragraph of text here.\n\n", 200), 3000, 2},
		{"one long line", long, 3000, 2},
		{"long code block is closed and reopened", "intro\n" + code + "\noutro", 3000, 3},
		{"code line longer than the limit", "```\n" + strings.Repeat("x", 5000) + "\n```", 3000, 2},
		{"small limit", "```\nabc\ndef\nghi\njkl\nmno\npqr\nstu\n```\nend", 16, 2},
		{"long fence opener line", "```" + strings.Repeat("x", 2097), 2000, 2},
		{"long fence opener, small limit", "```" + strings.Repeat("x", 2097), 32, 2},
		{"code line of entities", "```\n" + strings.Repeat("&amp;", 1000) + "\n```", 40, 2},
		{"short lines between long ones", strings.Repeat("a\n"+strings.Repeat("b", 3300)+"\n", 20), 3000, 2},
		{"many lone fences", strings.Repeat("```\n", 1000) + "end", 100, 1},
		{"wide spaces", "a" + strings.Repeat("\u3000", 5000) + "b", 3000, 1},
		{"spaces between words", strings.Repeat("w"+strings.Repeat(" ", 100), 100), 64, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts := Split(tt.text, tt.limit)
			if len(parts) < tt.wantParts {
				t.Fatalf("got %d parts, want at least %d", len(parts), tt.wantParts)
			}
			checkParts(t, tt.text, parts, tt.limit)
		})
	}
}

func TestSplitBlank(t *testing.T) {
	for _, text := range []string{"", " ", "\n\n", "```\n```", strings.Repeat("```\n \n", 2000), strings.Repeat("\u3000", 5000)} {
		if parts := Split(text, 100); len(parts) != 0 {
			t.Errorf("Split(%.20q) = %d parts; want none for text that shows nothing", text, len(parts))
		}
	}
}

func TestSplitRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"word", "**bold**", "`code`", "[a link](https://example.com/x)", "&", "<b>", "é", "🙂", " ", " ", "\n", "\n\n", "\n```\n", "- item\n"}
	for i := range 300 {
		var b strings.Builder
		for range r.IntN(2000) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		text := Convert(b.String())
		limit := 16 + r.IntN(400)
		parts := Split(text, limit)
		t.Run("", func(t *testing.T) {
			if i%100 == 0 {
				t.Logf("case %d: %d chars, limit %d, %d parts", i, utf8.RuneCountInString(text), limit, len(parts))
			}
			checkParts(t, text, parts, limit)
		})
	}
}

func TestDefuse(t *testing.T) {
	const j = "\u2060"
	for _, tc := range []struct{ name, in, want string }{
		{"broadcasts", "<!channel> <!here|here> <!everyone>", "<" + j + "!channel> <" + j + "!here|here> <" + j + "!everyone>"},
		{"mentions", "<!subteam^S1|@devs> <@U1> <#C1>", "<" + j + "!subteam^S1|@devs> <" + j + "@U1> <" + j + "#C1>"},
		{"plain broadcasts", "@here @Channel @everyone!", "@" + j + "here @" + j + "Channel @" + j + "everyone!"},
		{"not a broadcast", "@hereby a<b x@y.z", "@hereby a<b x@y.z"},
		{"cut at the end", "see <", "see <" + j},
		{"broadcast cut at the end", "ping @he", "ping @" + j + "he"},
		{"formatting kept", "**bold** [x](https://x.test) `<code>`", "**bold** [x](https://x.test) `<code>`"},
	} {
		if got := Defuse(tc.in); got != tc.want {
			t.Errorf("%s: Defuse(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestConvertDefusesPlainBroadcasts(t *testing.T) {
	const j = "\u2060"
	for _, tc := range []struct{ in, want string }{
		{"hi @here and @channel", "hi @" + j + "here and @" + j + "channel"},
		{"mail ana@here.example", "mail ana@here.example"},
		{"[@here](https://x.test/@here)", "<https://x.test/@here|@" + j + "here>"},
	} {
		if got := Convert(tc.in); got != tc.want {
			t.Errorf("Convert(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
