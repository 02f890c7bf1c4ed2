// Package mdsplit cuts Markdown into messages of a bounded length for the
// platforms that take a message's text as Markdown and cap its length
// (Discord at 2,000 characters, Matrix at what its homeserver takes), so
// that every part renders on its own.
package mdsplit

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

const fenceClose = "\n```"

// Split cuts Markdown into parts of at most limit characters (runes),
// preferring a paragraph break, then a line break, then a sentence end, then
// a space, and cutting hard only inside a very long word. A code block that
// spans a cut is closed at the end of one part and reopened, with the same
// info string (```go), at the start of the next, so every part renders on
// its own; an info string too long to repeat is dropped from the reopening
// fence. No part is blank (only spaces and fences), and every part but the last takes at least
// limit/2 characters of the text, so there are at most 2·len/limit + 1.
func Split(text string, limit int) []string {
	if limit < 64 {
		limit = 64
	}
	text = strings.TrimRightFunc(text, unicode.IsSpace)
	if text == "" {
		return nil
	}
	var parts []string
	opener := "" // the fence line reopened at the start of the next part
	rest := text
	for rest != "" {
		prefix := ""
		if opener != "" {
			prefix = opener + "\n"
		}
		whole := prefix + rest
		if n := utf8.RuneCountInString(whole); n <= limit {
			if !shows(rest) {
				break
			}
			if open, _ := fenceState(whole); !open {
				parts = append(parts, whole)
				break
			} else if n+len(fenceClose) <= limit {
				parts = append(parts, whole+fenceClose)
				break
			}
		}
		budget := limit - utf8.RuneCountInString(prefix) - len(fenceClose)
		cut, skip := bestCut(rest, budget, limit/2)
		piece := strings.TrimRightFunc(rest[:cut], unicode.IsSpace)
		rest = rest[cut+skip:]
		part := prefix + piece
		open, line := fenceState(part)
		if open {
			part += fenceClose
			opener = reopener(line, limit)
		} else {
			opener = ""
		}
		if shows(piece) {
			parts = append(parts, part)
		}
	}
	return parts
}

// shows reports whether a piece of the text shows anything: more than
// spaces and the backticks of fences.
func shows(piece string) bool {
	return strings.ContainsFunc(piece, func(r rune) bool { return r != '`' && !unicode.IsSpace(r) })
}

// reopener is the fence line that reopens a block cut at a part's end: the
// block's own opener, or a bare fence when the opener would take more than
// a small share of the next part.
func reopener(opener string, limit int) string {
	if utf8.RuneCountInString(opener) > min(maxReopener, limit/4) {
		return "```"
	}
	return opener
}

// maxReopener is the longest fence line repeated at the start of a part;
// a language tag is a word, anything longer is not worth repeating.
const maxReopener = 32

// bestCut returns the byte offset to cut s at so that s[:cut] has at most
// budget runes, and how many separator bytes to drop after the cut. A
// boundary before minRunes wastes a part; only a later one is taken.
func bestCut(s string, budget, minRunes int) (cut, skip int) {
	if budget < 1 {
		budget = 1
	}
	// Byte offsets of the first rune past the budget and of rune minRunes.
	end, minPos := len(s), len(s)
	n := 0
	for i := range s {
		if n == min(minRunes, budget) && minPos == len(s) {
			minPos = i
		}
		if n == budget {
			end = i
			break
		}
		n++
	}
	window := s[:end]
	for _, sep := range []string{"\n\n", "\n"} {
		if i := strings.LastIndex(window, sep); i >= minPos && i > 0 {
			return i, len(sep)
		}
	}
	for _, sep := range []string{". ", "! ", "? ", ".\n", "; ", ", "} {
		if i := strings.LastIndex(window, sep); i >= minPos && i > 0 {
			return i + 1, 1 // keep the punctuation, drop the space
		}
	}
	if i := strings.LastIndex(window, " "); i >= minPos && i > 0 {
		return i, 1
	}
	return end, 0
}

// fenceState reports whether a code fence is left open at the end of s and,
// if so, the line that opened it.
func fenceState(s string) (open bool, opener string) {
	for line := range strings.SplitSeq(s, "\n") {
		t := strings.TrimLeft(line, " ")
		if len(line)-len(t) > 3 || !strings.HasPrefix(t, "```") {
			continue
		}
		if open {
			open, opener = false, ""
		} else {
			open, opener = true, strings.TrimRight(t, " \t")
		}
	}
	return open, opener
}

// Truncate fits text into one message: the first part of its split,
// marked as cut when there was more.
func Truncate(text string, limit int) string {
	parts := Split(text, limit-2)
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	default:
		return parts[0] + "\n…"
	}
}
