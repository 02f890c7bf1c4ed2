package core

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

// Cursor reads a conversation's log forward from a seq, for the clients that
// follow it (the web API's streams, the terminal): entries with a seq in
// order, each once, and error entries, which have no seq, each once too.
// Platform delivery keeps its cursor in the store (the binding's delivered
// seq) and dedupes errors by their post record instead.
type Cursor struct {
	st    store.Queries
	conv  uuid.UUID
	seq   int64
	shown map[uuid.UUID]bool // error entries already returned
}

// NewCursor starts after seq.
func NewCursor(st store.Queries, conv uuid.UUID, after int64) *Cursor {
	return &Cursor{st: st, conv: conv, seq: after, shown: map[uuid.UUID]bool{}}
}

// Seq is the last seq the cursor moved past.
func (c *Cursor) Seq() int64 { return c.seq }

// SkipTo moves the cursor past seq without returning what it passes (an
// entry the client already shows, such as the message it just sent).
func (c *Cursor) SkipTo(seq int64) { c.seq = max(c.seq, seq) }

// Fetch reads the entries past the cursor up to the seq upTo (0: to the
// end) without moving it; Advance then takes them. The two are apart so a
// caller can drop a read that raced with live events.
func (c *Cursor) Fetch(ctx context.Context, upTo int64) ([]*store.Entry, error) {
	p := &store.EntryListParams{ConversationID: c.conv, AfterSeq: c.seq, WithErrors: true}
	if upTo > 0 {
		p.UpToSeq = max(upTo, c.seq)
	}
	list, err := c.st.EntryList(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("reading the log of %s: %w", c.conv, err)
	}
	return list, nil
}

// CursorPage is the most seqs one FetchPage reads: a catch-up of a long log
// (a stream from cursor 0, a viewer back after a long absence) holds one
// page of it at a time, and each read is a short range of the
// (conversation_id, seq) index.
const CursorPage = 1000

// FetchPage is Fetch of at most the next CursorPage seqs past the cursor
// (with the error entries among them), up to the seq upTo (0: to the end).
// last reports that the page reached upTo or the end of the log; until
// then a reader Advances past the page and fetches the next one.
func (c *Cursor) FetchPage(ctx context.Context, upTo int64) (list []*store.Entry, last bool, err error) {
	hi := c.pageEnd(upTo)
	if list, err = c.Fetch(ctx, hi); err != nil {
		return nil, false, err
	}
	top := c.seq
	for _, e := range list {
		top = max(top, e.SeqValue())
	}
	return list, pageLast(hi, upTo, top), nil
}

// ScanPage is FetchPage and Advance in one for a reader that writes what it
// reads straight out (a stream's catch-up): each entry past the cursor (up
// to upTo, 0: to the end, at most CursorPage seqs) not returned before is
// handed to each as its columns' bytes (see store.EntryScan). The cursor
// then moves past them if keep (nil: always) says so: a reader that finds
// the read raced with something drops what each gathered and leaves the
// cursor where it was. last is as FetchPage's.
func (c *Cursor) ScanPage(ctx context.Context, upTo int64, each func(*EntryRow) error, keep func() bool) (last bool, err error) {
	hi := c.pageEnd(upTo)
	top := c.seq
	var shown []uuid.UUID
	p := &store.EntryListParams{ConversationID: c.conv, AfterSeq: c.seq, UpToSeq: max(hi, c.seq), WithErrors: true}
	err = c.st.EntryScan(ctx, p, func(r *EntryRow) error {
		if r.Seq == 0 {
			if c.shown[r.ID] {
				return nil
			}
			shown = append(shown, r.ID)
		} else {
			top = max(top, r.Seq)
		}
		return each(r)
	})
	if err != nil {
		return false, fmt.Errorf("reading the log of %s: %w", c.conv, err)
	}
	last = pageLast(hi, upTo, top)
	if keep == nil || keep() {
		c.Passed(top, shown)
	}
	return last, nil
}

// Shown reports whether the error entry id was returned already.
func (c *Cursor) Shown(id uuid.UUID) bool { return c.shown[id] }

// Passed moves the cursor past seq and records the error entries of ids as
// returned, for a reader that took entries from elsewhere than the cursor
// (a cache of what an earlier read returned).
func (c *Cursor) Passed(seq int64, ids []uuid.UUID) {
	c.seq = max(c.seq, seq)
	for _, id := range ids {
		c.shown[id] = true
	}
}

// pageEnd is the last seq a page read past the cursor takes, reading up
// to upTo (0: to the end).
func (c *Cursor) pageEnd(upTo int64) int64 {
	if upTo > 0 {
		return min(c.seq+CursorPage, upTo)
	}
	return c.seq + CursorPage
}

// pageLast reports whether a page read up to hi, whose top seq was top,
// was the last: it reached upTo, or stopped short of hi, which (seqs have
// no gaps) is the log's end.
func pageLast(hi, upTo, top int64) bool { return hi == upTo || top < hi }

// Advance moves past fetched entries and returns those not returned
// before (an error entry is listed again until the cursor passes the seq it
// follows).
func (c *Cursor) Advance(list []*store.Entry) []*store.Entry {
	out := list[:0:0]
	for _, e := range list {
		if e.Seq == nil {
			if c.shown[e.ID] {
				continue
			}
			c.shown[e.ID] = true
		} else {
			c.seq = max(c.seq, *e.Seq)
		}
		out = append(out, e)
	}
	return out
}

// EntryBound is the seq to read the log up to so that e is included (0: the
// whole log, for nil): its seq, or for an error entry the seq it follows.
func EntryBound(e *store.Entry) int64 {
	switch {
	case e == nil:
		return 0
	case e.Seq != nil:
		return *e.Seq
	default:
		return e.AfterSeq
	}
}
