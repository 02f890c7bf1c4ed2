package web

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// TestAppendEntryEvent: the catch-up's hand-written encoding (appendEntryFrame) is the event
// writeEvent makes of EntryJSON, byte for byte, for entries and error
// entries, with content as the store keeps it (compact, HTML-escaped) and
// content with newlines (stored before that rule), which is compacted.
// Other content goes out as it is stored (TestAppendEntryFrameKeepsContent).
func TestAppendEntryEvent(t *testing.T) {
	t.Parallel()
	seq := int64(42)
	at := time.Date(2026, 3, 4, 5, 6, 7, 891011000, time.FixedZone("X", 3600))
	entries := []*store.Entry{
		{ID: uuid.New(), Seq: &seq, AfterSeq: 41, Kind: store.EntryAssistant, Author: "agent:bench",
			Content: json.RawMessage(`{"text":"hello"}`), CreatedAt: at},
		{ID: uuid.New(), Seq: &seq, Kind: store.EntryUser, Author: `user:"U<1>&\x01é`,
			Content: json.RawMessage("{\n  \"text\": \"a <b> & c\\n\u2028 é \\u00e9\"\n}"), CreatedAt: at.UTC()},
		{ID: uuid.New(), AfterSeq: 7, Kind: store.EntryError, Author: store.SystemAuthor,
			Content: json.RawMessage(`{"error":"model failed"}`), CreatedAt: time.Unix(0, 0).UTC()},
		{ID: uuid.New(), Seq: &seq, Kind: store.EntryUser, Author: "user:U1",
			Content: json.RawMessage("[1,\n 2.50, null, true]"), CreatedAt: at},
		{ID: uuid.New(), Seq: &seq, Kind: store.EntryUser, Author: "user:U1",
			Content: canonical(t, `{"text": "<b> & \u2028"}`), CreatedAt: at},
	}
	for _, e := range entries {
		rec := httptest.NewRecorder()
		id, event := "", "error"
		if e.Seq != nil {
			id, event = "42", "entry"
		}
		if err := writeEvent(rec, id, event, toEntryJSON(e)); err != nil {
			t.Fatal(err)
		}
		got, err := appendEntryEvent([]byte("prefix"), e)
		if err != nil {
			t.Fatal(err)
		}
		if want := "prefix" + rec.Body.String(); string(got) != want {
			t.Errorf("appendEntryEvent =\n%s\nwant\n%s", got, want)
		}
	}
	bad := &store.Entry{ID: uuid.New(), Seq: &seq, Kind: store.EntryUser, Content: json.RawMessage("{\"text\":\n")}
	if _, err := appendEntryEvent(nil, bad); err == nil {
		t.Error("appendEntryEvent took content that is not JSON")
	}
}

// appendEntryEvent is appendEntryFrame of an entry as EntryList returns it.
func appendEntryEvent(buf []byte, e *store.Entry) ([]byte, error) {
	r := core.EntryRow{ID: e.ID, Seq: e.SeqValue(), AfterSeq: e.AfterSeq, Kind: []byte(e.Kind),
		Author: []byte(e.Author), Content: e.Content, CreatedAt: e.CreatedAt}
	return appendEntryFrame(buf, &r)
}

func canonical(t *testing.T, s string) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(json.RawMessage(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAppendEntryFrameKeepsContent: content without a newline goes out as
// it is stored, with no second pass over it (whitespace Postgres wrote when
// it rewrote an entry stays); one with a newline is compacted, so an SSE
// data line never breaks.
func TestAppendEntryFrameKeepsContent(t *testing.T) {
	t.Parallel()
	for content, want := range map[string]string{
		`{"text" : "a  b", "redacted" : true}`: `"content":{"text" : "a  b", "redacted" : true},`,
		"{\r\n\"text\": \"x\"}":                `"content":{"text":"x"},`,
	} {
		r := &core.EntryRow{ID: uuid.New(), Seq: 3, Kind: []byte("user"), Author: []byte("user:U1"), Content: []byte(content), CreatedAt: time.Unix(1, 0).UTC()}
		got, err := appendEntryFrame(nil, r)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(got), want) || strings.Count(string(got), "\n") != 4 {
			t.Errorf("appendEntryFrame(%q) =\n%s\nwant content %s on one data line", content, got, want)
		}
	}
}

// FuzzAppendCompactJSON: for any JSON value, the catch-up's one-pass
// compaction writes what encoding/json writes for it as a RawMessage; for
// a value that is not JSON it either says so or writes no newline (the
// stream's framing holds).
func FuzzAppendCompactJSON(f *testing.F) {
	for _, s := range []string{
		`{"text": "hello"}`, "{\n  \"a\": [1, 2.50, null, true, false],\n\t\"b\": {}\r\n}", `"x"`, `0`, `-1.5e+10`,
		`{"html": "<b> & </b>", "ls": "\u2028\u2029 é", "esc": "\" \\ \/ \n \u003c"}`, `[[[[[]]]]]`, ` [ ] `,
		`{"a":1]`, `"abc`, `  `, "{\"a\":\"\x01\"}", `{"a":1}}`, `{"a":<}`, `]`, `{"a":"\u2028`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		got, err := appendCompactJSON([]byte("p"), src)
		if !json.Valid(src) {
			if err == nil && bytes.ContainsAny(got, "\r\n") {
				t.Errorf("appendCompactJSON(%q) = %q: a newline in an SSE data line", src, got)
			}
			return
		}
		want, merr := json.Marshal(json.RawMessage(src))
		if merr != nil {
			t.Fatal(merr)
		}
		if err != nil || string(got) != "p"+string(want) {
			t.Errorf("appendCompactJSON(%q) = %q, %v; want %q", src, got, err, "p"+string(want))
		}
	})
}

// TestAppendCompactJSONRefuses: content that is not JSON in a way that
// would break the stream's framing or nesting is an error.
func TestAppendCompactJSONRefuses(t *testing.T) {
	t.Parallel()
	for _, s := range []string{`{"a":1]`, `"abc`, `  `, "{\"a\":\"\x01\"}", `{"a":1}}`, `{"a":<}`, `]`, "[\n"} {
		if got, err := appendCompactJSON(nil, []byte(s)); err == nil {
			t.Errorf("appendCompactJSON(%q) = %q, want an error", s, got)
		}
	}
}

// BenchmarkAppendCompactJSON is the per-entry encoding a catch-up runs on
// every stored value: a short reply, a long one with usage, a tool call.
func BenchmarkAppendCompactJSON(b *testing.B) {
	contents := [][]byte{
		[]byte(`{"text":"A short scripted answer in a few words."}`),
		[]byte(`{"text":"` + strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 10) + `","usage":{"input_tokens":123,"output_tokens":456}}`),
		[]byte(`{"call_id":"c1","name":"web_fetch","arguments":{"url":"http://127.0.0.1/x","max_chars":4000}}`),
	}
	n := 0
	for _, c := range contents {
		n += len(c)
	}
	b.SetBytes(int64(n))
	var buf []byte
	for b.Loop() {
		for _, c := range contents {
			buf, _ = appendCompactJSON(buf[:0], c)
		}
	}
}
