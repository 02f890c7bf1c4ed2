package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) noteTests() []namedTest {
	return []namedTest{
		{"CreateAndGet", s.testNoteCreate},
		{"Invalid", s.testNoteInvalid},
		{"SearchVisibility", s.testNoteSearchVisibility},
		{"SearchRanking", s.testNoteSearchRanking},
		{"Pinned", s.testNotePinned},
		{"TouchAndArchive", s.testNoteTouchArchive},
		{"ListPages", s.testNoteList},
		{"SummarySearch", s.testSummarySearch},
	}
}

func createNote(t testing.TB, st store.Queries, p store.NoteCreateParams) *store.Note {
	t.Helper()
	if p.Family == "" {
		p.Family = "default"
	}
	if p.Scope == "" {
		p.Scope = store.NoteScopeAgent
	}
	n, err := st.NoteCreate(ctxFor(t), &p)
	noErr(t, err, "creating note %q", p.Text)
	return n
}

func noteTexts(ns []*store.Note) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Text
	}
	return out
}

func (s suite) testNoteCreate(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	conv := newConversation(t, st, clk)
	ws := uuid.New()
	n := createNote(t, st, store.NoteCreateParams{
		Agent: "atlas", Family: "travel", ConversationID: &conv.ID, Scope: store.NoteScopeConversation,
		Text: "  Ana prefers aisle seats.  ", Tags: []string{"ana", " seats", "ana", ""}, Pinned: true, WorkspaceID: &ws, Now: clk.Now(),
	})
	eq(t, n.ID.Version(), uuid.Version(7), "a note's id is a UUIDv7")
	got, err := st.NoteGet(ctx, n.ID)
	noErr(t, err, "reading the note back")
	eq(t, got.Agent, "atlas", "agent")
	eq(t, got.Family, "travel", "family")
	uuidPtrEq(t, got.ConversationID, conv.ID, "conversation")
	eq(t, got.Scope, store.NoteScopeConversation, "scope")
	eq(t, got.Text, "Ana prefers aisle seats.", "text (trimmed)")
	deepEq(t, got.Tags, []string{"ana", "seats"}, "tags (trimmed, empty and repeated ones dropped)")
	eq(t, got.Pinned, true, "pinned")
	eq(t, got.Relevance, 1.0, "a new note's relevance")
	eq(t, got.Uses, 0, "a new note's uses")
	isTrue(t, got.LastUsedAt == nil && got.ArchivedAt == nil && got.Supersedes == nil, "a new note is unused, active and supersedes nothing: %+v", got)
	uuidPtrEq(t, got.WorkspaceID, ws, "workspace")
	timeEq(t, got.CreatedAt, clk.Now(), "created_at")

	// An agent note drops a conversation it was given; tags are never nil.
	a := createNote(t, st, store.NoteCreateParams{Agent: "atlas", ConversationID: &conv.ID, Text: "x", Now: clk.Now()})
	isTrue(t, a.ConversationID == nil, "an agent note keeps no conversation, got %v", a.ConversationID)
	deepEq(t, a.Tags, []string{}, "tags of a note with none")
	_, err = st.NoteGet(ctx, uuid.New())
	errIs(t, err, store.ErrNotFound, "reading a note that does not exist")
}

func (s suite) testNoteInvalid(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	for _, p := range []store.NoteCreateParams{
		{Family: "f", Scope: store.NoteScopeAgent, Text: "x"},
		{Agent: "a", Scope: store.NoteScopeAgent, Text: "x"},
		{Agent: "a", Family: "f", Scope: "team", Text: "x"},
		{Agent: "a", Family: "f", Scope: store.NoteScopeAgent, Text: "   "},
		{Agent: "a", Family: "f", Scope: store.NoteScopeConversation, Text: "x"},
	} {
		_, err := st.NoteCreate(ctx, &p)
		errIs(t, err, store.ErrInvalid, "creating %+v", p)
	}
	_, err := st.NoteSearch(ctx, &store.NoteSearchParams{Reader: store.NoteReader{Agent: "a"}, Query: "x"})
	errIs(t, err, store.ErrInvalid, "searching without a family")
	_, err = st.NoteSearch(ctx, &store.NoteSearchParams{Reader: store.NoteReader{Agent: "a", Family: "f"}, Scopes: []store.NoteScope{"team"}, Query: "x"})
	errIs(t, err, store.ErrInvalid, "searching an unknown scope")
	err = st.NoteRescore(ctx, &store.NoteRescoreParams{ID: uuid.New(), Relevance: -1})
	errIs(t, err, store.ErrInvalid, "a negative relevance")
	_, err = st.SummarySearch(ctx, &store.SummarySearchParams{Query: "x"})
	errIs(t, err, store.ErrInvalid, "searching summaries without an agent")
}

// A search finds only what its reader may see: its own agent notes, its
// family's, its conversation's, in its workspace, and never archived ones.
func (s suite) testNoteSearchVisibility(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	here, there := newConversation(t, st, clk), newConversation(t, st, clk)
	ws, other := uuid.New(), uuid.New()
	mk := func(agent, family string, scope store.NoteScope, conv *uuid.UUID, w *uuid.UUID, text string) *store.Note {
		return createNote(t, st, store.NoteCreateParams{Agent: agent, Family: family, Scope: scope, ConversationID: conv, WorkspaceID: w, Text: text, Now: clk.Now()})
	}
	mk("atlas", "travel", store.NoteScopeAgent, nil, &ws, "atlas: the offsite is in Lisbon")
	mk("scout", "travel", store.NoteScopeFamily, nil, &ws, "family: the offsite budget is tight")
	mk("atlas", "travel", store.NoteScopeConversation, &here.ID, &ws, "here: the offsite dates are fixed")
	mk("atlas", "travel", store.NoteScopeConversation, &there.ID, &ws, "there: the offsite hotel is booked")
	mk("scout", "travel", store.NoteScopeAgent, nil, &ws, "scout's own: the offsite caterer")
	mk("ledger", "finance", store.NoteScopeFamily, nil, &ws, "other family: the offsite invoice")
	mk("atlas", "travel", store.NoteScopeAgent, nil, &other, "other workspace: the offsite in Porto")
	mk("atlas", "travel", store.NoteScopeAgent, nil, nil, "no workspace: the offsite")
	gone := mk("atlas", "travel", store.NoteScopeAgent, nil, &ws, "archived: the offsite was cancelled")
	_, err := st.NoteArchive(ctx, &store.NoteArchiveParams{ID: gone.ID, Now: clk.Now()})
	noErr(t, err, "archiving a note")

	reader := store.NoteReader{Agent: "atlas", Family: "travel", ConversationID: here.ID, WorkspaceID: &ws}
	search := func(scopes ...store.NoteScope) []string {
		hits, err := st.NoteSearch(ctx, &store.NoteSearchParams{Reader: reader, Scopes: scopes, Query: "the offsite?"})
		noErr(t, err, "searching %v", scopes)
		texts := noteTexts(hits)
		slices.Sort(texts)
		return texts
	}
	deepEq(t, search(), []string{"atlas: the offsite is in Lisbon", "family: the offsite budget is tight", "here: the offsite dates are fixed"},
		"every scope the reader sees")
	deepEq(t, search(store.NoteScopeFamily), []string{"family: the offsite budget is tight"}, "the family scope only")
	deepEq(t, search(store.NoteScopeAgent, store.NoteScopeConversation), []string{"atlas: the offsite is in Lisbon", "here: the offsite dates are fixed"},
		"the agent and conversation scopes")
	reader.WorkspaceID = nil
	deepEq(t, search(), []string{"no workspace: the offsite"}, "a reader outside any workspace")

	hits, err := st.NoteSearch(ctx, &store.NoteSearchParams{Reader: reader, Query: "the and of ?"})
	noErr(t, err, "searching for stop words only")
	eq(t, len(hits), 0, "a query of stop words finds nothing")
}

// Notes matching more of the words come first, stemming matches word
// forms, tags are searched too, and Limit bounds the answer.
func (s suite) testNoteSearchRanking(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	for _, text := range []string{
		"Ana likes window seats",
		"Flights to Lisbon leave from terminal two; Ana booked them",
		"The Lisbon flight was delayed",
		"Nothing relevant here",
	} {
		createNote(t, st, store.NoteCreateParams{Agent: "atlas", Text: text, Now: clk.Now()})
		clk.Advance(time.Second)
	}
	createNote(t, st, store.NoteCreateParams{Agent: "atlas", Text: "Prefers mornings", Tags: []string{"lisbon"}, Now: clk.Now()})
	reader := store.NoteReader{Agent: "atlas", Family: "default"}
	hits, err := st.NoteSearch(ctx, &store.NoteSearchParams{Reader: reader, Query: "Ana's flights to Lisbon"})
	noErr(t, err, "searching")
	texts := noteTexts(hits)
	eq(t, len(texts), 4, "notes matching any word (%q)", texts)
	eq(t, texts[0], "Flights to Lisbon leave from terminal two; Ana booked them", "the note with every word first")
	isTrue(t, slices.Contains(texts, "The Lisbon flight was delayed"), "stemming: flights finds flight (%q)", texts)
	isTrue(t, slices.Contains(texts, "Prefers mornings"), "a tag is searched (%q)", texts)
	hits, err = st.NoteSearch(ctx, &store.NoteSearchParams{Reader: reader, Query: "Lisbon", Limit: 2})
	noErr(t, err, "searching with a limit")
	eq(t, len(hits), 2, "hits within the limit")
	hits, err = st.NoteSearch(ctx, &store.NoteSearchParams{Reader: reader, Query: `"Lisbon" OR * NEAR(:-`})
	noErr(t, err, "searching with query syntax in the text")
	eq(t, len(hits), 3, "hits for a query full of syntax, read as its words")
}

func (s suite) testNotePinned(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	conv := newConversation(t, st, clk)
	createNote(t, st, store.NoteCreateParams{Agent: "atlas", Text: "pinned agent note", Pinned: true, Now: clk.Now()})
	createNote(t, st, store.NoteCreateParams{Agent: "scout", Scope: store.NoteScopeFamily, Text: "pinned family note", Pinned: true, Now: clk.Now()})
	createNote(t, st, store.NoteCreateParams{Agent: "atlas", Scope: store.NoteScopeConversation, ConversationID: &conv.ID, Text: "pinned here", Pinned: true, Now: clk.Now()})
	createNote(t, st, store.NoteCreateParams{Agent: "atlas", Text: "not pinned", Now: clk.Now()})
	createNote(t, st, store.NoteCreateParams{Agent: "scout", Text: "scout's pinned note", Pinned: true, Now: clk.Now()})
	gone := createNote(t, st, store.NoteCreateParams{Agent: "atlas", Text: "pinned, archived", Pinned: true, Now: clk.Now()})
	_, err := st.NoteArchive(ctx, &store.NoteArchiveParams{ID: gone.ID})
	noErr(t, err, "archiving")

	pinned, err := st.NoteListPinned(ctx, &store.NoteListPinnedParams{Reader: store.NoteReader{Agent: "atlas", Family: "default", ConversationID: conv.ID}})
	noErr(t, err, "listing pinned notes")
	deepEq(t, noteTexts(pinned), []string{"pinned agent note", "pinned family note", "pinned here"}, "the pinned notes atlas sees here, oldest first")
	pinned, err = st.NoteListPinned(ctx, &store.NoteListPinnedParams{Reader: store.NoteReader{Agent: "atlas", Family: "default"}})
	noErr(t, err, "listing pinned notes outside the conversation")
	deepEq(t, noteTexts(pinned), []string{"pinned agent note", "pinned family note"}, "the pinned notes atlas sees elsewhere")
}

func (s suite) testNoteTouchArchive(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	older := createNote(t, st, store.NoteCreateParams{Agent: "atlas", Text: "the budget is 5000", Tags: []string{"key:budget"}, Now: clk.Now()})
	newer := createNote(t, st, store.NoteCreateParams{Agent: "atlas", Text: "the budget is 7000", Tags: []string{"key:budget"}, Now: clk.Advance(time.Hour)})

	used := clk.Advance(time.Hour)
	n, err := st.NoteTouch(ctx, &store.NoteTouchParams{IDs: []uuid.UUID{older.ID, newer.ID, uuid.New()}, Now: used})
	noErr(t, err, "touching")
	eq(t, n, 2, "notes touched (the unknown id is not)")
	_, err = st.NoteTouch(ctx, &store.NoteTouchParams{IDs: []uuid.UUID{older.ID}, Uses: 3, Now: used.Add(-time.Minute)})
	noErr(t, err, "touching with a count, at an earlier time")
	got, err := st.NoteGet(ctx, older.ID)
	noErr(t, err, "reading the touched note")
	eq(t, got.Uses, 4, "uses counted")
	timePtrEq(t, got.LastUsedAt, used, "the last use stays the latest")

	noErr(t, st.NoteRescore(ctx, &store.NoteRescoreParams{ID: older.ID, Relevance: 0.25}), "rescoring")
	errIs(t, st.NoteRescore(ctx, &store.NoteRescoreParams{ID: uuid.New(), Relevance: 0.5}), store.ErrNotFound, "rescoring a missing note")

	at := clk.Advance(time.Hour)
	arch, err := st.NoteArchive(ctx, &store.NoteArchiveParams{ID: older.ID, SupersededBy: &newer.ID, Now: at})
	noErr(t, err, "archiving the older note, superseded by the newer")
	timePtrEq(t, arch.ArchivedAt, at, "archived_at")
	eq(t, arch.Relevance, 0.25, "relevance kept")
	nw, err := st.NoteGet(ctx, newer.ID)
	noErr(t, err, "reading the newer note")
	uuidPtrEq(t, nw.Supersedes, older.ID, "the newer note links the older")
	isTrue(t, nw.ArchivedAt == nil, "the newer note stays active")
	again, err := st.NoteArchive(ctx, &store.NoteArchiveParams{ID: older.ID, Now: clk.Advance(time.Hour)})
	noErr(t, err, "archiving again")
	timePtrEq(t, again.ArchivedAt, at, "archived_at keeps the first time")

	_, err = st.NoteArchive(ctx, &store.NoteArchiveParams{ID: uuid.New()})
	errIs(t, err, store.ErrNotFound, "archiving a missing note")
	missing := uuid.New()
	_, err = st.NoteArchive(ctx, &store.NoteArchiveParams{ID: newer.ID, SupersededBy: &missing})
	errIs(t, err, store.ErrNotFound, "archiving under a missing superseding note")
	_, err = st.NoteArchive(ctx, &store.NoteArchiveParams{ID: newer.ID, SupersededBy: &newer.ID})
	errIs(t, err, store.ErrInvalid, "a note superseding itself")
}

func (s suite) testNoteList(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	conv := newConversation(t, st, clk)
	var all []*store.Note
	for i := range 5 {
		all = append(all, createNote(t, st, store.NoteCreateParams{Agent: "atlas", Family: "travel", Text: fmt.Sprintf("note %d", i), Now: clk.Now()}))
	}
	createNote(t, st, store.NoteCreateParams{Agent: "ledger", Family: "finance", Text: "finance note", Now: clk.Now()})
	here := createNote(t, st, store.NoteCreateParams{Agent: "atlas", Family: "travel", Scope: store.NoteScopeConversation, ConversationID: &conv.ID, Text: "here", Now: clk.Now()})
	_, err := st.NoteArchive(ctx, &store.NoteArchiveParams{ID: all[1].ID})
	noErr(t, err, "archiving")

	page, err := st.NoteList(ctx, &store.NoteListParams{Family: "travel", Limit: 2})
	noErr(t, err, "listing the first page")
	deepEq(t, noteTexts(page), []string{"note 0", "note 2"}, "the first page of active notes")
	page, err = st.NoteList(ctx, &store.NoteListParams{Family: "travel", After: page[1].ID, Limit: 10})
	noErr(t, err, "listing the next page")
	deepEq(t, noteTexts(page), []string{"note 3", "note 4", "here"}, "the next page")
	page, err = st.NoteList(ctx, &store.NoteListParams{Agent: "atlas", WithArchived: true})
	noErr(t, err, "listing with archived notes")
	eq(t, len(page), 6, "atlas's notes, archived included")
	page, err = st.NoteList(ctx, &store.NoteListParams{ConversationID: &conv.ID})
	noErr(t, err, "listing a conversation's notes")
	eq(t, len(page), 1, "the conversation's notes")
	eq(t, page[0].ID, here.ID, "the conversation's note")
}

// SummarySearch reads the summaries of the agent's other conversations in
// the workspace. Until the log has a summary entry kind, it finds nothing.
func (s suite) testSummarySearch(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	a, err := st.AgentUpsert(ctx, &store.AgentUpsertParams{Name: "atlas", Config: json.RawMessage(`{}`), Now: clk.Now()})
	noErr(t, err, "upserting the agent")
	mkConv := func() *store.Conversation {
		c, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{AgentID: &a.ID, Title: "t", Provider: "scripted", Model: "m", Now: clk.Now()})
		noErr(t, err, "creating a conversation")
		return c
	}
	asking, past, later := mkConv(), mkConv(), mkConv()
	hits, err := st.SummarySearch(ctx, &store.SummarySearchParams{AgentID: a.ID, Exclude: asking.ID, Query: "Lisbon offsite"})
	noErr(t, err, "searching summaries with none written")
	eq(t, len(hits), 0, "summaries found with none written")

	summary := store.EntryKind("summary")
	if !summary.Valid() {
		t.Skip("the log has no summary entry kind yet: nothing else to search")
	}
	for _, w := range []struct {
		conv *store.Conversation
		text string
	}{
		{past, "We planned the Lisbon offsite for May."},
		{later, "The offsite budget was approved."},
		{asking, "This conversation's own Lisbon offsite summary."},
	} {
		_, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: w.conv.ID, Kind: summary, Author: store.SystemAuthor,
			Content: content("%s", w.text), Now: clk.Advance(time.Second)})
		noErr(t, err, "appending a summary")
	}
	hits, err = st.SummarySearch(ctx, &store.SummarySearchParams{AgentID: a.ID, Exclude: asking.ID, Query: "Lisbon offsite"})
	noErr(t, err, "searching summaries")
	eq(t, len(hits), 2, "the other conversations' matching summaries")
	eq(t, hits[0].Text, "We planned the Lisbon offsite for May.", "the summary with the most words first")
	eq(t, hits[0].ConversationID, past.ID, "the summary's conversation")
}
