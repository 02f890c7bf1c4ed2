package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/store"
)

// streamChunk is how much encoded catch-up a stream gathers before it
// writes to the connection.
const streamChunk = 64 << 10

// appendEntryEvent appends an entry's SSE event to buf: "entry" with the
// seq as its id, or "error" without an id for an error entry. The data is
// the JSON of EntryJSON(e), byte for byte, written without building the
// map: a catch-up of 10,000 entries would otherwise spend most of its
// time in reflection.
func appendEntryEvent(buf []byte, e *store.Entry) ([]byte, error) {
	if e.Seq != nil {
		buf = append(buf, "id: "...)
		buf = strconv.AppendInt(buf, *e.Seq, 10)
		buf = append(buf, "\nevent: entry\ndata: "...)
	} else {
		buf = append(buf, "event: error\ndata: "...)
	}
	// The keys in the order encoding/json gives a map's: sorted.
	buf = append(buf, '{')
	if e.Seq == nil {
		buf = append(buf, `"after_seq":`...)
		buf = strconv.AppendInt(buf, e.AfterSeq, 10)
		buf = append(buf, ',')
	}
	buf = append(buf, `"author":`...)
	buf = appendJSONString(buf, string(e.Author))
	buf = append(buf, `,"content":`...)
	if len(e.Content) == 0 {
		buf = append(buf, "null"...)
	} else {
		// Compacted and HTML-escaped, as encoding/json writes a RawMessage:
		// an SSE data line must not hold a newline.
		b := bytes.NewBuffer(buf)
		if err := json.Compact(b, e.Content); err != nil {
			return buf, fmt.Errorf("encoding entry %s: %w", e.ID, err)
		}
		if bytes.ContainsAny(b.Bytes()[len(buf):], "<>&\u2028\u2029") {
			compact := bytes.Clone(b.Bytes()[len(buf):])
			b.Truncate(len(buf))
			json.HTMLEscape(b, compact)
		}
		buf = b.Bytes()
	}
	buf = append(buf, `,"created_at":"`...)
	if y := e.CreatedAt.Year(); y < 0 || y >= 10000 {
		return buf, fmt.Errorf("encoding entry %s: created_at year %d outside [0,9999]", e.ID, y)
	}
	buf = e.CreatedAt.AppendFormat(buf, time.RFC3339Nano)
	buf = append(buf, `","id":"`...)
	buf = append(buf, e.ID.String()...)
	buf = append(buf, `","kind":`...)
	buf = appendJSONString(buf, string(e.Kind))
	if e.Seq != nil {
		buf = append(buf, `,"seq":`...)
		buf = strconv.AppendInt(buf, *e.Seq, 10)
	}
	return append(buf, "}\n\n"...), nil
}

// appendJSONString appends s as encoding/json writes a string (with its
// HTML escaping); plain ASCII, the usual case, is copied as is.
func appendJSONString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always encodes
			return append(buf, b...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}
