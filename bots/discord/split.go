package discord

import (
	"strings"
	"unicode/utf8"
)

// MaxMessageChars is Discord's limit on a message's content.
const MaxMessageChars = 2000

const fenceClose = "\n```"

// splitText cuts Markdown into parts of at most limit characters (runes),
// preferring a paragraph break, then a line break, then a sentence end, then
// a space, and cutting hard only inside a very long word. A code block that
// spans a cut is closed at the end of one part and reopened, with the same
// info string (```go), at the start of the next, so every part renders on
// its own.
func splitText(text string, limit int) []string {
	if limit < 64 {
		limit = 64
	}
	text = strings.TrimRight(text, " \t\n")
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
			if open, _ := fenceState(whole); !open {
				parts = append(parts, whole)
				break
			} else if n+len(fenceClose) <= limit {
				parts = append(parts, whole+fenceClose)
				break
			}
		}
		budget := limit - utf8.RuneCountInString(prefix) - len(fenceClose)
		cut, skip := bestCut(rest, budget)
		piece := strings.TrimRight(rest[:cut], " \t\n")
		rest = rest[cut+skip:]
		part := prefix + piece
		open, line := fenceState(part)
		if open {
			part += fenceClose
			opener = line
		} else {
			opener = ""
		}
		if strings.TrimSpace(piece) != "" {
			parts = append(parts, part)
		}
	}
	return parts
}

// bestCut returns the byte offset to cut s at so that s[:cut] has at most
// budget runes, and how many separator bytes to drop after the cut.
func bestCut(s string, budget int) (cut, skip int) {
	if budget < 1 {
		budget = 1
	}
	// Byte offset of the first rune past the budget.
	end := len(s)
	n := 0
	for i := range s {
		if n == budget {
			end = i
			break
		}
		n++
	}
	window := s[:end]
	// A boundary too early wastes a part; accept one only past a third of
	// the window.
	minPos := len(window) / 3
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

// truncateText fits text into one message: the first part of its split,
// marked as cut when there was more.
func truncateText(text string, limit int) string {
	parts := splitText(text, limit-2)
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	default:
		return parts[0] + "\n…"
	}
}
