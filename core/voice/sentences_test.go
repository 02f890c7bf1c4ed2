package voice

import (
	"reflect"
	"testing"
)

func TestSentences(t *testing.T) {
	for _, c := range []struct {
		name string
		text string
		want []string
	}{
		{"plain", "It is five. The plants are dry! Water them? Yes", []string{"It is five.", "The plants are dry!", "Water them?", "Yes"}},
		{"abbreviations and initials", "Dr. Smith met J. R. Tolkien, e.g. at noon. Then he left.", []string{"Dr. Smith met J. R. Tolkien, e.g. at noon.", "Then he left."}},
		{"decimals and numbers", "Pi is 3.14 today. It was 2025. Next.", []string{"Pi is 3.14 today.", "It was 2025.", "Next."}},
		{"quotes after the stop", `He said "stop." She did.`, []string{`He said "stop."`, "She did."}},
		{"markdown list", "Here:\n- **one** thing\n- [two](http://127.0.0.1/x) things\n\nDone", []string{"Here:", "one thing", "two things", "Done"}},
		{"numbered list", "Steps:\n1. Fill the can\n2. Water", []string{"Steps:", "Fill the can", "Water"}},
		{"code is not read", "Run this:\n```\nrm -rf x. y.\n```\nThat is all.", []string{"Run this:", "That is all."}},
		{"wrapped line", "A line that\nwraps on. Next", []string{"A line that wraps on.", "Next"}},
		{"ellipsis", "Well… maybe. ", []string{"Well…", "maybe."}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// However the text is cut into deltas, the sentences are the
			// same: whole, byte by byte, and in threes.
			for _, step := range []int{len(c.text), 1, 3} {
				var s Sentences
				var got []string
				for i := 0; i < len(c.text); i += step {
					got = append(got, s.Feed(c.text[i:min(i+step, len(c.text))])...)
				}
				if rest := s.Flush(); rest != "" {
					got = append(got, rest)
				}
				if !reflect.DeepEqual(got, c.want) {
					t.Fatalf("deltas of %d bytes: got %q, want %q", step, got, c.want)
				}
			}
		})
	}
}

// A sentence is given out as soon as the next delta shows it ended, not at
// the end of the reply.
func TestSentencesComeEarly(t *testing.T) {
	var s Sentences
	if got := s.Feed("Sure, I will remind you."); len(got) != 0 {
		t.Fatalf("a stop at the end of what came so far ended a sentence early: %q", got)
	}
	if got := s.Feed(" At five"); !reflect.DeepEqual(got, []string{"Sure, I will remind you."}) {
		t.Fatalf("got %q after the space, want the first sentence", got)
	}
	if got := s.Flush(); got != "At five" {
		t.Fatalf("flush: %q", got)
	}
}
