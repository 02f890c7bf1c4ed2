// Package mrkdwn converts the Markdown models write into Slack's mrkdwn and
// splits long mrkdwn into messages within Slack's limits without breaking a
// code block. Replies (bots/slack) and cards (bots/slack/slackcard) share it.
package mrkdwn

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Convert converts the Markdown a model writes into Slack mrkdwn: **bold**
// becomes *bold*, *italic* and _italic_ become _italic_, ~~strike~~ becomes
// ~strike~, [text](url) becomes <url|text>, headings become bold lines, list
// bullets become •, tables become code blocks, and &, < and > are escaped
// everywhere (Slack parses <...> as a link or mention even inside code).
// Inline code and fenced code are kept, without the fence's language tag,
// which Slack would print as the first line.
func Convert(md string) string {
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	out := make([]string, 0, len(lines))
	fence := "" // the opening marker while inside a fenced block
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimLeft(line, " \t")
		if fence != "" {
			if isFenceClose(trimmed, fence) {
				out = append(out, "```")
				fence = ""
				continue
			}
			out = append(out, Escape(line))
			continue
		}
		if m := fenceOpen(trimmed); m != "" {
			fence = m
			out = append(out, "```")
			continue
		}
		if isTableRow(line) && i+1 < len(lines) && isTableSeparator(lines[i+1]) {
			out = append(out, "```")
			for ; i < len(lines) && isTableRow(lines[i]); i++ {
				out = append(out, Escape(strings.TrimSpace(lines[i])))
			}
			i--
			out = append(out, "```")
			continue
		}
		out = append(out, convertLine(line))
	}
	if fence != "" {
		out = append(out, "```") // the model stopped inside a block: close it
	}
	return defuseBroadcasts(strings.Join(out, "\n"))
}

func convertLine(line string) string {
	indent := len(line) - len(strings.TrimLeft(line, " \t"))
	rest := line[indent:]
	if rest == "" {
		return ""
	}
	if text, ok := heading(rest); ok {
		return "*" + convertInline(text, true) + "*"
	}
	if isRule(rest) {
		return "──────────"
	}
	if strings.HasPrefix(rest, ">") {
		q := strings.TrimLeft(rest, "> ")
		return "> " + convertLine(q)
	}
	pad := strings.Repeat("  ", min(indent/2, 6))
	if len(rest) >= 2 && strings.ContainsRune("-*+", rune(rest[0])) && rest[1] == ' ' {
		item := strings.TrimLeft(rest[2:], " ")
		switch {
		case strings.HasPrefix(item, "[ ] "):
			return pad + "☐ " + convertInline(item[4:], false)
		case strings.HasPrefix(item, "[x] "), strings.HasPrefix(item, "[X] "):
			return pad + "☑ " + convertInline(item[4:], false)
		}
		return pad + "• " + convertInline(item, false)
	}
	if n := orderedMarker(rest); n > 0 {
		return pad + rest[:n-1] + ". " + convertInline(strings.TrimLeft(rest[n:], " "), false)
	}
	return pad + convertInline(rest, false)
}

// orderedMarker returns the length of "12." or "12)" plus the space after
// it, or 0.
func orderedMarker(s string) int {
	i := 0
	for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i+1 >= len(s) || (s[i] != '.' && s[i] != ')') || s[i+1] != ' ' {
		return 0
	}
	return i + 1
}

func heading(s string) (string, bool) {
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(s) && s[n] != ' ') {
		return "", false
	}
	return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(s[n:]), "#")), true
}

func isRule(s string) bool {
	s = strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	if len(s) < 3 {
		return false
	}
	return strings.Trim(s, "-") == "" || strings.Trim(s, "*") == "" || strings.Trim(s, "_") == ""
}

func fenceOpen(s string) string {
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(s) && s[n] == c {
			n++
		}
		if n >= 3 {
			if c == '`' && strings.ContainsRune(s[n:], '`') {
				return "" // ```code``` on one line is inline code
			}
			return s[:n]
		}
	}
	return ""
}

func isFenceClose(s, open string) bool {
	s = strings.TrimRight(s, " \t")
	return len(s) >= len(open) && strings.Trim(s, open[:1]) == ""
}

func isTableRow(s string) bool {
	s = strings.TrimSpace(s)
	return len(s) >= 2 && s[0] == '|' && strings.Count(s, "|") >= 2
}

func isTableSeparator(s string) bool {
	s = strings.TrimSpace(s)
	return isTableRow(s) && strings.Trim(s, "|-: ") == "" && strings.Contains(s, "-")
}

// Escape escapes the three characters Slack reserves for its markup.
func Escape(s string) string {
	if !strings.ContainsAny(s, "&<>@") {
		return s
	}
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	return defuseBroadcasts(r.Replace(s))
}

// defuseBroadcasts puts an invisible word joiner after the "@" of
// @channel, @here and @everyone where they stand as words (not in
// name@here.example), so that Slack never reads them as a broadcast.
func defuseBroadcasts(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	inLink := false // escaped text has "<" only where a link opens
	for i := 0; i < len(s); i++ {
		b.WriteByte(s[i])
		switch s[i] {
		case '<':
			inLink = true
		case '>', '|':
			inLink = false // past the link's target: its label is text
		case '@':
			if !inLink && (i == 0 || !isWordByte(s[i-1])) && i+1 < len(s) && broadcastAt(s[i+1:]) {
				b.WriteString(wordJoiner)
			}
		}
	}
	return b.String()
}

// escapeURL makes a URL safe inside <url|text>.
func escapeURL(u string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "%3C", ">", "%3E", "|", "%7C", " ", "%20", "\t", "%09")
	return r.Replace(u)
}

// convertInline converts one line's inline Markdown. inBold drops nested bold
// markers, which Slack cannot nest (headings are already bold).
func convertInline(s string, inBold bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]):
			b.WriteString(Escape(s[i+1 : i+2]))
			i += 2
		case c == '`':
			n := runLen(s, i, '`')
			if j := findCodeClose(s, i+n, n); j >= 0 {
				b.WriteString("`" + Escape(s[i+n:j]) + "`")
				i = j + n
			} else {
				b.WriteString(s[i : i+n])
				i += n
			}
		case c == '!' && i+1 < len(s) && s[i+1] == '[':
			if text, u, end, ok := parseLink(s, i+1); ok {
				b.WriteString(formatLink(u, text))
				i = end
			} else {
				b.WriteByte('!')
				i++
			}
		case c == '[':
			if text, u, end, ok := parseLink(s, i); ok {
				b.WriteString(formatLink(u, text))
				i = end
			} else {
				b.WriteString("[")
				i++
			}
		case c == '<':
			if j := strings.IndexByte(s[i:], '>'); j > 0 && isAutolink(s[i+1:i+j]) {
				b.WriteString("<" + escapeURL(s[i+1:i+j]) + ">")
				i += j + 1
			} else {
				b.WriteString("&lt;")
				i++
			}
		case c == '>':
			b.WriteString("&gt;")
			i++
		case c == '&':
			b.WriteString("&amp;")
			i++
		case c == '~' && strings.HasPrefix(s[i:], "~~"):
			if j := findDelimClose(s, i+2, "~~"); j >= 0 {
				b.WriteString("~" + convertInline(s[i+2:j], inBold) + "~")
				i = j + 2
			} else {
				b.WriteString("~~")
				i += 2
			}
		case c == '*' || c == '_':
			out, end := convertEmphasis(s, i, inBold)
			b.WriteString(out)
			i = end
		default:
			_, size := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[i : i+size])
			i += size
		}
	}
	return b.String()
}

// convertEmphasis handles a run of * or _ at s[i]. It returns what to write
// and where to continue.
func convertEmphasis(s string, i int, inBold bool) (string, int) {
	c := s[i]
	n := runLen(s, i, c)
	literal := s[i : i+n]
	if i+n >= len(s) || s[i+n] == ' ' {
		return literal, i + n // "5 * 3" or a trailing marker
	}
	// Intraword underscores (snake_case) are not emphasis.
	if c == '_' && i > 0 && isWordByte(s[i-1]) {
		return literal, i + n
	}
	delim := strings.Repeat(string(c), min(n, 3))
	j := findDelimClose(s, i+len(delim), delim)
	if j < 0 || (c == '_' && j+len(delim) < len(s) && isWordByte(s[j+len(delim)])) {
		return literal, i + n
	}
	inner := s[i+len(delim) : j]
	end := j + len(delim)
	switch len(delim) {
	case 1:
		return "_" + convertInline(inner, inBold) + "_", end
	case 2:
		if inBold {
			return convertInline(inner, true), end
		}
		return "*" + convertInline(inner, true) + "*", end
	default:
		if inBold {
			return "_" + convertInline(inner, true) + "_", end
		}
		return "*_" + convertInline(inner, true) + "_*", end
	}
}

// findDelimClose finds the closing delimiter starting at from: the exact run,
// not preceded by a space, not part of a longer run.
func findDelimClose(s string, from int, delim string) int {
	c := delim[0]
	for j := from; j+len(delim) <= len(s); j++ {
		if s[j] == '`' { // code spans hide delimiters
			n := runLen(s, j, '`')
			if k := findCodeClose(s, j+n, n); k >= 0 {
				j = k + n - 1
				continue
			}
		}
		if s[j] != c {
			continue
		}
		n := runLen(s, j, c)
		if n == len(delim) && j > from && s[j-1] != ' ' {
			return j
		}
		j += n - 1
	}
	return -1
}

func findCodeClose(s string, from, n int) int {
	for j := from; j < len(s); j++ {
		if s[j] == '`' {
			m := runLen(s, j, '`')
			if m == n {
				return j
			}
			j += m - 1
		}
	}
	return -1
}

// parseLink parses [text](url) starting at the '['.
func parseLink(s string, i int) (text, u string, end int, ok bool) {
	depth := 0
	j := i
	for ; j < len(s); j++ {
		if s[j] == '[' {
			depth++
		} else if s[j] == ']' {
			depth--
			if depth == 0 {
				break
			}
		}
	}
	if j >= len(s) || j+1 >= len(s) || s[j+1] != '(' {
		return "", "", 0, false
	}
	k := strings.IndexByte(s[j+2:], ')')
	if k < 0 {
		return "", "", 0, false
	}
	u = strings.TrimSpace(s[j+2 : j+2+k])
	if sp := strings.IndexByte(u, ' '); sp > 0 { // [t](url "title")
		u = u[:sp]
	}
	u = strings.Trim(u, "<>")
	if u == "" {
		return "", "", 0, false
	}
	return s[i+1 : j], u, j + 2 + k + 1, true
}

func formatLink(u, text string) string {
	return Link(u, stripMarkers(strings.TrimSpace(text)))
}

// Link writes a link to target shown as text. Slack writes broadcasts,
// mentions and channel links in the same <…> syntax (<!channel>, <@U123>,
// <#C123>), so a target that is not a web or mail address gets no link at
// all: the text, or the target when there is none, is shown escaped. Model
// text must never notify a channel or a person.
func Link(target, text string) string {
	text = strings.TrimSpace(text)
	if !SafeURL(target) {
		if text == "" {
			text = target
		}
		return Escape(text)
	}
	if text == "" || text == target {
		return "<" + escapeURL(target) + ">"
	}
	return "<" + escapeURL(target) + "|" + Escape(text) + ">"
}

// SafeURL reports whether Slack would read <u> as a link to a web page or
// a mail address, never as a broadcast or a mention.
func SafeURL(u string) bool {
	for _, scheme := range []string{"https://", "http://", "mailto:"} {
		if len(u) > len(scheme) && strings.EqualFold(u[:len(scheme)], scheme) {
			return true
		}
	}
	return false
}

// stripMarkers removes emphasis markers from a link label, which Slack shows
// as plain text.
func stripMarkers(s string) string {
	return strings.NewReplacer("**", "", "__", "", "`", "").Replace(s)
}

func isAutolink(s string) bool {
	return !strings.ContainsAny(s, " \t") && SafeURL(s)
}

func runLen(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

func isWordByte(b byte) bool {
	return b >= utf8.RuneSelf || unicode.IsLetter(rune(b)) || unicode.IsDigit(rune(b))
}

func isASCIIPunct(b byte) bool {
	return b < utf8.RuneSelf && unicode.IsPunct(rune(b)) || strings.IndexByte("`*_~[]()#+-.!<>|\\", b) >= 0
}

const codeFence = "```"

// Split cuts mrkdwn text into parts of at most limit characters. It
// cuts between lines where it can and inside a line only when the line alone
// is too long or the part would stay less than half full (at a space,
// outside a <link>). A cut never leaves a code block open: the part ends
// with a closing fence and the next part reopens it. No part is blank, and
// every part but the last carries at least limit/2 characters of text, so
// there are at most 2·len/limit + 1 parts. Text without content (only
// spaces and fences) gives no part.
func Split(text string, limit int) []string {
	limit = max(limit, minSplitLimit)
	if blank(text) {
		return nil
	}
	if utf8.RuneCountInString(text) <= limit {
		return []string{text}
	}
	sp := splitter{limit: limit}
	for _, line := range strings.Split(text, "\n") {
		sp.add(line)
	}
	sp.flush(true)
	return sp.parts
}

// minSplitLimit keeps a part's fences and a cut's margins (an entity is
// never split) to a small share of the part.
const minSplitLimit = 32

// blank reports text that would show nothing: only spaces and fences.
func blank(s string) bool {
	return strings.TrimSpace(strings.ReplaceAll(s, codeFence, "")) == ""
}

type splitter struct {
	limit   int
	parts   []string
	cur     []string
	curLen  int
	inFence bool
	// openedAt is the index in cur of the fence line that opened the current
	// block, or -1.
	openedAt int
}

const fenceCloseLen = 4 // "\n```"

// isFenceLine reports a fence as Convert writes it: the marker alone.
func isFenceLine(line string) bool { return strings.TrimSpace(line) == codeFence }

func (sp *splitter) add(line string) {
	for {
		sep := 0
		if len(sp.cur) > 0 {
			sep = 1
		}
		l := utf8.RuneCountInString(line)
		fenceLine := isFenceLine(line)
		after := sp.inFence != fenceLine
		reserve := 0
		if after {
			reserve = fenceCloseLen
		}
		if sp.curLen+sep+l+reserve <= sp.limit {
			sp.appendLine(line, sep, l, fenceLine)
			return
		}
		// Half a part of the text (the reopened fence is not text) is
		// enough to start the next part with this line.
		full := sp.limit/2 + len(codeFence) + 1
		if sp.hasContent() && (sp.curLen >= full || fenceLine) {
			sp.flush(false)
			continue
		}
		// The line does not fit: fill the part with its head.
		room := sp.limit - sp.curLen - sep
		if sp.inFence {
			room -= fenceCloseLen
		}
		head, tail := cutLine(line, room, full-sp.curLen-sep)
		sp.appendLine(head, sep, utf8.RuneCountInString(head), false)
		sp.flush(false)
		line = tail
	}
}

func (sp *splitter) appendLine(line string, sep, l int, fenceLine bool) {
	sp.cur = append(sp.cur, line)
	sp.curLen += sep + l
	if fenceLine {
		sp.inFence = !sp.inFence
		sp.openedAt = -1
		if sp.inFence {
			sp.openedAt = len(sp.cur) - 1
		}
	}
}

// hasContent reports whether cur holds more than a reopened fence.
func (sp *splitter) hasContent() bool {
	if sp.inFence {
		return len(sp.cur) > 1 || (len(sp.cur) == 1 && sp.openedAt != 0)
	}
	return len(sp.cur) > 0
}

func (sp *splitter) flush(last bool) {
	lines := sp.cur
	closeFence := sp.inFence
	if sp.inFence && sp.openedAt == len(lines)-1 && !last {
		// The block opened on the part's last line: open it in the next part.
		lines = lines[:len(lines)-1]
		closeFence = false
	}
	part := strings.Join(lines, "\n")
	if closeFence {
		part += "\n" + codeFence
	}
	if !blank(part) {
		sp.parts = append(sp.parts, strings.Trim(part, "\n"))
	}
	sp.cur, sp.curLen, sp.openedAt = nil, 0, -1
	if sp.inFence && !last {
		sp.cur = []string{codeFence}
		sp.curLen = len(codeFence)
		sp.openedAt = 0
	}
}

// cutLine cuts line so that head has at most room characters, preferring the
// last space outside a <...> link at or after minHead characters.
func cutLine(line string, room, minHead int) (head, tail string) {
	room = max(room, 1)
	minHead = min(max(minHead, 1), room)
	byteAt, n := 0, 0
	lastSpace := -1
	inLink := false
	for i, r := range line {
		if n == room {
			byteAt = i
			break
		}
		switch r {
		case '<':
			inLink = true
		case '>':
			inLink = false
		case ' ':
			if !inLink && n >= minHead {
				lastSpace = i
			}
		}
		n++
		byteAt = i + utf8.RuneLen(r)
	}
	if byteAt >= len(line) {
		return line, ""
	}
	// A cut must not make a fence of text ("x ```" would open a block).
	if lastSpace > 0 && !isFenceLine(line[:lastSpace]) && !isFenceLine(line[lastSpace+1:]) {
		return line[:lastSpace], line[lastSpace+1:]
	}
	// A hard cut must not split an &amp; entity.
	if amp := strings.LastIndexByte(line[:byteAt], '&'); amp >= 0 && byteAt-amp < 5 && !strings.Contains(line[amp:byteAt], ";") && amp > 0 {
		byteAt = amp
	}
	for isFenceLine(line[:byteAt]) || isFenceLine(line[byteAt:]) {
		_, size := utf8.DecodeLastRuneInString(line[:byteAt])
		if byteAt <= size {
			break
		}
		byteAt -= size
	}
	return line[:byteAt], line[byteAt:]
}

// wordJoiner is an invisible character that keeps Slack from reading
// what follows it as part of a control sequence or a broadcast.
const wordJoiner = "\u2060"

// broadcasts are the words Slack may read as a broadcast after an @.
var broadcasts = []string{"channel", "here", "everyone"}

// Defuse neutralises broadcast and mention markup in standard Markdown
// that goes to Slack as it is written (the markdown block, a stream's
// markdown_text), where Convert's escaping does not apply: an invisible
// word joiner after "<" keeps <!channel>, <!here>, <!everyone>,
// <!subteam^…>, <@U…> and <#C…> from being read as markup, and one after
// "@" keeps @channel, @here and @everyone from being a broadcast. What
// people see is unchanged. It is safe on pieces of a text sent one after
// another (a stream's appends): a "<" or an "@…" that ends a piece, and
// that the next piece could complete, is defused too.
func Defuse(md string) string {
	if !strings.ContainsAny(md, "<@") {
		return md
	}
	var b strings.Builder
	b.Grow(len(md) + 8)
	for i := 0; i < len(md); i++ {
		c := md[i]
		b.WriteByte(c)
		switch c {
		case '<':
			if i+1 == len(md) || strings.IndexByte("!@#", md[i+1]) >= 0 {
				b.WriteString(wordJoiner)
			}
		case '@':
			if broadcastAt(md[i+1:]) {
				b.WriteString(wordJoiner)
			}
		}
	}
	return b.String()
}

// broadcastAt reports whether rest, what follows an "@", starts with a
// broadcast word (not followed by a letter), or is a start of one cut at
// the end of the piece.
func broadcastAt(rest string) bool {
	for _, w := range broadcasts {
		n := min(len(rest), len(w))
		if !strings.EqualFold(rest[:n], w[:n]) {
			continue
		}
		if n < len(w) {
			return n == len(rest) // cut at the end: the next piece may finish it
		}
		if n == len(rest) || !isWordByte(rest[n]) {
			return true
		}
	}
	return false
}
