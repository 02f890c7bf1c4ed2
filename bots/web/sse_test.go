package web

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// TestAppendEntryEvent: the catch-up's hand-written encoding is the event
// writeEvent makes of EntryJSON, byte for byte, for entries and error
// entries, with content that is indented, escaped or HTML-like.
func TestAppendEntryEvent(t *testing.T) {
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
			Content: json.RawMessage(`[1, 2.50, null, true]`), CreatedAt: at},
	}
	for _, e := range entries {
		rec := httptest.NewRecorder()
		id, event := "", "error"
		if e.Seq != nil {
			id, event = "42", "entry"
		}
		if err := writeEvent(rec, id, event, EntryJSON(e)); err != nil {
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
	bad := &store.Entry{ID: uuid.New(), Seq: &seq, Kind: store.EntryUser, Content: json.RawMessage(`{"text":`)}
	if _, err := appendEntryEvent(nil, bad); err == nil {
		t.Error("appendEntryEvent took content that is not JSON")
	}
}
