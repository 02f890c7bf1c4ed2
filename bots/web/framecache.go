package web

import (
	"container/list"
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
)

// DefaultFrameCacheBytes is how much encoded catch-up the API keeps for the
// conversations being followed (Options.FrameCacheBytes).
const DefaultFrameCacheBytes = 64 << 20

// frameCache keeps, for each conversation some stream follows, its log
// encoded as SSE frames, so that a catch-up is a copy of bytes: the first
// stream of a conversation reads the store, the others (a reconnect storm
// after a deploy, a second tab) read the cache, and a live entry is read
// from the store once for all of its followers. A conversation's frames
// are dropped when its last follower leaves, when the conversation's
// content revision moves (its entries were rewritten: store.Conversation's
// ContentRev), and, oldest use first, to keep the total under its bytes.
type frameCache struct {
	max int64

	mu    sync.Mutex
	size  int64
	convs map[uuid.UUID]*convFrames
	lru   list.List // of *convFrames, most recently used first
}

func newFrameCache(maxBytes int64) *frameCache {
	return &frameCache{max: maxBytes, convs: map[uuid.UUID]*convFrames{}}
}

// convFrames is one conversation's frames: the entries after seq lo up to
// seq hi, with the error entries placed after each, in display order.
type convFrames struct {
	id  uuid.UUID
	rev int64

	// fill is held by the one reader extending the frames from the store;
	// the others wait for it and then read what it added.
	fill sync.Mutex

	// mu guards what follows. pages are only ever appended, each the
	// frames one read from the store encoded (never copied again), so a
	// reader may write them out after letting go of mu.
	mu        sync.Mutex
	lo, hi    int64
	pages     []framePage
	size      int         // the bytes of all pages: the next page's base
	seqs      []frameSpan // the frame of seq lo+1+i, in offsets over all pages
	errs      []errFrame  // error entries' frames, in buf's order
	followers int
	dropped   bool // taken out of the cache: nothing more is added
	elem      *list.Element
}

// framePage is one read's frames, at offset base of the conversation's.
type framePage struct {
	base int
	b    []byte
}

type frameSpan struct{ from, to int }

type errFrame struct {
	id    uuid.UUID
	after int64
	frameSpan
}

// follow returns conv's frames for a stream, kept while it follows
// (release). rev is the conversation's content revision the stream read:
// frames of an older one are dropped and started anew. cursor is where
// the stream starts: frames that begin after it are started at it.
func (c *frameCache) follow(conv uuid.UUID, rev, cursor int64) *convFrames {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.convs[conv]
	if f != nil && f.rev != rev {
		c.dropLocked(f)
		f = nil
	}
	if f == nil {
		f = &convFrames{id: conv, rev: rev, lo: cursor, hi: cursor}
		f.elem = c.lru.PushFront(f)
		c.convs[conv] = f
	}
	c.lru.MoveToFront(f.elem)
	f.mu.Lock()
	f.followers++
	f.mu.Unlock()
	return f
}

// release ends a stream's follow of f; the last follower's leaving drops
// the frames.
func (c *frameCache) release(f *convFrames) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f.mu.Lock()
	f.followers--
	last := f.followers == 0
	f.mu.Unlock()
	if last {
		c.dropLocked(f)
	}
}

// grew accounts for n more bytes in f and drops the least recently used
// conversations (never f) while the cache is over its bytes.
func (c *frameCache) grew(f *convFrames, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f.mu.Lock()
	dropped := f.dropped
	f.mu.Unlock()
	if dropped {
		return
	}
	c.size += int64(n)
	for c.size > c.max {
		back := c.lru.Back()
		if back == nil || back.Value.(*convFrames) == f {
			break
		}
		c.dropLocked(back.Value.(*convFrames))
	}
	if c.size > c.max {
		// f alone is more than the cache holds: its followers read the
		// store.
		c.dropLocked(f)
	}
}

func (c *frameCache) dropLocked(f *convFrames) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dropped {
		return
	}
	f.dropped = true
	c.size -= int64(f.size)
	c.lru.Remove(f.elem)
	if c.convs[f.id] == f {
		delete(c.convs, f.id)
	}
}

// errNotCached: the frames cannot serve this cursor (it is before where
// they start, or they were dropped); the stream reads the store itself.
var errNotCached = errors.New("not in the frame cache")

// read writes to out the frames owed to a stream whose cursor is st, up to
// the seq upTo (0: to the end of the log), and moves st past them, as
// st.ScanPage would. What the frames lack is read from the store first,
// a page at a time, by one stream for all (extend). skip is asked before
// each write: true drops the read (the stream's live events raced with
// it), leaving st where it was.
func (f *convFrames) read(ctx context.Context, c *frameCache, openCursor func(after int64) *core.Cursor,
	st *core.Cursor, upTo int64, skip func() bool, out func([]byte) error) error {
	for {
		f.mu.Lock()
		lo, hi, dropped := f.lo, f.hi, f.dropped
		f.mu.Unlock()
		if dropped || st.Seq() < lo {
			return errNotCached
		}
		more := false
		if upTo == 0 || upTo > hi {
			var err error
			if more, err = f.extend(ctx, c, openCursor, hi); err != nil {
				return err
			}
			hi = f.hiNow()
		}
		if st.Seq() > hi {
			// The stream is past the frames (it read the store itself):
			// they catch up first.
			if !more {
				return nil
			}
			continue
		}
		end := hi
		if upTo > 0 {
			end = min(upTo, hi)
		}
		if skip != nil && skip() {
			return nil
		}
		if err := f.serve(st, end, out); err != nil {
			return err
		}
		if !more || (upTo > 0 && end >= upTo) {
			return nil
		}
	}
}

func (f *convFrames) hiNow() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hi
}

// start is the seq the frames start after, or -1 once they are dropped.
func (f *convFrames) start() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dropped {
		return -1
	}
	return f.lo
}

// extend reads past seq from (if the frames still end there and no other
// reader extended them meanwhile) a page of the log from the store and
// appends its frames. more reports that the page was full: the log may go
// on past it.
func (f *convFrames) extend(ctx context.Context, c *frameCache, openCursor func(after int64) *core.Cursor, from int64) (more bool, err error) {
	f.fill.Lock()
	defer f.fill.Unlock()
	f.mu.Lock()
	hi, dropped := f.hi, f.dropped
	// The error entries already framed after hi are read again by the
	// store (they follow hi); they are skipped.
	known := map[uuid.UUID]bool{}
	for i := len(f.errs) - 1; i >= 0 && f.errs[i].after == hi; i-- {
		known[f.errs[i].id] = true
	}
	f.mu.Unlock()
	if dropped {
		return false, errNotCached
	}
	if hi != from {
		return true, nil // another reader extended them: serve that first
	}
	cur := openCursor(hi)
	var (
		buf  []byte
		seqs []frameSpan
		errs []errFrame
	)
	f.mu.Lock()
	base := f.size
	if n := len(f.pages); n > 0 {
		buf = make([]byte, 0, cap(f.pages[n-1].b)) // a page like the last one
	}
	f.mu.Unlock()
	last, err := cur.ScanPage(ctx, 0, func(r *core.EntryRow) error {
		if r.Seq == 0 && known[r.ID] {
			return nil
		}
		start := len(buf)
		var err error
		if buf, err = appendEntryFrame(buf, r); err != nil {
			return err
		}
		span := frameSpan{base + start, base + len(buf)}
		if r.Seq == 0 {
			errs = append(errs, errFrame{id: r.ID, after: r.AfterSeq, frameSpan: span})
		} else {
			seqs = append(seqs, span)
		}
		return nil
	}, nil)
	if err != nil {
		return false, err
	}
	f.mu.Lock()
	if f.dropped {
		f.mu.Unlock()
		return false, errNotCached
	}
	if len(buf) > 0 {
		f.pages = append(f.pages, framePage{base: base, b: buf})
		f.size += len(buf)
	}
	f.seqs = append(f.seqs, seqs...)
	f.errs = append(f.errs, errs...)
	f.hi = cur.Seq()
	f.mu.Unlock()
	c.grew(f, len(buf))
	return !last, nil
}

// serve writes the frames past st's seq up to the seq upTo (at most the
// frames' hi) and moves st past them: the error entries that follow st's
// seq one by one (st may have shown some already), the rest as the slices
// of the pages it spans.
func (f *convFrames) serve(st *core.Cursor, upTo int64, out func([]byte) error) error {
	f.mu.Lock()
	seq := st.Seq()
	if seq < f.lo || seq > f.hi {
		f.mu.Unlock()
		return nil
	}
	if upTo < seq {
		upTo = seq
	}
	// Where the frames after seq begin: right after seq's own frame.
	from := 0
	if seq > f.lo {
		from = f.seqs[seq-f.lo-1].to
	}
	// Where they end: before the frame of upTo+1, or at the end.
	to := f.size
	if upTo < f.hi {
		to = f.seqs[upTo-f.lo].from
	}
	var head []errFrame // the errors after seq, which st may have shown
	var tail []uuid.UUID
	for _, e := range f.errs {
		switch {
		case e.from < from || e.from >= to:
		case e.after == seq:
			head = append(head, e)
		case e.after == upTo:
			tail = append(tail, e.id)
		}
	}
	pages := f.pages
	f.mu.Unlock()

	body := from
	for _, e := range head {
		body = max(body, e.to)
		if st.Shown(e.id) {
			continue
		}
		if err := writeSpan(pages, e.frameSpan, out); err != nil {
			return err
		}
		tail = append(tail, e.id)
	}
	if body < to {
		if err := writeSpan(pages, frameSpan{body, to}, out); err != nil {
			return err
		}
	}
	st.Passed(upTo, tail)
	return nil
}

// writeSpan writes the bytes of pages from span.from to span.to.
func writeSpan(pages []framePage, span frameSpan, out func([]byte) error) error {
	// The first page that ends after span.from.
	i := sort.Search(len(pages), func(i int) bool { return pages[i].base+len(pages[i].b) > span.from })
	for ; i < len(pages) && pages[i].base < span.to; i++ {
		p := pages[i]
		lo, hi := max(span.from-p.base, 0), min(span.to-p.base, len(p.b))
		if err := out(p.b[lo:hi]); err != nil {
			return err
		}
	}
	return nil
}
