package core

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// rowCounter is a store's queries recording how many rows each EntryList
// returned.
type rowCounter struct {
	store.Queries
	mu    sync.Mutex
	reads []int
}

func (c *rowCounter) EntryList(ctx context.Context, p *store.EntryListParams) ([]*store.Entry, error) {
	es, err := c.Queries.EntryList(ctx, p)
	c.mu.Lock()
	c.reads = append(c.reads, len(es))
	c.mu.Unlock()
	return es, err
}

// total is the rows read, and the most one read returned.
func (c *rowCounter) total() (rows, most int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.reads {
		rows, most = rows+r, max(most, r)
	}
	return rows, most
}

// appendScript appends a log from a compact script, as logOf does, each
// message about 25 tokens: u (a person's message), a (the agent's text),
// c<id> (a call), r<id> (its result). It returns the conversation as it is
// after.
func appendScript(t *testing.T, st store.Store, conv uuid.UUID, script ...string) *store.Conversation {
	t.Helper()
	ctx := context.Background()
	text := strings.Repeat("the harbour gauge ", 5)
	err := st.InTx(ctx, func(q store.Queries) error {
		for _, s := range script {
			var kind store.EntryKind
			var author store.Author
			var content any
			switch s[0] {
			case 'u':
				kind, author, content = store.EntryUser, store.UserAuthor("u"), UserContent{Text: text, UserID: "u"}
			case 'a':
				kind, author, content = store.EntryAssistant, store.AgentAuthor("atlas"), AssistantContent{Text: text}
			case 'c':
				kind, author, content = store.EntryToolCall, store.AgentAuthor("atlas"), ToolCallContent{CallID: s[1:], Name: "lookup", Input: []byte(`{"q":"` + text + `"}`)}
			case 'r':
				kind, author, content = store.EntryToolResult, store.AgentAuthor("atlas"), ToolResultContent{CallID: s[1:], Name: "lookup", Output: []byte(`"` + text + `"`)}
			default:
				return fmt.Errorf("unknown script item %q", s)
			}
			if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: conv, Kind: kind, Author: author, Content: mustJSON(content), Now: time.Now()}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("appending the log: %v", err)
	}
	c, err := st.ConversationGet(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// exchanges is n exchanges of a person's message, a call, its result and
// the agent's answer, the calls numbered from first.
func exchanges(first, n int) []string {
	var out []string
	for i := first; i < first+n; i++ {
		out = append(out, "u", fmt.Sprintf("c%d", i), fmt.Sprintf("r%d", i), "a")
	}
	return out
}

// paired checks that every result in view has its call in view before it
// and every call its result, but those in open.
func paired(t *testing.T, view []*store.Entry, open ...string) {
	t.Helper()
	calls := map[string]bool{}
	for _, e := range view {
		switch e.Kind {
		case store.EntryToolCall:
			c, _ := Decode[ToolCallContent](e)
			calls[c.CallID] = true
		case store.EntryToolResult:
			r, _ := Decode[ToolResultContent](e)
			if !calls[r.CallID] {
				t.Fatalf("the view has the result of %s at seq %d without its call", r.CallID, e.SeqValue())
			}
			delete(calls, r.CallID)
		}
	}
	for id := range calls {
		if !slices.Contains(open, id) {
			t.Fatalf("the view has call %s without its result", id)
		}
	}
}

// TestReadWindow: what loadModelLog reads of a log with no summary. A log
// shorter than the window is read whole. A long one is read from its newest
// entry back, in reads of at most a page, about the window's worth and
// never the whole log; the view keeps the newest keep tokens, starting at
// a person's message, every call with its result; and a call further back
// that waits for a person, or that the reader names, is in the view.
func TestReadWindow(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		ctx := context.Background()
		newConv := func() uuid.UUID {
			c, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{Now: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			return c.ID
		}
		// Each entry weighs about 25 tokens (rawTokens a little more): the
		// window reads about 80 entries and keeps about 10 (two and a half
		// exchanges, so a cut by weight alone would part a call from its
		// result).
		w := logWindow{read: 2000, keep: 250}

		t.Run("a short log is read whole", func(t *testing.T) {
			conv := appendScript(t, st, newConv(), exchanges(1, 5)...)
			rc := &rowCounter{Queries: st}
			ml, err := loadModelLog(ctx, rc, conv, w)
			if err != nil {
				t.Fatal(err)
			}
			if ml.partial || len(ml.entries) != 20 {
				t.Fatalf("a log of 20 entries gave a view of %d (partial %v); want all 20, not partial", len(ml.entries), ml.partial)
			}
			if rows, _ := rc.total(); rows != 20 {
				t.Fatalf("reading a log of 20 entries read %d rows; want 20", rows)
			}
		})

		t.Run("a long log is read a window at a time", func(t *testing.T) {
			conv := appendScript(t, st, newConv(), exchanges(1, 300)...)
			rc := &rowCounter{Queries: st}
			ml, err := loadModelLog(ctx, rc, conv, w)
			if err != nil {
				t.Fatal(err)
			}
			if !ml.partial {
				t.Fatal("a log of 1,200 entries gave a view that is not partial; want a window of it")
			}
			rows, most := rc.total()
			if rows > 150 || most > maxWindowPage {
				t.Fatalf("the window read %d rows (at most %d at once) of a log of 1,200; want about its read's worth (80), in pages", rows, most)
			}
			v := ml.entries
			if last := v[len(v)-1].SeqValue(); last != 1200 {
				t.Fatalf("the view ends at seq %d; want the newest entry, 1200", last)
			}
			if v[0].Kind != store.EntryUser {
				t.Fatalf("the view starts with a %s entry (seq %d); want a person's message", v[0].Kind, v[0].SeqValue())
			}
			paired(t, v)
			var tokens int
			for _, e := range v {
				tokens += entryTokens(e)
			}
			if tokens > w.keep || len(v) < 4 {
				t.Fatalf("the view holds %d entries, %d tokens; want the newest exchanges within %d", len(v), tokens, w.keep)
			}
		})

		t.Run("a call waiting for a person before the window", func(t *testing.T) {
			script := append([]string{"u", "cwaiting"}, exchanges(1, 200)...)
			conv := appendScript(t, st, newConv(), script...)
			ml, err := loadModelLog(ctx, st, conv, w)
			if err != nil {
				t.Fatal(err)
			}
			if ml.entries[0].SeqValue() <= 2 {
				t.Fatalf("without an approval the view starts at seq %d; want a window that does not reach seq 2", ml.entries[0].SeqValue())
			}
			if _, err := st.ApprovalCreate(ctx, &store.ApprovalCreateParams{
				ConversationID: conv.ID, CallID: "waiting", Tool: "lookup", Kind: store.ApprovalConfirm, Risk: "high",
				Request: []byte(`{}`), ExpiresAt: time.Now().Add(time.Hour), Now: time.Now(),
			}); err != nil {
				t.Fatal(err)
			}
			ml, err = loadModelLog(ctx, st, conv, w)
			if err != nil {
				t.Fatal(err)
			}
			if got := pendingCalls(ml.entries); got["waiting"].Seq != 2 {
				t.Fatalf("the view's pending calls are %v; want the call waiting for its approval at seq 2", got)
			}
			paired(t, ml.entries, "waiting")
		})

		t.Run("a named call before the window", func(t *testing.T) {
			script := append([]string{"u", "cresumed"}, exchanges(1, 200)...)
			conv := appendScript(t, st, newConv(), script...)
			named := w
			named.calls = []string{"resumed"}
			ml, err := loadModelLog(ctx, st, conv, named)
			if err != nil {
				t.Fatal(err)
			}
			if got := pendingCalls(ml.entries); got["resumed"].Seq != 2 {
				t.Fatalf("the view's pending calls are %v; want the named call at seq 2", got)
			}
		})
	})
}
