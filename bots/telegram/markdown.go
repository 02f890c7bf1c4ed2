package telegram

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Telegram shows formatted text in one of three parse modes; the adapter
// uses HTML, whose escaping is three characters (&, <, >) instead of
// MarkdownV2's eighteen, so the Markdown models write is converted to it:
// **bold** and __bold__ become <b>, *italic* and _italic_ <i>, ~~strike~~
// <s>, `code` <code>, fenced code <pre><code>, [text](url) <a href> (web,
// mail and tg: addresses only), headings bold lines, bullets •, and
// quoted lines a <blockquote>. Every tag is written with its closing tag
// around converted text, so the result is well formed whatever the input;
// should Telegram still refuse it ("can't parse entities"), the message
// goes out as plain text (see send).

// MaxMessageChars is the longest text of one message, in UTF-16 code
// units as Telegram counts them after entities are parsed.
const MaxMessageChars = 4096

// MaxCaptionChars is the longest caption of a file.
const MaxCaptionChars = 1024

// toHTML converts Markdown to Telegram HTML.
func toHTML(md string) string {
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	var out []string
	var quote []string
	flushQuote := func() {
		if len(quote) > 0 {
			out = append(out, "<blockquote>"+strings.Join(quote, "\n")+"</blockquote>")
			quote = nil
		}
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimLeft(line, " \t")
		if fence, lang := fenceOpen(trimmed); fence != "" {
			flushQuote()
			var code []string
			j := i + 1
			for ; j < len(lines); j++ {
				if isFenceClose(strings.TrimLeft(lines[j], " \t"), fence) {
					break
				}
				code = append(code, lines[j])
			}
			open := "<pre><code>"
			if lang != "" {
				open = `<pre><code class="language-` + html.EscapeString(lang) + `">`
			}
			out = append(out, open+escape(strings.Join(code, "\n"))+"</code></pre>")
			i = j
			continue
		}
		if rest, ok := strings.CutPrefix(trimmed, ">"); ok {
			quote = append(quote, inline(strings.TrimPrefix(rest, " ")))
			continue
		}
		flushQuote()
		if h := heading(trimmed); h != "" {
			out = append(out, "<b>"+inline(h)+"</b>")
			continue
		}
		if b, ok := bullet(trimmed); ok {
			indent := line[:len(line)-len(trimmed)]
			out = append(out, indent+"• "+inline(b))
			continue
		}
		out = append(out, inline(line))
	}
	flushQuote()
	return strings.Join(out, "\n")
}

// escape escapes what Telegram's HTML parse mode reads as markup.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// fenceOpen returns the fence marker (``` or ~~~, possibly longer) and the
// language tag of an opening fence line, or "".
func fenceOpen(line string) (fence, lang string) {
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(line) && line[n] == c {
			n++
		}
		if n >= 3 {
			info := strings.TrimSpace(line[n:])
			if c == '`' && strings.Contains(info, "`") {
				return "", ""
			}
			lang, _, _ = strings.Cut(info, " ")
			return line[:n], lang
		}
	}
	return "", ""
}

func isFenceClose(line, fence string) bool {
	t := strings.TrimRight(line, " \t")
	return strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == ""
}

func heading(line string) string {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n >= len(line) || line[n] != ' ' {
		return ""
	}
	return strings.TrimRight(strings.TrimSpace(line[n:]), "#")
}

func bullet(line string) (string, bool) {
	if len(line) >= 2 && (line[0] == '-' || line[0] == '*' || line[0] == '+') && line[1] == ' ' {
		return line[2:], true
	}
	return "", false
}

// inline converts the inline Markdown of one line.
func inline(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && strings.IndexByte("\\`*_~[]()#+-.!>|", s[i+1]) >= 0:
			b.WriteString(escape(s[i+1 : i+2]))
			i += 2
			continue
		case c == '`':
			n := run(s[i:], '`')
			if end := strings.Index(s[i+n:], s[i:i+n]); end >= 0 {
				code := s[i+n : i+n+end]
				if t := strings.TrimSpace(code); t != "" {
					b.WriteString("<code>" + escape(t) + "</code>")
					i += n + end + n
					continue
				}
			}
			b.WriteString(s[i : i+n])
			i += n
			continue
		case c == '[':
			if text, href, n, ok := link(s[i:]); ok {
				b.WriteString(`<a href="` + html.EscapeString(href) + `">` + inline(text) + "</a>")
				i += n
				continue
			}
		case c == '*' || c == '_' || c == '~':
			if out, n, ok := emphasis(s, i); ok {
				b.WriteString(out)
				i += n
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(escape(s[i : i+size]))
		}
		i += size
	}
	return b.String()
}

// run counts the leading bytes of s equal to c.
func run(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// emphasis converts the delimited span that starts at s[i], or reports
// false when the delimiter there opens nothing (no closing delimiter, or
// an underscore inside a word).
func emphasis(s string, i int) (string, int, bool) {
	c := s[i]
	n := run(s[i:], c)
	var delim, tag string
	switch {
	case c == '~' && n >= 2:
		delim, tag = "~~", "s"
	case c == '~':
		return "", 0, false
	case n >= 2:
		delim, tag = s[i:i+2], "b"
	default:
		delim, tag = s[i:i+1], "i"
	}
	if c == '_' && i > 0 && isWordByte(s[i-1]) {
		return "", 0, false
	}
	start := i + len(delim)
	if start >= len(s) || s[start] == ' ' {
		return "", 0, false
	}
	for j := start + 1; j+len(delim) <= len(s); j++ {
		if s[j:j+len(delim)] != delim || s[j-1] == ' ' || s[j-1] == '\\' {
			continue
		}
		if len(delim) == 1 && j+1 < len(s) && s[j+1] == c {
			j++ // part of a longer run: not this span's end
			continue
		}
		if c == '_' && j+len(delim) < len(s) && isWordByte(s[j+len(delim)]) {
			continue
		}
		inner := s[start:j]
		return "<" + tag + ">" + inline(inner) + "</" + tag + ">", j + len(delim) - i, true
	}
	return "", 0, false
}

func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
}

// link parses [text](url) at the start of s; only web, mail and tg:
// addresses become links.
func link(s string) (text, href string, n int, ok bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
			if depth != 0 {
				continue
			}
			if i+1 >= len(s) || s[i+1] != '(' {
				return "", "", 0, false
			}
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				return "", "", 0, false
			}
			href = strings.TrimSpace(s[i+2 : i+2+end])
			if !safeURL(href) || strings.TrimSpace(s[1:i]) == "" {
				return "", "", 0, false
			}
			return s[1:i], href, i + 3 + end, true
		}
	}
	return "", "", 0, false
}

func safeURL(u string) bool {
	l := strings.ToLower(u)
	return (strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "mailto:") || strings.HasPrefix(l, "tg://")) &&
		!strings.ContainsFunc(u, unicode.IsSpace)
}

// utf16Len is the length of s as Telegram counts it.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
		if utf16.RuneLen(r) < 0 {
			n += 2 // an invalid rune is sent as U+FFFD
		}
	}
	return n
}

// split cuts Markdown into parts of at most max UTF-16 units, at a
// paragraph break, else a line break, else a space, else anywhere; a
// fenced code block cut in two is closed at the end of one part and
// opened again at the start of the next. The conversion to HTML never
// makes the shown text longer than the Markdown, so each part's message
// fits.
func split(md string, max int) []string {
	md = strings.TrimRight(md, "\n")
	if utf16Len(md) <= max {
		return []string{md}
	}
	var parts []string
	openFence := "" // the fence line to reopen in the next part
	for md != "" {
		prefix := ""
		if openFence != "" {
			prefix = openFence + "\n"
		}
		room := max - utf16Len(prefix) - 12 // room for a closing fence
		if utf16Len(md)+utf16Len(prefix) <= max {
			parts = append(parts, prefix+md)
			break
		}
		cut := cutAt(md, room)
		part := strings.TrimRight(md[:cut], "\n ")
		md = strings.TrimLeft(md[cut:], "\n")
		full := prefix + part
		fence := fenceStateAfter(openFence, part)
		if fence != "" {
			marker, _ := fenceOpen(fence)
			full += "\n" + marker
		}
		parts = append(parts, full)
		openFence = fence
	}
	return parts
}

// cutAt is the byte index at which to cut s so the first part has at most
// room UTF-16 units.
func cutAt(s string, room int) int {
	if room < 1 {
		room = 1
	}
	limit, n := 0, 0
	for i, r := range s {
		n += max(utf16.RuneLen(r), 1)
		if n > room {
			break
		}
		limit = i + utf8.RuneLen(r)
	}
	if limit == 0 {
		_, size := utf8.DecodeRuneInString(s)
		return size
	}
	head := s[:limit]
	for _, sep := range []string{"\n\n", "\n", " "} {
		if k := strings.LastIndex(head, sep); k > limit/2 {
			return k + len(sep)
		}
	}
	return limit
}

// fenceStateAfter is the fence open at the end of part, given the fence
// open (reopened) at its start.
func fenceStateAfter(open, part string) string {
	fenceLine := open
	for _, line := range strings.Split(part, "\n") {
		t := strings.TrimLeft(line, " \t")
		if fenceLine != "" {
			f, _ := fenceOpen(fenceLine)
			if isFenceClose(t, f) {
				fenceLine = ""
			}
			continue
		}
		if f, _ := fenceOpen(t); f != "" {
			fenceLine = t
		}
	}
	return fenceLine
}
