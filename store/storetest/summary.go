package storetest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) summaryTests() []namedTest {
	return []namedTest{
		{"LatestSummary", s.testLatestSummary},
		{"RulebookSetGetClear", s.testRulebook},
		{"RulebookInvalid", s.testRulebookInvalid},
		{"ForkKeepsSummaryAndRulebook", s.testForkKeepsSummaryAndRulebook},
	}
}

func appendSummary(t testing.TB, st store.Queries, clk *clock, conv uuid.UUID, through int64) *store.Entry {
	t.Helper()
	res, err := st.EntryAppend(ctxFor(t), &store.EntryAppendParams{
		ConversationID: conv, Kind: store.EntrySummary, Author: store.SystemAuthor,
		Content: json.RawMessage(`{"text":"so far","through_seq":` + jsonInt(through) + `}`), Now: clk.Advance(time.Second),
	})
	noErr(t, err, "appending a summary through seq %d", through)
	return res.Entry
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

// testLatestSummary: a summary is an entry with a seq of its own; the latest
// one of a conversation is found whatever else the log holds, and another
// conversation's summaries never are.
func (s suite) testLatestSummary(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)
	other := newConversation(t, st, clk)

	_, err := st.EntryLatestSummary(ctx, c.ID)
	errIs(t, err, store.ErrNotFound, "the latest summary of a conversation with an empty log")
	appendN(t, st, clk, c.ID, 4)
	_, err = st.EntryLatestSummary(ctx, c.ID)
	errIs(t, err, store.ErrNotFound, "the latest summary of a conversation with none")

	first := appendSummary(t, st, clk, c.ID, 3)
	seqEq(t, first.Seq, 5, "the first summary's seq (after the four entries)")
	eq(t, first.Kind, store.EntrySummary, "the summary's kind")
	appendN(t, st, clk, c.ID, 3)
	second := appendSummary(t, st, clk, c.ID, 7)
	seqEq(t, second.Seq, 9, "the second summary's seq")
	appendN(t, st, clk, c.ID, 2)
	appendSummary(t, st, clk, other.ID, 0)

	got, err := st.EntryLatestSummary(ctx, c.ID)
	noErr(t, err, "finding the latest summary")
	sameEntry(t, got, second, "the latest summary")
	jsonEq(t, got.Content, json.RawMessage(`{"text":"so far","through_seq":7}`), "the latest summary's content")
	all := listEntries(t, st, store.EntryListParams{ConversationID: c.ID})
	eq(t, len(all), 11, "entries in the log: every one kept, summaries among them")
	tail := listEntries(t, st, store.EntryListParams{ConversationID: c.ID, AfterSeq: 7})
	deepEq(t, seqsOf(tail), wantSeqs(8, 11), "the entries after the seq the summary covers")

	_, err = st.EntryLatestSummary(ctx, uuid.Nil)
	errIs(t, err, store.ErrInvalid, "the latest summary of no conversation")
}

func (s suite) testRulebook(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)
	other := newConversation(t, st, clk)

	_, err := st.RulebookGet(ctx, c.ID)
	errIs(t, err, store.ErrNotFound, "reading the rulebook of a conversation with none")
	_, err = st.RulebookSet(ctx, &store.RulebookSetParams{ConversationID: uuid.New(), Text: "Be brief.", SetBy: "user:u1", Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "setting the rulebook of a conversation that does not exist")

	t1 := clk.Advance(time.Minute)
	set, err := st.RulebookSet(ctx, &store.RulebookSetParams{ConversationID: c.ID, Text: "Be brief.", SetBy: "user:u1", Now: t1})
	noErr(t, err, "setting a rulebook")
	eq(t, set.Text, "Be brief.", "the rulebook set")
	timeEq(t, set.UpdatedAt, t1, "the rulebook's updated_at")
	t2 := clk.Advance(time.Minute)
	_, err = st.RulebookSet(ctx, &store.RulebookSetParams{ConversationID: c.ID, Text: "Answer in French.\nNever more than three lines.", SetBy: "operator", Now: t2})
	noErr(t, err, "replacing the rulebook")
	got, err := st.RulebookGet(ctx, c.ID)
	noErr(t, err, "reading the rulebook")
	eq(t, got.ConversationID, c.ID, "the rulebook's conversation")
	eq(t, got.Text, "Answer in French.\nNever more than three lines.", "the replaced rulebook's text")
	eq(t, got.SetBy, "operator", "who replaced the rulebook")
	timeEq(t, got.UpdatedAt, t2, "the replaced rulebook's updated_at")
	_, err = st.RulebookGet(ctx, other.ID)
	errIs(t, err, store.ErrNotFound, "another conversation's rulebook (must stay unset)")

	cleared, err := st.RulebookClear(ctx, c.ID)
	noErr(t, err, "clearing the rulebook")
	isTrue(t, cleared, "clearing a rulebook that was set must report it")
	_, err = st.RulebookGet(ctx, c.ID)
	errIs(t, err, store.ErrNotFound, "reading a cleared rulebook")
	cleared, err = st.RulebookClear(ctx, c.ID)
	noErr(t, err, "clearing the rulebook again")
	isTrue(t, !cleared, "clearing a rulebook that is not set must report nothing cleared")
}

func (s suite) testRulebookInvalid(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)
	for _, p := range []*store.RulebookSetParams{
		nil,
		{Text: "x", SetBy: "user:u1"},
		{ConversationID: c.ID, SetBy: "user:u1"},
		{ConversationID: c.ID, Text: "x"},
		{ConversationID: c.ID, Text: strings.Repeat("é", store.MaxRulebookChars+1), SetBy: "user:u1"},
	} {
		_, err := st.RulebookSet(ctx, p)
		errIs(t, err, store.ErrInvalid, "setting a rulebook with %+v", p)
	}
	_, err := st.RulebookSet(ctx, &store.RulebookSetParams{ConversationID: c.ID, Text: strings.Repeat("é", store.MaxRulebookChars), SetBy: "user:u1", Now: clk.Now()})
	noErr(t, err, "setting a rulebook of exactly %d characters", store.MaxRulebookChars)
	_, err = st.RulebookClear(ctx, uuid.Nil)
	errIs(t, err, store.ErrInvalid, "clearing the rulebook of no conversation")
}

// testForkKeepsSummaryAndRulebook: a fork copies the log before the edit,
// summaries included, and starts with its parent's rulebook.
func (s suite) testForkKeepsSummaryAndRulebook(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	c := newConversation(t, st, clk)
	appendN(t, st, clk, c.ID, 4)
	appendSummary(t, st, clk, c.ID, 3)
	appendN(t, st, clk, c.ID, 3)
	_, err := st.RulebookSet(ctx, &store.RulebookSetParams{ConversationID: c.ID, Text: "Be brief.", SetBy: "user:u1", Now: clk.Now()})
	noErr(t, err, "setting the parent's rulebook")

	res, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: c.ID, ExpectSeq: ptr(int64(7)), Kind: store.EntryUser, Author: "user:u1", Content: content("edited"), Now: clk.Advance(time.Second)})
	noErr(t, err, "editing message 7")
	isTrue(t, res.Forked, "an edit of seq 7 must fork")
	sum, err := st.EntryLatestSummary(ctx, res.ConversationID)
	noErr(t, err, "finding the fork's latest summary")
	seqEq(t, sum.Seq, 5, "the summary copied into the fork")
	rb, err := st.RulebookGet(ctx, res.ConversationID)
	noErr(t, err, "reading the fork's rulebook")
	eq(t, rb.Text, "Be brief.", "the fork's rulebook (its parent's)")
}
