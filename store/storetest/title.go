package storetest

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/store"
)

// testConversationTitleFromMessage: an append's Title names a conversation
// that has no title, in the same write; it never replaces a title, whether
// given at creation, by an earlier message or by a rename; a fork made by
// an edit takes it when its parent has none.
func (s suite) testConversationTitleFromMessage(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	titleOf := func(c *store.Conversation) string {
		t.Helper()
		got, err := st.ConversationGet(ctx, c.ID)
		noErr(t, err, "getting conversation")
		return got.Title
	}
	appendMsg := func(c *store.Conversation, text, title string, expect *int64) *store.EntryAppendResult {
		t.Helper()
		res, err := st.EntryAppend(ctx, &store.EntryAppendParams{
			ConversationID: c.ID, ExpectSeq: expect, Kind: store.EntryUser, Author: "user:u1",
			Content: content("%s", text), Title: title, Now: clk.Now(),
		})
		noErr(t, err, "appending %q", text)
		return res
	}

	untitled := func() *store.Conversation {
		t.Helper()
		c, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{Now: clk.Now()})
		noErr(t, err, "creating a conversation")
		return c
	}
	c := untitled()
	appendMsg(c, "no title", "", nil)
	eq(t, titleOf(c), "", "title after a message with none")
	appendMsg(c, "plan the launch", "  plan the launch ", nil)
	eq(t, titleOf(c), "plan the launch", "title from the first titled message")
	appendMsg(c, "and more", "and more", nil)
	eq(t, titleOf(c), "plan the launch", "title after a later message")
	// With ExpectSeq at the next seq (no fork) the same holds.
	next := int64(4)
	appendMsg(c, "next", "next", &next)
	eq(t, titleOf(c), "plan the launch", "title after an append at the expected seq")

	renamed := untitled()
	_, err := st.ConversationFile(ctx, &store.ConversationFileParams{ID: renamed.ID, Title: ptr("Chosen name"), Now: clk.Now()})
	noErr(t, err, "renaming")
	appendMsg(renamed, "hello there", "hello there", nil)
	eq(t, titleOf(renamed), "Chosen name", "a renamed conversation's title after its first message")

	given, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{Title: "From Slack", Now: clk.Now()})
	noErr(t, err, "creating a titled conversation")
	appendMsg(given, "hi", "hi", nil)
	eq(t, titleOf(given), "From Slack", "a title given at creation after a message")

	// An edit of the first message of an untitled log: the fork is named
	// by it, the parent stays untitled.
	bare := untitled()
	appendMsg(bare, "one", "", nil)
	appendMsg(bare, "two", "", nil)
	one := int64(1)
	res := appendMsg(bare, "edited first", "edited first", &one)
	isTrue(t, res.Forked, "an edit of seq 1 forks")
	eq(t, titleOf(&store.Conversation{ID: res.ConversationID}), "edited first", "the fork's title")
	eq(t, titleOf(bare), "", "the parent's title after the fork")
	// A fork of a titled conversation keeps its parent's title.
	res = appendMsg(c, "edited", "edited", &one)
	eq(t, titleOf(&store.Conversation{ID: res.ConversationID}), "plan the launch", "a titled parent's fork")

	_, err = st.EntryAppend(ctx, &store.EntryAppendParams{
		ConversationID: c.ID, Kind: store.EntryUser, Content: content("x"), Title: strings.Repeat("x", store.MaxTitleChars+1), Now: clk.Now(),
	})
	errIs(t, err, store.ErrInvalid, "a title over the limit")
}
