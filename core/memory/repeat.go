package memory

import (
	"strings"
	"unicode"
)

// The rule that keeps a turn's memory and the family's notes free of
// repeats, in the layered context and in consolidation alike.
//
// Two notes say the same thing when their texts are equal once normalised
// (lower case, every run of characters other than letters and digits made
// one space), or when each has at least three words and they share at
// least RepeatOverlap of their words (the Jaccard index of the two sets of
// normalised words: shared words over all distinct words).

// RepeatOverlap is the share of words two notes must have in common to
// count as repeats.
const RepeatOverlap = 0.8

// Repeats reports whether texts a and b say the same thing (see above).
func Repeats(a, b string) bool {
	wa, wb := words(a), words(b)
	if strings.Join(wa, " ") == strings.Join(wb, " ") {
		return true
	}
	if len(wa) < 3 || len(wb) < 3 {
		return false
	}
	sa, sb := set(wa), set(wb)
	shared := 0
	for w := range sa {
		if sb[w] {
			shared++
		}
	}
	union := len(sa) + len(sb) - shared
	return float64(shared) >= RepeatOverlap*float64(union)
}

// words are s's normalised words, in order.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func set(ws []string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}
