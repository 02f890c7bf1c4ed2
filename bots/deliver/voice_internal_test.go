package deliver

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHeardQuote(t *testing.T) {
	for _, tc := range []struct {
		name, transcript, want string
	}{
		{"one line", "remind me to water the plants", "> 🎙️ “remind me to water the plants”\n\n"},
		{"breaks and runs of spaces fold", "  remind me\n\nto   water\tthe plants ", "> 🎙️ “remind me to water the plants”\n\n"},
	} {
		if got := heardQuote(tc.transcript); got != tc.want {
			t.Errorf("%s: heardQuote(%q) = %q, want %q", tc.name, tc.transcript, got, tc.want)
		}
	}
	long := heardQuote(strings.Repeat("word ", 200))
	body := strings.TrimSuffix(strings.TrimPrefix(long, "> 🎙️ “"), "”\n\n")
	if n := utf8.RuneCountInString(body); n > maxQuote || n < maxQuote-1 || !strings.HasSuffix(body, "…") {
		t.Fatalf("a long transcript is quoted as %d characters (%q…); want at most %d, ending with …", n, body[:20], maxQuote)
	}
}
