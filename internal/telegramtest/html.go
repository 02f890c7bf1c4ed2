package telegramtest

import (
	"fmt"
	"html"
	"strings"
	"unicode/utf16"
)

// Entity is a formatting span of a message, as the Bot API reports it:
// offsets and lengths in UTF-16 code units.
type Entity struct {
	Type     string `json:"type"`
	Offset   int    `json:"offset"`
	Length   int    `json:"length"`
	URL      string `json:"url,omitempty"`
	Language string `json:"language,omitempty"`
}

// tagEntity maps the HTML tags of Telegram's HTML parse mode
// (https://core.telegram.org/bots/api#html-style) to entity types.
var tagEntity = map[string]string{
	"b": "bold", "strong": "bold", "i": "italic", "em": "italic", "u": "underline", "ins": "underline",
	"s": "strikethrough", "strike": "strikethrough", "del": "strikethrough", "tg-spoiler": "spoiler",
	"a": "text_link", "code": "code", "pre": "pre", "blockquote": "blockquote", "span": "spoiler", "tg-emoji": "custom_emoji",
}

// parseHTML reads text in Telegram's HTML parse mode as Telegram does: the
// shown text and its entities, or the error Telegram answers ("can't
// parse entities: …") for a tag it does not know, a tag not closed or
// closed out of order, or a bare "<" or "&" that is not an entity.
func parseHTML(s string) (string, []Entity, error) {
	type open = openTag
	var (
		out   strings.Builder
		units int
		stack []open
		ents  []Entity
	)
	write := func(t string) {
		out.WriteString(t)
		units += len(utf16.Encode([]rune(t)))
	}
	for i := 0; i < len(s); {
		switch s[i] {
		case '<':
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return "", nil, fmt.Errorf("can't parse entities: unclosed start tag at byte offset %d", i)
			}
			raw := s[i+1 : i+end]
			i += end + 1
			if name, ok := strings.CutPrefix(raw, "/"); ok {
				name = strings.ToLower(strings.TrimSpace(name))
				if len(stack) == 0 || stack[len(stack)-1].tag != name {
					return "", nil, fmt.Errorf("can't parse entities: unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", i, topTag(stack), name)
				}
				top := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				top.ent.Offset, top.ent.Length = top.start, units-top.start
				if top.ent.Length > 0 {
					ents = append(ents, top.ent)
				}
				continue
			}
			name, attrs, _ := strings.Cut(strings.TrimSpace(raw), " ")
			name = strings.ToLower(name)
			typ, ok := tagEntity[name]
			if !ok {
				return "", nil, fmt.Errorf("can't parse entities: unsupported start tag \"%s\" at byte offset %d", name, i)
			}
			ent := Entity{Type: typ}
			switch name {
			case "a":
				href := attrValue(attrs, "href")
				if href == "" {
					return "", nil, fmt.Errorf("can't parse entities: the <a> tag at byte offset %d has no href", i)
				}
				ent.URL = href
			case "code":
				if lang, ok := strings.CutPrefix(attrValue(attrs, "class"), "language-"); ok && len(stack) > 0 && stack[len(stack)-1].tag == "pre" {
					stack[len(stack)-1].ent.Language = lang
				}
			case "span":
				if attrValue(attrs, "class") != "tg-spoiler" {
					return "", nil, fmt.Errorf("can't parse entities: tag \"span\" must have class \"tg-spoiler\" at byte offset %d", i)
				}
			}
			if len(stack) > 0 && (stack[len(stack)-1].tag == "code" || (stack[len(stack)-1].tag == "pre" && name != "code")) {
				return "", nil, fmt.Errorf("can't parse entities: tag \"%s\" can't be nested in \"%s\" at byte offset %d", name, stack[len(stack)-1].tag, i)
			}
			stack = append(stack, open{tag: name, start: units, ent: ent})
		case '&':
			end := strings.IndexByte(s[i:], ';')
			if end < 0 || end > 10 {
				return "", nil, fmt.Errorf("can't parse entities: character entity expected at byte offset %d", i)
			}
			u := html.UnescapeString(s[i : i+end+1])
			if u == s[i:i+end+1] {
				return "", nil, fmt.Errorf("can't parse entities: unsupported HTML entity \"%s\" at byte offset %d", s[i:i+end+1], i)
			}
			write(u)
			i += end + 1
		case '>':
			return "", nil, fmt.Errorf("can't parse entities: unexpected \">\" at byte offset %d", i)
		default:
			j := i
			for j < len(s) && s[j] != '<' && s[j] != '&' && s[j] != '>' {
				j++
			}
			write(s[i:j])
			i = j
		}
	}
	if len(stack) > 0 {
		return "", nil, fmt.Errorf("can't parse entities: can't find end tag corresponding to start tag \"%s\"", stack[len(stack)-1].tag)
	}
	// The Bot API strips leading and trailing white space.
	text := out.String()
	trimmed := strings.TrimLeft(text, " \n\t")
	if cut := len(utf16.Encode([]rune(text[:len(text)-len(trimmed)]))); cut > 0 {
		for k := range ents {
			ents[k].Offset = max(0, ents[k].Offset-cut)
		}
	}
	return strings.TrimRight(trimmed, " \n\t"), ents, nil
}

// openTag is a tag read and not closed yet.
type openTag struct {
	tag   string
	start int // UTF-16 offset
	ent   Entity
}

func topTag(stack []openTag) string {
	if len(stack) == 0 {
		return ""
	}
	return stack[len(stack)-1].tag
}

// attrValue reads name="value" from a tag's attributes.
func attrValue(attrs, name string) string {
	i := strings.Index(attrs, name+"=")
	if i < 0 {
		return ""
	}
	v := attrs[i+len(name)+1:]
	if len(v) > 0 && (v[0] == '"' || v[0] == '\'') {
		q := v[0]
		if end := strings.IndexByte(v[1:], q); end >= 0 {
			return html.UnescapeString(v[1 : 1+end])
		}
		return ""
	}
	v, _, _ = strings.Cut(v, " ")
	return v
}

// utf16Len is a text's length as Telegram counts it.
func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }
