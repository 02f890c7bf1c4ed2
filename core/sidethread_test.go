package core

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitDMs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		dms            []DM
	}{
		{"no tag", "Hello there.", "Hello there.", nil},
		{"one tag after text", "Let me check.\n<dm target=\"nova\">Can we ship Friday?</dm>", "Let me check.", []DM{{"nova", "Can we ship Friday?"}}},
		{"tag only", `<dm target="nova">hi</dm>`, "", []DM{{"nova", "hi"}}},
		{"two tags, text between, @ and spaces", "A <dm target = \" @nova \">one</dm> B\n\n\n\n<dm target=\"scout\">two\nlines</dm>", "A  B", []DM{{"nova", "one"}, {"scout", "two\nlines"}}},
		{"an unclosed tag stays (nothing to send)", `see <dm target="nova">never closed`, `see <dm target="nova">never closed`, nil},
		{"a mention of the word dm is text", "send a dm to nova", "send a dm to nova", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, dms := SplitDMs(tt.in)
			if got != tt.want || !slices.Equal(dms, tt.dms) {
				t.Errorf("SplitDMs(%q) = %q, %v; want %q, %v", tt.in, got, dms, tt.want, tt.dms)
			}
		})
	}
}

// TestDMFilterHidesTagsFromTheStream: however the text is cut into
// deltas, the live stream shows the text without its tags.
func TestDMFilterHidesTagsFromTheStream(t *testing.T) {
	t.Parallel()
	text := "Checking. <dm target=\"nova\">Friday?</dm> Done <3 <d"
	for size := 1; size <= len(text); size++ {
		var f dmFilter
		var shown strings.Builder
		for i := 0; i < len(text); i += size {
			shown.WriteString(f.feed(text[i:min(i+size, len(text))]))
		}
		// "<d" at the very end is held back: it may open a tag.
		if got, want := shown.String(), "Checking.  Done <3 "; got != want {
			t.Fatalf("deltas of %d bytes show %q, want %q", size, got, want)
		}
	}
	var f dmFilter
	f.feed("Hello <dm target=\"x\">se")
	f.reset()
	if got := f.feed("fresh start"); got != "fresh start" {
		t.Errorf("after a reset the filter shows %q, want the new text", got)
	}
}
