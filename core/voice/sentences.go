package voice

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sentences cuts streamed reply text into sentences as they complete, so
// each can be spoken while the model still writes the next. Feed it the
// deltas in order; Flush returns what is left at the end of the reply.
// The zero value is ready to use; it is not safe for concurrent use.
//
// A sentence ends at . ! ? or … (with closing quotes or brackets after it)
// followed by white space, or at a line break ending a paragraph or a list
// item. A full stop after a number, a single letter or a common
// abbreviation ("e.g.", "Dr.", "3.") does not end a sentence. Code blocks
// are not read out.
type Sentences struct {
	buf    strings.Builder
	inCode bool
}

// Feed adds a delta and returns the sentences it completed, in order.
func (s *Sentences) Feed(delta string) []string {
	s.buf.WriteString(delta)
	text := s.buf.String()
	var out []string
	start := 0
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		// Fenced code: skip to the closing fence (or wait for it).
		if r == '`' && strings.HasPrefix(text[i:], "```") && atLineStart(text, i) {
			if sentence := clean(text[start:i]); sentence != "" {
				out = append(out, sentence)
			}
			end := strings.Index(text[i+3:], "```")
			if end < 0 {
				start = i
				s.keep(text[start:])
				return out
			}
			i = i + 3 + end + 3
			start = i
			continue
		}
		end := -1
		switch {
		case r == '\n':
			// A blank line or a new list item or heading ends what came
			// before; a single wrapped line does not.
			rest := text[i+1:]
			if rest == "" {
				s.keep(text[start:])
				return out
			}
			if rest[0] == '\n' || listOrHeading(rest) {
				end = i
			}
		case r == '.' || r == '!' || r == '?' || r == '…':
			j := i + size
			for j < len(text) && strings.ContainsRune(`"')]”’»*_`, rune(text[j])) {
				j++
			}
			if j >= len(text) {
				// The next delta says whether this ends a sentence.
				s.keep(text[start:])
				return out
			}
			if unicode.IsSpace(rune(text[j])) && !(r == '.' && abbreviation(text[start:i])) {
				end = j
			}
		}
		if end >= 0 {
			if sentence := clean(text[start:end]); sentence != "" {
				out = append(out, sentence)
			}
			start = end
		}
		i += size
	}
	s.keep(text[start:])
	return out
}

// Flush returns the unfinished rest (the reply's last sentence when it has
// no final punctuation) and empties the splitter.
func (s *Sentences) Flush() string {
	rest := s.buf.String()
	s.buf.Reset()
	if strings.HasPrefix(strings.TrimSpace(rest), "```") {
		return "" // an unclosed code block
	}
	return clean(rest)
}

func (s *Sentences) keep(rest string) {
	s.buf.Reset()
	s.buf.WriteString(rest)
}

func atLineStart(text string, i int) bool {
	return i == 0 || text[i-1] == '\n'
}

var listItem = regexp.MustCompile(`^\s*([-*+•]|\d+[.)]|#{1,6})\s`)

func listOrHeading(rest string) bool {
	return listItem.MatchString(rest)
}

var abbreviations = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "sr": true, "jr": true, "st": true,
	"vs": true, "etc": true, "e.g": true, "i.e": true, "approx": true, "no": true, "fig": true,
	"inc": true, "ltd": true, "co": true, "jan": true, "feb": true, "mar": true, "apr": true,
	"jun": true, "jul": true, "aug": true, "sep": true, "sept": true, "oct": true, "nov": true, "dec": true,
}

// abbreviation reports whether the word before a full stop is one that
// does not end a sentence: a known abbreviation, a single letter (an
// initial) or a number ("3. Then…" in a list is cut at the line break
// instead).
func abbreviation(before string) bool {
	k := strings.LastIndexFunc(before, func(r rune) bool { return unicode.IsSpace(r) || r == '(' })
	word := strings.ToLower(before[k+1:])
	if word == "" {
		return false
	}
	if abbreviations[word] {
		return true
	}
	if utf8.RuneCountInString(word) == 1 && unicode.IsLetter([]rune(word)[0]) {
		return true
	}
	for _, r := range word {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	// A number alone at the start of a line numbers a list item.
	line := before[strings.LastIndex(before, "\n")+1:]
	return strings.TrimSpace(line) == before[k+1:]
}

var (
	mdLink   = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	mdMarks  = regexp.MustCompile("[*_`~]+")
	mdPrefix = regexp.MustCompile(`(?m)^\s*([-*+•]|\d+[.)]|#{1,6}|>)\s+`)
	spaces   = regexp.MustCompile(`\s+`)
)

// clean turns a Markdown sentence into what should be said: links become
// their text, emphasis and code marks, list bullets, heading and quote
// marks go, white space is folded.
func clean(s string) string {
	s = mdLink.ReplaceAllString(s, "$1")
	s = mdPrefix.ReplaceAllString(s, "")
	s = mdMarks.ReplaceAllString(s, "")
	s = spaces.ReplaceAllString(s, " ")
	s = strings.TrimSpace(s)
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
		return ""
	}
	return s
}
