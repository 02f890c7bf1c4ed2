package mdsplit

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// MaxMessageChars is Discord's limit on a message's content, the limit the
// cases are written around.
const MaxMessageChars = 2000

// splitValid checks Split's promises for any text: every part within
// the limit, none blank, no code block left open, at most 2·len/limit + 2
// parts, and no text lost (the reopened fences' info strings are the only
// text added).
func splitValid(text string, parts []string, limit int) error {
	limit = max(limit, 64)
	n := utf8.RuneCountInString(text)
	if most := 2*n/limit + 2; len(parts) > most {
		return fmt.Errorf("%d parts for %d characters at limit %d; want at most %d", len(parts), n, limit, most)
	}
	for i, p := range parts {
		if c := utf8.RuneCountInString(p); c > limit {
			return fmt.Errorf("part %d has %d characters; want at most %d", i, c, limit)
		}
		if !shows(p) {
			return fmt.Errorf("part %d shows nothing: %q", i, p)
		}
		if open, _ := fenceState(p); open {
			return fmt.Errorf("part %d leaves a code block open:\n%s", i, p)
		}
	}
	squash := func(s string) []rune {
		return []rune(strings.Map(func(r rune) rune {
			if r == '`' || unicode.IsSpace(r) {
				return -1
			}
			return r
		}, s))
	}
	// Joined by a newline, so two parts' stray bytes cannot make one rune.
	got, want := squash(strings.Join(parts, "\n")), squash(text)
	j := 0
	for _, r := range got {
		if j < len(want) && r == want[j] {
			j++
		}
	}
	if j < len(want) {
		return fmt.Errorf("the parts lose the text from %q on", string(want[j:min(j+40, len(want))]))
	}
	return nil
}

func TestSplitTextInvariants(t *testing.T) {
	t.Parallel()
	x := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name     string
		text     string
		limit    int
		maxParts int
	}{
		{"long fence opener", "```" + x(2097), MaxMessageChars, 3},
		{"long fence opener with code", "```" + x(2097) + "\nfmt.Println()\n```", MaxMessageChars, 3},
		{"long fence opener, small limit", "```" + x(500), 64, 17},
		{"only fences", "```\n```\n```\n  ```", MaxMessageChars, 0},
		{"only spaces", " \t\n\u3000\r\n", MaxMessageChars, 0},
		{"trailing wide spaces", "a" + strings.Repeat("\u3000", 4000), MaxMessageChars, 1},
		{"code block closing after the cut", "```go\n" + strings.Repeat("a line of code\n", 142) + "```", MaxMessageChars, 2},
		{"short lines between long ones", strings.Repeat("a\n"+x(2100)+"\n", 10), MaxMessageChars, 22},
		{"early paragraph break", strings.Repeat("ab\n\n"+x(1990)+" ", 10), MaxMessageChars, 22},
		{"spaces only between words", strings.Repeat("w"+strings.Repeat(" ", 300), 50), MaxMessageChars, 17},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parts := Split(tc.text, tc.limit)
			if len(parts) > tc.maxParts {
				t.Errorf("parts = %d; want at most %d", len(parts), tc.maxParts)
			}
			if err := splitValid(tc.text, parts, tc.limit); err != nil {
				t.Error(err)
			}
		})
	}
}

// For any text and limit, Split keeps its promises (see splitValid).
func FuzzSplitText(f *testing.F) {
	f.Add("```"+strings.Repeat("x", 210), uint16(100))
	f.Add("```go\n"+strings.Repeat("fmt.Println(1)\n", 20)+"```\nafter", uint16(64))
	f.Add(strings.Repeat("a\n"+strings.Repeat("b", 120)+"\n", 5), uint16(100))
	f.Add(strings.Repeat("```\n \n", 50), uint16(0))
	f.Add("Some text. More text! "+strings.Repeat("é🙂 ", 60)+"\u3000\r\n", uint16(70))
	f.Fuzz(func(t *testing.T, text string, limit uint16) {
		n := int(limit % 4000)
		if err := splitValid(text, Split(text, n), n); err != nil {
			t.Fatal(err)
		}
	})
}
