package storetest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) entryTests() []namedTest {
	return []namedTest{
		{"AppendSeq", s.testAppendSeq},
		{"AppendInvalid", s.testAppendInvalid},
		{"AppendConcurrent", s.testAppendConcurrent},
		{"ForksAndEdits", s.testForks},
		{"ErrorEntries", s.testErrorEntries},
		{"EntryListInChannel", s.testEntryListInChannel},
		{"TimeTravel", s.testTimeTravel},
	}
}

func (s suite) testAppendSeq(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)
	turn := uuid.New()

	kinds := []store.EntryKind{store.EntryUser, store.EntryAssistant, store.EntryToolCall, store.EntryToolResult, store.EntryCard, store.EntryAction, store.EntrySystem}
	var appended []*store.Entry
	for i, k := range kinds {
		at := clk.Advance(time.Second)
		p := &store.EntryAppendParams{
			ConversationID: c.ID,
			Kind:           k,
			Author:         store.AgentAuthor(fmt.Sprintf("a%d", i)),
			Content:        json.RawMessage(fmt.Sprintf(`{"i": %d, "nested": {"k": [1, 2]}}`, i)),
			TurnID:         &turn,
			Now:            at,
		}
		if i%2 == 1 {
			p.ExpectSeq = ptr(int64(i + 1)) // the right next seq: a plain append
		}
		res, err := st.EntryAppend(ctx, p)
		noErr(t, err, "appending a %s entry", k)
		isTrue(t, !res.Forked, "append %d (%s) must not fork", i+1, k)
		eq(t, res.ConversationID, c.ID, "where append %d landed", i+1)
		e := res.Entry
		seqEq(t, e.Seq, int64(i+1), "seq of append %d", i+1)
		eq(t, e.AfterSeq, int64(i), "after seq of append %d (the last seq when it was written)", i+1)
		eq(t, e.ConversationID, c.ID, "entry conversation id")
		isTrue(t, e.ID != uuid.Nil, "an appended entry must have an id")
		appended = append(appended, e)
	}

	got := listEntries(t, st, store.EntryListParams{ConversationID: c.ID})
	deepEq(t, seqsOf(got), wantSeqs(1, int64(len(kinds))), "seqs listed after %d appends", len(kinds))
	for i, e := range got {
		eq(t, e.ID, appended[i].ID, "id of entry %d listed", i+1)
		eq(t, e.Kind, kinds[i], "kind of entry %d", i+1)
		eq(t, e.Author, store.AgentAuthor(fmt.Sprintf("a%d", i)), "author of entry %d", i+1)
		jsonEq(t, e.Content, json.RawMessage(fmt.Sprintf(`{"i": %d, "nested": {"k": [1, 2]}}`, i)), "content of entry %d", i+1)
		uuidPtrEq(t, e.TurnID, turn, "turn id of entry %d", i+1)
		timeEq(t, e.CreatedAt, newClock().Now().Add(time.Duration(i+1)*time.Second), "created at of entry %d", i+1)
	}
	one, err := st.EntryGet(ctx, appended[2].ID)
	noErr(t, err, "getting entry 3 by id")
	sameEntry(t, one, appended[2], "entry 3 got by id")

	conv := getConversation(t, st, c.ID)
	eq(t, conv.LastSeq, int64(len(kinds)), "conversation last seq after %d appends", len(kinds))
}

func (s suite) testAppendInvalid(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)
	appendN(t, st, clk, c.ID, 2)

	_, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: c.ID, Kind: "bogus", Content: content("x"), Now: clk.Now()})
	errIs(t, err, store.ErrInvalid, "appending an entry of an unknown kind")
	_, err = st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: uuid.New(), Kind: store.EntryUser, ExpectSeq: ptr(int64(1)), Content: content("x"), Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "appending with ExpectSeq to an unknown conversation")

	got := listEntries(t, st, store.EntryListParams{ConversationID: c.ID, WithErrors: true})
	deepEq(t, seqsOf(got), wantSeqs(1, 2), "the log after refused appends (must be unchanged)")
	eq(t, getConversation(t, st, c.ID).LastSeq, int64(2), "last seq after refused appends")
}

// testAppendConcurrent races 50 appenders on one conversation. Half append
// blind (ExpectSeq nil) and must always land; half read the last seq and
// expect the next one, so they either land there or fork when someone got
// there first. The conversation's log must end up contiguous, and every fork
// must be a faithful copy of its parent's prefix.
func (s suite) testAppendConcurrent(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)

	const writers, perWriter = 50, 4
	type outcome struct {
		writer, n int
		expect    *int64
		res       *store.EntryAppendResult
	}
	var (
		mu       sync.Mutex
		outcomes []outcome
		wg       sync.WaitGroup
		start    = make(chan struct{})
		errs     = make(chan error, writers)
	)
	for w := range writers {
		wg.Go(func() {
			<-start
			for n := range perWriter {
				p := &store.EntryAppendParams{
					ConversationID: c.ID,
					Kind:           store.EntryUser,
					Author:         store.UserAuthor(fmt.Sprintf("w%d", w)),
					Content:        content("w%d n%d", w, n),
					Now:            clk.Now(),
				}
				if w%2 == 1 {
					cur, err := st.ConversationGet(ctx, c.ID)
					if err != nil {
						errs <- fmt.Errorf("writer %d reading the last seq: %w", w, err)
						return
					}
					p.ExpectSeq = ptr(cur.LastSeq + 1)
				}
				res, err := st.EntryAppend(ctx, p)
				if err != nil {
					errs <- fmt.Errorf("writer %d append %d (expect seq %v): %w", w, n, p.ExpectSeq, err)
					return
				}
				mu.Lock()
				outcomes = append(outcomes, outcome{writer: w, n: n, expect: p.ExpectSeq, res: res})
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	eq(t, len(outcomes), writers*perWriter, "appends that returned")

	log := listEntries(t, st, store.EntryListParams{ConversationID: c.ID})
	bySeq := map[int64]*store.Entry{}
	for _, e := range log {
		bySeq[e.SeqValue()] = e
	}
	var landed int
	forks := map[uuid.UUID]outcome{}
	for _, o := range outcomes {
		want := content("w%d n%d", o.writer, o.n)
		if !o.res.Forked {
			landed++
			eq(t, o.res.ConversationID, c.ID, "writer %d append %d did not fork, so it must land in the original", o.writer, o.n)
			seq := o.res.Entry.SeqValue()
			if o.expect != nil {
				eq(t, seq, *o.expect, "writer %d append %d landed without forking, so at the seq it expected", o.writer, o.n)
			}
			e := bySeq[seq]
			isTrue(t, e != nil && e.ID == o.res.Entry.ID, "writer %d append %d reported seq %d, but the log holds another entry there", o.writer, o.n, seq)
			jsonEq(t, e.Content, want, "content at seq %d", seq)
			continue
		}
		isTrue(t, o.expect != nil, "writer %d append %d forked although ExpectSeq was nil (a blind append must never fork)", o.writer, o.n)
		isTrue(t, o.res.ConversationID != c.ID, "a forked append must land in a new conversation")
		eq(t, o.res.Entry.ConversationID, o.res.ConversationID, "the forked entry's conversation")
		seqEq(t, o.res.Entry.Seq, *o.expect, "seq of the entry in its fork (the ExpectSeq asked for)")
		forks[o.res.ConversationID] = o
	}
	deepEq(t, seqsOf(log), wantSeqs(1, int64(landed)), "the original log after %d appends landed in it (no gaps, no duplicates)", landed)
	eq(t, getConversation(t, st, c.ID).LastSeq, int64(landed), "last seq of the original")

	for id, o := range forks {
		fc := getConversation(t, st, id)
		uuidPtrEq(t, fc.ParentID, c.ID, "parent of fork %s", id)
		eq(t, fc.RootID, c.ID, "root of fork %s", id)
		seqEq(t, fc.ForkSeq, *o.expect, "fork seq of fork %s", id)
		fe := listEntries(t, st, store.EntryListParams{ConversationID: id})
		deepEq(t, seqsOf(fe), wantSeqs(1, *o.expect), "seqs of fork %s made at %d", id, *o.expect)
		for _, e := range fe[:len(fe)-1] {
			sameEntry(t, e, bySeq[e.SeqValue()], "fork %s seeded entry %d against the parent's", id, e.SeqValue())
		}
		last := fe[len(fe)-1]
		eq(t, last.ID, o.res.Entry.ID, "the last entry of fork %s is the forked append", id)
		jsonEq(t, last.Content, content("w%d n%d", o.writer, o.n), "content of the forked append")
	}
	eq(t, getConversation(t, st, c.ID).ChildCount, len(forks), "child count of the original after %d forks", len(forks))
	listed, err := st.ConversationForks(ctx, c.ID)
	noErr(t, err, "listing forks of the original")
	eq(t, len(listed), len(forks), "forks listed")
	for _, f := range listed {
		_, ok := forks[f.ID]
		isTrue(t, ok, "ConversationForks listed %s, which no append reported", f.ID)
	}
	t.Logf("%s: %d appends landed in the original, %d forked", s.h.Name, landed, len(forks))
}

// testForks edits earlier messages: an append with ExpectSeq at a taken seq
// forks into a new conversation seeded with the entries before it, and the
// parent's log is never touched.
func (s suite) testForks(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	root := newConversation(t, st, clk)
	orig := appendN(t, st, clk, root.ID, 4)

	// ExpectSeq equal to the next seq is a plain append.
	res, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: root.ID, ExpectSeq: ptr(int64(5)), Kind: store.EntryUser, Author: "user:u1", Content: content("five"), Now: clk.Now()})
	noErr(t, err, "appending with ExpectSeq at the next seq")
	isTrue(t, !res.Forked, "an append whose ExpectSeq is the next seq must not fork")
	seqEq(t, res.Entry.Seq, 5, "seq of the append at the next seq")
	orig = append(orig, res.Entry)

	fork := func(parent uuid.UUID, at int64, text string) *store.EntryAppendResult {
		t.Helper()
		res, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: parent, ExpectSeq: ptr(at), Kind: store.EntryUser, Author: "user:editor", Content: content("%s", text), Now: clk.Advance(time.Second)})
		noErr(t, err, "editing message %d of %s", at, parent)
		isTrue(t, res.Forked, "an append with ExpectSeq %d at a taken seq must fork", at)
		isTrue(t, res.ConversationID != parent, "a fork must be a new conversation")
		eq(t, res.Entry.ConversationID, res.ConversationID, "the edit's conversation")
		seqEq(t, res.Entry.Seq, at, "seq of the edit in its fork")
		return res
	}
	checkFork := func(id, parent uuid.UUID, at int64, prefix []*store.Entry, edit *store.Entry) *store.Conversation {
		t.Helper()
		fc := getConversation(t, st, id)
		uuidPtrEq(t, fc.ParentID, parent, "parent of the fork at %d", at)
		eq(t, fc.RootID, root.ID, "root of the fork at %d (the root of the whole tree)", at)
		seqEq(t, fc.ForkSeq, at, "fork seq of the fork at %d", at)
		eq(t, fc.LastSeq, at, "last seq of the fork at %d", at)
		es := listEntries(t, st, store.EntryListParams{ConversationID: id})
		deepEq(t, seqsOf(es), wantSeqs(1, at), "seqs of the fork at %d", at)
		for i, e := range es[:at-1] {
			sameEntry(t, e, prefix[i], "seeded entry %d of the fork at %d", i+1, at)
		}
		eq(t, es[at-1].ID, edit.ID, "entry %d of the fork at %d is the edit", at, at)
		jsonEq(t, es[at-1].Content, edit.Content, "content of the edit")
		return fc
	}

	f1 := fork(root.ID, 3, "edited three")
	checkFork(f1.ConversationID, root.ID, 3, orig, f1.Entry)
	eq(t, getConversation(t, st, root.ID).ChildCount, 1, "child count of the root after one fork")

	// A fork of a fork still points at the root of the tree.
	f1Entries := listEntries(t, st, store.EntryListParams{ConversationID: f1.ConversationID})
	f2 := fork(f1.ConversationID, 2, "edited two in the fork")
	checkFork(f2.ConversationID, f1.ConversationID, 2, f1Entries, f2.Entry)
	eq(t, getConversation(t, st, f1.ConversationID).ChildCount, 1, "child count of the first fork after it was forked")

	f3 := fork(root.ID, 1, "edited one")
	checkFork(f3.ConversationID, root.ID, 1, orig, f3.Entry)
	eq(t, getConversation(t, st, root.ID).ChildCount, 2, "child count of the root after two forks")

	// The parent's log is unchanged by all of it.
	after := listEntries(t, st, store.EntryListParams{ConversationID: root.ID})
	deepEq(t, seqsOf(after), wantSeqs(1, 5), "the root's seqs after its messages were edited")
	for i, e := range after {
		eq(t, e.ID, orig[i].ID, "entry %d of the root after edits (same entry, never overwritten)", i+1)
		sameEntry(t, e, orig[i], "entry %d of the root after edits", i+1)
	}
	eq(t, getConversation(t, st, root.ID).LastSeq, int64(5), "the root's last seq after forks")

	forks, err := st.ConversationForks(ctx, root.ID)
	noErr(t, err, "listing the root's forks")
	eq(t, len(forks), 2, "forks of the root")
	eq(t, forks[0].ID, f1.ConversationID, "first fork listed (oldest first)")
	eq(t, forks[1].ID, f3.ConversationID, "second fork listed")
	leaf, err := st.ConversationForks(ctx, f2.ConversationID)
	noErr(t, err, "listing forks of a leaf")
	eq(t, len(leaf), 0, "forks of a conversation never forked")

	f2c := getConversation(t, st, f2.ConversationID)
	isTrue(t, f2c.ParentID != nil && *f2c.ParentID == f1.ConversationID, "a fork of a fork points at its parent fork")
	eq(t, f2c.RootID, root.ID, "a fork of a fork keeps the root")

	// A fork goes on like any conversation.
	res, err = st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: f1.ConversationID, Kind: store.EntryAssistant, Content: content("reply in the fork"), Now: clk.Now()})
	noErr(t, err, "appending to a fork")
	isTrue(t, !res.Forked, "a blind append to a fork must not fork")
	seqEq(t, res.Entry.Seq, 4, "seq of the next entry in the fork at 3")
}

// testErrorEntries: errors carry no seq and never reach a model's context,
// but show in the display order right after the entry they followed.
func (s suite) testErrorEntries(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)

	appendErr := func(text string, expect *int64) *store.Entry {
		t.Helper()
		res, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: c.ID, Kind: store.EntryError, Author: "system", ExpectSeq: expect, Content: content("%s", text), Now: clk.Advance(time.Second)})
		noErr(t, err, "appending error %q", text)
		isTrue(t, !res.Forked, "an error entry must never fork (ExpectSeq is ignored for errors)")
		eq(t, res.ConversationID, c.ID, "where an error entry landed")
		isTrue(t, res.Entry.Seq == nil, "an error entry has no seq, got %v", res.Entry.Seq)
		eq(t, res.Entry.Kind, store.EntryError, "kind of an error entry")
		return res.Entry
	}

	e0 := appendErr("failed before anything", nil)
	eq(t, e0.AfterSeq, int64(0), "after seq of an error in an empty log")
	appendN(t, st, clk, c.ID, 2)
	e2 := appendErr("failed after two", ptr(int64(1))) // ExpectSeq at a taken seq: ignored
	eq(t, e2.AfterSeq, int64(2), "after seq of an error written when the log ended at 2")
	eq(t, getConversation(t, st, c.ID).LastSeq, int64(2), "last seq after an error entry (errors take no seq)")

	res, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: c.ID, Kind: store.EntryUser, Content: content("three"), Now: clk.Now()})
	noErr(t, err, "appending after an error")
	seqEq(t, res.Entry.Seq, 3, "seq of the entry after an error")
	eq(t, res.Entry.AfterSeq, int64(2), "after seq of the entry after an error")

	got, err := st.EntryGet(ctx, e2.ID)
	noErr(t, err, "getting an error entry by id")
	isTrue(t, got.Seq == nil, "an error entry read back has no seq")
	eq(t, got.AfterSeq, int64(2), "after seq of the error read back")

	cases := []struct {
		name string
		p    store.EntryListParams
		want []string
	}{
		{"model context", store.EntryListParams{}, []string{"1", "2", "3"}},
		{"display", store.EntryListParams{WithErrors: true}, []string{"e@0", "1", "2", "e@2", "3"}},
		{"display after 2", store.EntryListParams{WithErrors: true, AfterSeq: 2}, []string{"e@2", "3"}},
		{"display up to 2", store.EntryListParams{WithErrors: true, UpToSeq: 2}, []string{"e@0", "1", "2", "e@2"}},
		{"display up to 1", store.EntryListParams{WithErrors: true, UpToSeq: 1}, []string{"e@0", "1"}},
		{"display limit 2", store.EntryListParams{WithErrors: true, Limit: 2}, []string{"e@0", "1"}},
		{"display limit 4", store.EntryListParams{WithErrors: true, Limit: 4}, []string{"e@0", "1", "2", "e@2"}},
		{"display after 1 limit 2", store.EntryListParams{WithErrors: true, AfterSeq: 1, Limit: 2}, []string{"2", "e@2"}},
		{"display after 3", store.EntryListParams{WithErrors: true, AfterSeq: 3}, []string{}},
		{"model context up to 2", store.EntryListParams{UpToSeq: 2}, []string{"1", "2"}},
	}
	for _, tc := range cases {
		tc.p.ConversationID = c.ID
		list := listEntries(t, st, tc.p)
		deepEq(t, seqsOf(list), tc.want, "%s read (%+v)", tc.name, tc.p)
		if tc.p.WithErrors {
			// EntryScan is the same display read, handed over as bytes.
			deepEq(t, scanEntries(t, st, tc.p), shownOf(list), "%s scanned (%+v)", tc.name, tc.p)
		}
	}
}

// shownEntry is what a display shows of an entry: what EntryScan hands
// over.
type shownEntry struct {
	ID        uuid.UUID
	Seq       int64
	AfterSeq  int64 // of an error entry
	Kind      store.EntryKind
	Author    store.Author
	Content   string
	CreatedAt time.Time
}

func shownOf(list []*store.Entry) []shownEntry {
	out := make([]shownEntry, 0, len(list))
	for _, e := range list {
		s := shownEntry{ID: e.ID, Seq: e.SeqValue(), Kind: e.Kind, Author: e.Author, Content: string(e.Content), CreatedAt: e.CreatedAt}
		if e.Seq == nil {
			s.AfterSeq = e.AfterSeq
		}
		out = append(out, s)
	}
	return out
}

// scanEntries reads p with EntryScan, copying what each row hands over
// (its bytes are the driver's).
func scanEntries(t *testing.T, st store.Store, p store.EntryListParams) []shownEntry {
	t.Helper()
	out := []shownEntry{}
	err := st.EntryScan(ctxFor(t), &p, func(r *store.EntryRow) error {
		s := shownEntry{ID: r.ID, Seq: r.Seq, Kind: store.EntryKind(r.Kind), Author: store.Author(r.Author),
			Content: string(r.Content), CreatedAt: r.CreatedAt}
		if r.Seq == 0 {
			s.AfterSeq = r.AfterSeq
		}
		out = append(out, s)
		return nil
	})
	noErr(t, err, "scanning entries (%+v)", p)
	return out
}

func (s suite) testTimeTravel(t *testing.T) {
	st := s.newStore(t)
	clk := newClock()
	c := newConversation(t, st, clk)
	appendN(t, st, clk, c.ID, 10)

	cases := []struct {
		name string
		p    store.EntryListParams
		want []string
	}{
		{"all", store.EntryListParams{}, wantSeqs(1, 10)},
		{"up to 1", store.EntryListParams{UpToSeq: 1}, wantSeqs(1, 1)},
		{"up to 3", store.EntryListParams{UpToSeq: 3}, wantSeqs(1, 3)},
		{"up to 7", store.EntryListParams{UpToSeq: 7}, wantSeqs(1, 7)},
		{"up to 10", store.EntryListParams{UpToSeq: 10}, wantSeqs(1, 10)},
		{"up past the end", store.EntryListParams{UpToSeq: 20}, wantSeqs(1, 10)},
		{"after 4", store.EntryListParams{AfterSeq: 4}, wantSeqs(5, 10)},
		{"after 4 up to 7", store.EntryListParams{AfterSeq: 4, UpToSeq: 7}, wantSeqs(5, 7)},
		{"limit 3", store.EntryListParams{Limit: 3}, wantSeqs(1, 3)},
		{"after 8 limit 5", store.EntryListParams{AfterSeq: 8, Limit: 5}, wantSeqs(9, 10)},
		{"after 2 up to 9 limit 4", store.EntryListParams{AfterSeq: 2, UpToSeq: 9, Limit: 4}, wantSeqs(3, 6)},
		{"after the end", store.EntryListParams{AfterSeq: 10}, []string{}},
	}
	for _, tc := range cases {
		tc.p.ConversationID = c.ID
		deepEq(t, seqsOf(listEntries(t, st, tc.p)), tc.want, "%s (%+v)", tc.name, tc.p)
		shown := tc.p
		shown.WithErrors = true
		deepEq(t, scanEntries(t, st, shown), shownOf(listEntries(t, st, shown)), "%s scanned (%+v)", tc.name, shown)
	}

	// Resuming a stream is paging with the cursor.
	var cursor int64
	var pages [][]string
	for range 10 {
		page := listEntries(t, st, store.EntryListParams{ConversationID: c.ID, AfterSeq: cursor, Limit: 4})
		if len(page) == 0 {
			break
		}
		pages = append(pages, seqsOf(page))
		cursor = page[len(page)-1].SeqValue()
	}
	deepEq(t, pages, [][]string{wantSeqs(1, 4), wantSeqs(5, 8), wantSeqs(9, 10)}, "pages read with an after-seq cursor and limit 4")
}

// testEntryListInChannel: a channel's newest messages come from every
// conversation bound to it (the channel and its threads), newest first,
// people's and agents' only, and never another channel's or workspace's.
func (s suite) testEntryListInChannel(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	bind := func(workspace, channel, thread string) uuid.UUID {
		t.Helper()
		res, err := st.BindingEnsure(ctx, &store.BindingEnsureParams{
			Place: store.Place{Platform: "slack", Workspace: workspace, Channel: channel, Thread: thread}, Now: clk.Now(),
		})
		noErr(t, err, "binding %s/%s/%s", workspace, channel, thread)
		return res.Binding.ConversationID
	}
	say := func(conv uuid.UUID, kind store.EntryKind, text string) {
		t.Helper()
		clk.Advance(time.Second)
		_, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: conv, Kind: kind, Author: "user:U1", Content: content("%s", text), Now: clk.Now()})
		noErr(t, err, "appending %q", text)
	}
	top, thread := bind("T1", "C1", ""), bind("T1", "C1", "1.2")
	say(top, store.EntryUser, "one")
	say(thread, store.EntryAssistant, "two")
	say(thread, store.EntryToolCall, "not a message")
	say(bind("T1", "C2", ""), store.EntryUser, "other channel")
	say(bind("T2", "C1", ""), store.EntryUser, "other workspace")
	say(top, store.EntryUser, "three")

	got, err := st.EntryListInChannel(ctx, &store.EntryListInChannelParams{Place: store.Place{Platform: "slack", Workspace: "T1", Channel: "C1"}, Limit: 10})
	noErr(t, err, "listing the channel")
	var texts []string
	for _, e := range got {
		var c struct{ Text string }
		noErr(t, json.Unmarshal(e.Content, &c), "decoding")
		texts = append(texts, c.Text)
	}
	deepEq(t, texts, []string{"three", "two", "one"}, "the channel's messages, newest first")
	got, err = st.EntryListInChannel(ctx, &store.EntryListInChannelParams{Place: store.Place{Platform: "slack", Workspace: "T1", Channel: "C1"}, Limit: 2})
	noErr(t, err, "listing the channel's newest two")
	eq(t, len(got), 2, "messages with a limit of 2")
}
