package storetest

import (
	"strings"
	"testing"

	"github.com/google/uuid"

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

// testConversationForkRetitle: a conversation records whether its title was
// taken automatically (TitleAuto). A fork made with Retitle (an edit of the
// first message) takes its own title, automatic too, from a parent whose
// title is automatic, and the parent keeps its own; it keeps the parent's
// title when that is a rename's or was given at creation, when Retitle is
// not set, or when it brings no title. A rename makes a title not automatic,
// and an automatic fork title is renamed like any other.
func (s suite) testConversationForkRetitle(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	get := func(id uuid.UUID) *store.Conversation {
		t.Helper()
		c, err := st.ConversationGet(ctx, id)
		noErr(t, err, "getting conversation %s", id)
		return c
	}
	appendMsg := func(id uuid.UUID, text, title string, expect *int64, retitle bool) *store.EntryAppendResult {
		t.Helper()
		res, err := st.EntryAppend(ctx, &store.EntryAppendParams{
			ConversationID: id, ExpectSeq: expect, Kind: store.EntryUser, Author: "user:u1",
			Content: content("%s", text), Title: title, Retitle: retitle, Now: clk.Now(),
		})
		noErr(t, err, "appending %q", text)
		return res
	}
	// titled makes a conversation of two messages, titled by the first.
	titled := func() *store.Conversation {
		t.Helper()
		c, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{Now: clk.Now()})
		noErr(t, err, "creating a conversation")
		isTrue(t, !c.TitleAuto, "an untitled conversation's title is not automatic")
		appendMsg(c.ID, "plan the launch", "plan the launch", nil, false)
		appendMsg(c.ID, "and the budget", "and the budget", nil, false)
		return get(c.ID)
	}
	one, two := int64(1), int64(2)

	auto := titled()
	eq(t, auto.Title, "plan the launch", "title taken from the first message")
	isTrue(t, auto.TitleAuto, "a title taken from the first message is automatic")

	// An edit of the first message: the fork is titled by it.
	res := appendMsg(auto.ID, "plan the party", "plan the party", &one, true)
	isTrue(t, res.Forked, "an edit of seq 1 forks")
	fork := get(res.ConversationID)
	eq(t, fork.Title, "plan the party", "title of the fork of an edited first message")
	isTrue(t, fork.TitleAuto, "the fork's own title is automatic")
	parent := get(auto.ID)
	eq(t, parent.Title, "plan the launch", "the parent's title after the fork")
	isTrue(t, parent.TitleAuto, "the parent's title stays automatic")
	// Its own fork, by a further edit of the first message, is retitled too.
	res = appendMsg(fork.ID, "plan the picnic", "plan the picnic", &one, true)
	eq(t, get(res.ConversationID).Title, "plan the picnic", "title of a fork of a retitled fork")

	// Without Retitle (an edit of a later message) the fork keeps the
	// parent's title, automatic still.
	res = appendMsg(auto.ID, "and the staff", "and the staff", &two, false)
	later := get(res.ConversationID)
	eq(t, later.Title, "plan the launch", "title of a fork of a later message")
	isTrue(t, later.TitleAuto, "a fork keeps its parent's automatic title as automatic")
	// With Retitle but no title of its own, the fork keeps the parent's.
	res = appendMsg(auto.ID, "", "", &one, true)
	eq(t, get(res.ConversationID).Title, "plan the launch", "title of a fork that brings none")

	// A renamed parent's fork keeps the rename, and so does the parent.
	renamed := titled()
	_, err := st.ConversationFile(ctx, &store.ConversationFileParams{ID: renamed.ID, Title: ptr("Launch plan"), Now: clk.Now()})
	noErr(t, err, "renaming")
	isTrue(t, !get(renamed.ID).TitleAuto, "a renamed title is not automatic")
	res = appendMsg(renamed.ID, "plan the party", "plan the party", &one, true)
	kept := get(res.ConversationID)
	eq(t, kept.Title, "Launch plan", "title of a renamed conversation's fork")
	isTrue(t, !kept.TitleAuto, "a fork keeps its parent's rename as not automatic")
	eq(t, get(renamed.ID).Title, "Launch plan", "the renamed parent's title after the fork")
	// Nor does the fork's own next edit replace the rename it inherited.
	res = appendMsg(kept.ID, "plan the picnic", "plan the picnic", &one, true)
	eq(t, get(res.ConversationID).Title, "Launch plan", "title of a fork of a renamed fork")

	// A title given at creation is not automatic and stays in a fork.
	given, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{Title: "From Slack", Now: clk.Now()})
	noErr(t, err, "creating a titled conversation")
	isTrue(t, !given.TitleAuto, "a title given at creation is not automatic")
	appendMsg(given.ID, "hi", "hi", nil, false)
	res = appendMsg(given.ID, "hello", "hello", &one, true)
	eq(t, get(res.ConversationID).Title, "From Slack", "title of the fork of a conversation titled at creation")

	// Renaming a fork's automatic title makes it a person's.
	_, err = st.ConversationFile(ctx, &store.ConversationFileParams{ID: fork.ID, Title: ptr("Party"), Now: clk.Now()})
	noErr(t, err, "renaming the fork")
	fork = get(fork.ID)
	eq(t, fork.Title, "Party", "the renamed fork's title")
	isTrue(t, !fork.TitleAuto, "the renamed fork's title is not automatic")
}
