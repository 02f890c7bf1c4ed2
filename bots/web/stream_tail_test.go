package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// readCounter is the store as the API sees it, recording how many rows each
// read of one conversation's log returned; a read past holdAfter waits
// until release is closed.
type readCounter struct {
	store.Store
	mu        sync.Mutex
	conv      uuid.UUID
	reads     []int
	scans     []int // of EntryScan alone
	holdAfter int64
	release   chan struct{}
}

func (c *readCounter) watch(conv uuid.UUID, holdAfter int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.conv, c.reads, c.scans, c.holdAfter, c.release = conv, nil, nil, holdAfter, make(chan struct{})
}

// wait holds a read of the watched conversation past holdAfter until
// release; watched says whether to count it.
func (c *readCounter) wait(ctx context.Context, p *store.EntryListParams) (watched bool, err error) {
	c.mu.Lock()
	watched, hold, release := p.ConversationID == c.conv, c.holdAfter, c.release
	c.mu.Unlock()
	if watched && hold > 0 && p.AfterSeq >= hold {
		select {
		case <-release:
		case <-ctx.Done():
			return watched, ctx.Err()
		}
	}
	return watched, nil
}

func (c *readCounter) EntryList(ctx context.Context, p *store.EntryListParams) ([]*store.Entry, error) {
	watched, err := c.wait(ctx, p)
	if err != nil {
		return nil, err
	}
	es, err := c.Store.EntryList(ctx, p)
	if watched && err == nil {
		c.mu.Lock()
		c.reads = append(c.reads, len(es))
		c.mu.Unlock()
	}
	return es, err
}

// EntryScan is the read a stream's catch-up makes: counted and held the
// same way.
func (c *readCounter) EntryScan(ctx context.Context, p *store.EntryListParams, each func(*store.EntryRow) error) error {
	watched, err := c.wait(ctx, p)
	if err != nil {
		return err
	}
	n := 0
	err = c.Store.EntryScan(ctx, p, func(r *store.EntryRow) error {
		n++
		return each(r)
	})
	if watched && err == nil {
		c.mu.Lock()
		c.reads = append(c.reads, n)
		c.scans = append(c.scans, n)
		c.mu.Unlock()
	}
	return err
}

func (c *readCounter) scanCounts() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.scans)
}

func (c *readCounter) counts() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.reads)
}

// fillLog appends n entries to conv (one transaction), with the error
// entries errorsAfter names after the seqs it names, and returns the log as
// a stream shows it: "seq" for an entry, "!seq" for an error after it.
func fillLog(t *testing.T, st store.Store, conv uuid.UUID, n int64, errorsAfter map[int64]int) []string {
	t.Helper()
	var want []string
	ctx := context.Background()
	err := st.InTx(ctx, func(q store.Queries) error {
		for seq := int64(1); seq <= n; seq++ {
			if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: conv, Kind: store.EntryAssistant,
				Author: "agent:test", Content: json.RawMessage(fmt.Sprintf(`{"text": "entry %d"}`, seq))}); err != nil {
				return err
			}
			want = append(want, fmt.Sprint(seq))
			for i := range errorsAfter[seq] {
				if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: conv, Kind: store.EntryError,
					Author: store.SystemAuthor, Content: json.RawMessage(fmt.Sprintf(`{"error": "after %d, #%d"}`, seq, i))}); err != nil {
					return err
				}
				want = append(want, fmt.Sprintf("!%d", seq))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("appending the log: %v", err)
	}
	return want
}

// readLog reads count entry and error events from stream, as fillLog
// writes the log.
func readLog(t *testing.T, stream *sseStream, count int) []string {
	t.Helper()
	var got []string
	for len(got) < count {
		ev := stream.next(t, fmt.Sprintf("event %d of %d", len(got)+1, count))
		var e entryOut
		switch ev.Event {
		case "entry", "error":
			if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
				t.Fatalf("decoding %s event %q: %v", ev.Event, ev.Data, err)
			}
		default:
			continue
		}
		switch {
		case ev.Event == "entry" && e.Seq != nil && ev.ID == fmt.Sprint(*e.Seq):
			got = append(got, ev.ID)
		case ev.Event == "error" && e.AfterSeq != nil && ev.ID == "":
			got = append(got, fmt.Sprintf("!%d", *e.AfterSeq))
		default:
			t.Fatalf("event %s id %q data %s; want entry events with their seq as id and error events without one", ev.Event, ev.ID, ev.Data)
		}
	}
	return got
}

// TestStreamCatchUpIsPaged: a stream from cursor 0 over a log of 2,500
// entries reads it a page at a time, no read returning more than a page
// (core.CursorPage seqs and the errors among them), and writes each page
// to the client before it reads the next: the first thousand entries
// arrive while the read past them is held back.
func TestStreamCatchUpIsPaged(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		rc := &readCounter{Store: open(t)}
		s := start(t, rc, newClock(), writeScript(t, echoScript), web.Options{})
		conv := s.create(t)
		const n = 2500
		errorsAfter := map[int64]int{999: 2, 1000: 1, 2000: 1}
		want := fillLog(t, rc, conv, n, errorsAfter)
		rc.watch(conv, core.CursorPage)

		stream := s.openStream(t, conv, "")
		first := slices.Index(want, fmt.Sprint(core.CursorPage)) + 1
		got := readLog(t, stream, first)
		if !slices.Equal(got, want[:first]) {
			t.Fatalf("the first page sent %d events that differ from the log at %d", len(got), firstDiff(got, want[:first]))
		}
		if reads := rc.counts(); len(reads) != 1 {
			t.Fatalf("the stream made %d reads before its first page reached the client; want 1 (each page written before the next read)", len(reads))
		}
		close(rc.release)
		got = append(got, readLog(t, stream, len(want)-first)...)
		if !slices.Equal(got, want) {
			t.Fatalf("catch-up from 0 sent %d events that differ from the log's %d at %d", len(got), len(want), firstDiff(got, want))
		}
		reads := rc.counts()
		if len(reads) < n/core.CursorPage {
			t.Fatalf("the catch-up of %d entries took %d reads (%v); want one per page of %d", n, len(reads), reads, core.CursorPage)
		}
		most := core.CursorPage + 3 // a page, and the error entries among it
		for i, r := range reads {
			if r > most {
				t.Fatalf("read %d of the catch-up returned %d rows (reads %v); want at most a page (%d)", i+1, r, reads, most)
			}
		}
	})
}

// TestStreamTail: ?tail=N starts with the newest N entries (the error
// entries among them included), then follows live; a reconnect's
// Last-Event-ID resumes exactly where it was whatever the tail; a cursor
// past the tail wins; tail=0 sends only what comes next.
func TestStreamTail(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		rc := &readCounter{Store: open(t)}
		st := rc
		s := start(t, st, newClock(), writeScript(t, echoScript), web.Options{})
		conv := s.create(t)
		const n = 300
		want := fillLog(t, st, conv, n, map[int64]int{200: 1, 250: 1})
		rc.watch(conv, 0)

		stream := s.openStreamQuery(t, conv, "", "?tail=100")
		from := slices.Index(want, "200") + 1 // the error after 200 comes before 201
		if got := readLog(t, stream, len(want)-from); !slices.Equal(got, want[from:]) {
			t.Fatalf("?tail=100 sent %v…; want the newest 100 entries from %v…", got[:3], want[from:from+3])
		}
		for i, r := range rc.counts() {
			if r > len(want)-from {
				t.Fatalf("read %d of ?tail=100 returned %d rows; want at most the tail and its errors", i+1, r)
			}
		}
		// Then live: the next message and its reply, nothing before them.
		s.post(t, conv, "after the tail")
		ids, es, _ := stream.readThrough(t, n+2)
		if fmt.Sprint(ids) != fmt.Sprint([]int64{n + 1, n + 2}) || kindsOf(es) != "user,assistant" {
			t.Fatalf("after the tail the stream sent ids %v kinds %s; want [%d %d]", ids, kindsOf(es), n+1, n+2)
		}
		waitStatus(t, st, conv, store.ConversationIdle)

		// A reconnect (EventSource keeps the URL, ?tail included) resumes
		// after its Last-Event-ID, not at the tail.
		resumed := s.openStreamQuery(t, conv, "240", "?tail=5")
		rest := append(slices.Clone(want[slices.Index(want, "241"):]), fmt.Sprint(n+1), fmt.Sprint(n+2))
		if got := readLog(t, resumed, len(rest)); !slices.Equal(got, rest) {
			t.Fatalf("a reconnect at 240 with ?tail=5 sent %v…; want 241 on, no gap, no repeat", got[:3])
		}

		// A cursor past the tail's start wins; a tail longer than the log
		// is all of it.
		if ids, _, _ := s.openStreamQuery(t, conv, "", "?cursor=299&tail=100").readThrough(t, n+2); fmt.Sprint(ids) != "[300 301 302]" {
			t.Fatalf("?cursor=299&tail=100 sent ids %v; want [300 301 302]", ids)
		}
		if got := readLog(t, s.openStreamQuery(t, conv, "", "?tail=10000"), 3); !slices.Equal(got, want[:3]) {
			t.Fatalf("?tail=10000 on a log of %d starts %v; want %v", n+2, got, want[:3])
		}

		// tail=0: nothing of the log, only what comes next.
		none := s.openStreamQuery(t, conv, "", "?tail=0")
		s.post(t, conv, "only this")
		if ids, _, _ := none.readThrough(t, n+4); fmt.Sprint(ids) != fmt.Sprint([]int64{n + 3, n + 4}) {
			t.Fatalf("?tail=0 sent ids %v; want only the new message and its reply [%d %d]", ids, n+3, n+4)
		}
	})
}

// TestStreamFramesServeFollowers: while a stream follows a conversation,
// another stream's catch-up of it (a second tab, a reconnect after a
// deploy) is served from the frames the first one's read encoded: the
// same events, error entries in place, and no entry read from the store
// again (only an empty probe past the end); a live entry is read from the
// store once for both. A stream that resumes mid-log is served the same way.
func TestStreamFramesServeFollowers(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		rc := &readCounter{Store: open(t)}
		s := start(t, rc, newClock(), writeScript(t, echoScript), web.Options{})
		conv := s.create(t)
		const n = 2500
		// No error entry after the last seq: the probe past the end would
		// read it again each time (it follows the frames' last seq).
		want := fillLog(t, rc, conv, n, map[int64]int{0: 1, 999: 2, 1000: 1})

		first := s.openStream(t, conv, "")
		if got := readLog(t, first, len(want)); !slices.Equal(got, want) {
			t.Fatalf("the first stream sent %d events that differ from the log at %d", len(got), firstDiff(got, want))
		}
		rc.watch(conv, 0)
		second := s.openStream(t, conv, "")
		if got := readLog(t, second, len(want)); !slices.Equal(got, want) {
			t.Fatalf("the second stream sent %d events that differ from the log at %d", len(got), firstDiff(got, want))
		}
		from := slices.Index(want, "1000") + 1 // the error after 1000 is owed
		resumed := s.openStream(t, conv, "1000")
		if got := readLog(t, resumed, len(want)-from); !slices.Equal(got, want[from:]) {
			t.Fatalf("a stream resumed at 1000 sent events that differ from the log's at %d", firstDiff(got, want[from:]))
		}
		if rows := sum(rc.scanCounts()); rows != 0 {
			t.Fatalf("the catch-ups of two more streams read %d rows from the store (reads %v); want 0, the first one's frames", rows, rc.scanCounts())
		}

		s.post(t, conv, "live")
		for _, st := range []*sseStream{first, second, resumed} {
			if ids, _, _ := st.readThrough(t, n+2); fmt.Sprint(ids) != fmt.Sprint([]int64{n + 1, n + 2}) {
				t.Fatalf("after the catch-up a stream sent ids %v; want [%d %d]", ids, n+1, n+2)
			}
		}
		if rows := sum(rc.scanCounts()); rows != 2 {
			t.Fatalf("three streams following a message and its reply read %d rows (reads %v); want each entry read once by the streams, 2", rows, rc.scanCounts())
		}
	})
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
