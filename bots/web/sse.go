package web

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
)

// streamChunk is how much encoded catch-up a stream gathers before it
// writes to the connection.
const streamChunk = 64 << 10

// appendEntryFrame appends an entry's SSE event to buf, written straight
// from the bytes the store handed over (core.EntryRow): "entry" with the
// seq as its id, or "error" without an id for an error entry. The data is
// the JSON of toEntryJSON, written without encoding/json: a catch-up of
// 10,000 entries would otherwise spend most of its time in reflection. The
// content goes out as it is stored: the store keeps it as encoding/json
// writes a json.RawMessage (compact, HTML-escaped), so the event is byte
// for byte what encoding/json would write. Content stored before that
// rule, or rewritten by Postgres (forgetting a person), may hold
// whitespace; only a newline could break an SSE data line, so content with
// one (found by IndexByte, not a scan of our own) is compacted first.
func appendEntryFrame(buf []byte, e *core.EntryRow) ([]byte, error) {
	if e.Seq != 0 {
		buf = append(buf, "id: "...)
		buf = strconv.AppendInt(buf, e.Seq, 10)
		buf = append(buf, "\nevent: entry\ndata: "...)
	} else {
		buf = append(buf, "event: error\ndata: "...)
	}
	// The keys in EntryJSON's order: sorted.
	buf = append(buf, '{')
	if e.Seq == 0 {
		buf = append(buf, `"after_seq":`...)
		buf = strconv.AppendInt(buf, e.AfterSeq, 10)
		buf = append(buf, ',')
	}
	buf = append(buf, `"author":`...)
	buf = appendJSONString(buf, e.Author)
	buf = append(buf, `,"content":`...)
	switch {
	case len(e.Content) == 0:
		buf = append(buf, "null"...)
	case bytes.IndexByte(e.Content, '\n') < 0 && bytes.IndexByte(e.Content, '\r') < 0:
		buf = append(buf, e.Content...)
	default:
		var err error
		if buf, err = appendCompactJSON(buf, e.Content); err != nil {
			return buf, fmt.Errorf("encoding entry %s: %w", e.ID, err)
		}
	}
	buf = append(buf, `,"created_at":"`...)
	if y := e.CreatedAt.Year(); y < 0 || y >= 10000 {
		return buf, fmt.Errorf("encoding entry %s: created_at year %d outside [0,9999]", e.ID, y)
	}
	buf = e.CreatedAt.AppendFormat(buf, time.RFC3339Nano)
	buf = append(buf, `","id":"`...)
	buf = appendUUID(buf, e.ID)
	buf = append(buf, `","kind":`...)
	buf = appendJSONString(buf, e.Kind)
	if e.Seq != 0 {
		buf = append(buf, `,"seq":`...)
		buf = strconv.AppendInt(buf, e.Seq, 10)
	}
	return append(buf, "}\n\n"...), nil
}

// appendUUID appends id in its canonical text form (as id.String) without
// building a string.
func appendUUID(buf []byte, id uuid.UUID) []byte {
	var b [36]byte
	hex.Encode(b[0:8], id[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], id[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], id[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], id[8:10])
	b[23] = '-'
	hex.Encode(b[24:], id[10:])
	return append(buf, b[:]...)
}

// appendJSONString appends s as encoding/json writes a string (with its
// HTML escaping); plain ASCII, the usual case, is copied as is.
func appendJSONString[S ~string | ~[]byte](buf []byte, s S) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(string(s)) // a string always encodes
			return append(buf, b...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}

// appendCompactJSON appends src without its insignificant whitespace and
// with <, >, &, U+2028 and U+2029 escaped inside strings: the bytes
// encoding/json writes for a json.RawMessage, in one pass over src and
// without its full validation, which would cost a catch-up more than the
// rest of the encoding. The store only keeps content that is JSON (checked
// on append, and Postgres's json type); what is checked here (strings
// closed, brackets matched, nothing outside strings but JSON's own
// characters) stops a corrupt value from breaking the stream's framing.
func appendCompactJSON(dst, src []byte) ([]byte, error) {
	var open [32]byte // the brackets open, innermost last; deeper ones are only counted
	depth, start, inString, tokens := 0, 0, false, 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		if inString {
			// Most of a value is the text of its strings: skip the bytes
			// that need nothing in one tight loop.
			for stringPlain[c] {
				if i++; i == len(src) {
					return dst, errors.New("content is not JSON: a string is not closed")
				}
				c = src[i]
			}
			switch {
			case c == '"':
				inString = false
			case c == '\\':
				i++ // the escaped byte, whatever it is
			case c == '<' || c == '>' || c == '&':
				dst = append(dst, src[start:i]...)
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
				start = i + 1
			case c == 0xE2 && i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xA8:
				dst = append(dst, src[start:i]...)
				dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[src[i+2]&0xF])
				i += 2
				start = i + 1
			case c < 0x20:
				return dst, errors.New("content is not JSON: a control character in a string")
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			dst = append(dst, src[start:i]...)
			start = i + 1
			continue
		case '"':
			inString = true
		case '{', '[':
			if depth < len(open) {
				open[depth] = c
			}
			depth++
		case '}', ']':
			if depth == 0 || (depth <= len(open) && open[depth-1] != c-2) { // '{'+2 == '}', '['+2 == ']'
				return dst, fmt.Errorf("content is not JSON: unmatched %q", c)
			}
			depth--
		default:
			if !jsonTokenByte[c] {
				return dst, fmt.Errorf("content is not JSON: %q outside a string", c)
			}
		}
		tokens++
	}
	switch {
	case inString:
		return dst, errors.New("content is not JSON: a string is not closed")
	case depth != 0:
		return dst, errors.New("content is not JSON: a bracket is not closed")
	case tokens == 0:
		return dst, errors.New("content is not JSON: it is blank")
	}
	return append(dst, src[start:]...), nil
}

const hexDigits = "0123456789abcdef"

// stringPlain holds the bytes a string's text copies as they are: all but
// its end, an escape, the HTML-escaped <, > and &, the first byte of
// U+2028 and U+2029, and the control characters JSON refuses there.
var stringPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = true
	}
	for _, c := range []byte{'"', '\\', '<', '>', '&', 0xE2} {
		t[c] = false
	}
	return t
}()

// jsonTokenByte holds the bytes JSON has outside strings besides
// whitespace, quotes and brackets: separators, numbers, true, false, null.
var jsonTokenByte = func() (t [256]bool) {
	for _, c := range []byte(",:-+.0123456789eEtruefalsn") {
		t[c] = true
	}
	return t
}()
