package transcript

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/store"
)

func seq(n int64) *int64 { return &n }

func sample() *Doc {
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	return &Doc{Format: Format, Conversation: Conversation{Title: "Plans", Agent: "atlas", Metadata: json.RawMessage(`{}`), CreatedAt: at}, Entries: []Entry{
		{Seq: seq(1), Kind: store.EntryUser, Author: "user:U1", Content: json.RawMessage(`{"text":"line one\nline two"}`), CreatedAt: at},
		{Seq: nil, AfterSeq: 1, Kind: store.EntryError, Author: store.SystemAuthor, Content: json.RawMessage(`{"message":"overloaded"}`), CreatedAt: at.Add(time.Second)},
		{Seq: seq(2), AfterSeq: 1, Kind: store.EntryToolCall, Author: "agent:atlas", Content: json.RawMessage(`{"call_id":"c1","name":"recall","input":{"query":"x"}}`), CreatedAt: at.Add(2 * time.Second)},
		{Seq: seq(3), AfterSeq: 2, Kind: store.EntryAssistant, Author: "agent:atlas", Content: json.RawMessage(`{"text":"### not a heading\nok"}`), CreatedAt: at.Add(3 * time.Second)},
	}}
}

// The Markdown form reads back into the same kinds, authors, times and
// contents (text entries as {"text": ...}), seqs renumbered in order.
func TestMarkdownReadsBack(t *testing.T) {
	d := sample()
	md := Markdown(d)
	if !strings.HasPrefix(md, "# Plans\n\n- agent: atlas\n") || !strings.Contains(md, "### 1 · user · user:U1 · 2026-11-02T09:00:00Z\n\nline one\nline two\n") {
		t.Fatalf("the Markdown:\n%s", md)
	}
	back, err := ParseMarkdown(md)
	if err != nil {
		t.Fatalf("reading it back: %v\n%s", err, md)
	}
	if back.Conversation.Title != "Plans" || back.Conversation.Agent != "atlas" || !back.Conversation.CreatedAt.Equal(d.Conversation.CreatedAt) || len(back.Entries) != len(d.Entries) {
		t.Fatalf("read back: %+v", back)
	}
	for i, e := range d.Entries {
		b := back.Entries[i]
		var want, got any
		_ = json.Unmarshal(e.Content, &want)
		_ = json.Unmarshal(b.Content, &got)
		if b.Kind != e.Kind || b.Author != e.Author || !b.CreatedAt.Equal(e.CreatedAt) || seqOf(b) != seqOf(e) || b.AfterSeq != e.AfterSeq || !equalJSON(want, got) {
			t.Fatalf("entry %d: got %+v %s, want %+v %s", i+1, b, b.Content, e, e.Content)
		}
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestCheckRefusesBrokenDocuments(t *testing.T) {
	cases := map[string]func(d *Doc){
		"another format":           func(d *Doc) { d.Format = "other/v1" },
		"a gap in the seqs":        func(d *Doc) { d.Entries[2].Seq = seq(5) },
		"an error with a seq":      func(d *Doc) { d.Entries[1].Seq = seq(2) },
		"an unknown kind":          func(d *Doc) { d.Entries[0].Kind = "poem" },
		"content that is not JSON": func(d *Doc) { d.Entries[0].Content = json.RawMessage(`{`) },
		"an error out of place":    func(d *Doc) { d.Entries[1].AfterSeq = 0 },
	}
	for name, breakIt := range cases {
		t.Run(name, func(t *testing.T) {
			d := sample()
			breakIt(d)
			if err := check(d); !errors.Is(err, ErrInvalid) {
				t.Fatalf("check = %v; want ErrInvalid", err)
			}
		})
	}
	if err := check(sample()); err != nil {
		t.Fatalf("the sample is refused: %v", err)
	}
}
