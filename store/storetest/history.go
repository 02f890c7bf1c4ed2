package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
)

func (s suite) historyTests() []namedTest {
	return []namedTest{
		{"SearchScopedByWorkspace", s.testHistoryScope},
		{"SearchFiltersAndSorts", s.testHistorySearch},
		{"ArchiveAndFolders", s.testHistoryFiling},
		{"DeleteForkLowersChildCount", s.testHistoryDelete},
		{"ArtifactVersionsAndComments", s.testArtifactVersions},
		{"ArtifactListScoped", s.testArtifactList},
	}
}

// titled makes a conversation with a title in a workspace (nil: none).
func titled(t *testing.T, st store.Store, clk *clock, title string, ws *uuid.UUID) *store.Conversation {
	t.Helper()
	c, err := st.ConversationCreate(ctxFor(t), &store.ConversationCreateParams{Title: title, Now: clk.Advance(time.Second)})
	noErr(t, err, "creating conversation %q", title)
	if ws != nil {
		noErr(t, st.ConversationWorkspaceSet(ctxFor(t), &store.ConversationWorkspaceSetParams{ConversationID: c.ID, WorkspaceID: *ws}), "putting %q in a workspace", title)
	}
	return c
}

func say(t *testing.T, st store.Store, clk *clock, conv uuid.UUID, kind store.EntryKind, text string) {
	t.Helper()
	_, err := st.EntryAppend(ctxFor(t), &store.EntryAppendParams{ConversationID: conv, Kind: kind, Author: "user:u1", Content: content("%s", text), Now: clk.Advance(time.Second)})
	noErr(t, err, "appending %q", text)
}

func search(t *testing.T, st store.Store, p store.ConversationSearchParams) []uuid.UUID {
	t.Helper()
	ls, err := st.ConversationSearch(ctxFor(t), &p)
	noErr(t, err, "searching conversations %+v", p)
	ids := make([]uuid.UUID, len(ls))
	for i, l := range ls {
		ids[i] = l.Conversation.ID
	}
	return ids
}

func idsEq(t *testing.T, got []uuid.UUID, want []uuid.UUID, what string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: want %d conversations %v, got %d %v", what, len(want), want, len(got), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: want %v, got %v", what, want, got)
		}
	}
}

func (s suite) testHistoryScope(t *testing.T) {
	st := s.newStore(t)
	clk := newClock()
	a := newTeam(t, st, clk, "a", uuid.New()).ID
	b := newTeam(t, st, clk, "b", uuid.New()).ID
	inA := titled(t, st, clk, "in a", &a)
	inB := titled(t, st, clk, "in b", &b)
	none := titled(t, st, clk, "in none", nil)

	idsEq(t, search(t, st, store.ConversationSearchParams{Visibility: store.Visibility{Workspaces: []uuid.UUID{a}}}), []uuid.UUID{inA.ID}, "a member of a")
	idsEq(t, search(t, st, store.ConversationSearchParams{Visibility: store.Visibility{Workspaces: []uuid.UUID{a, b}}}), []uuid.UUID{inB.ID, inA.ID}, "a member of a and b, last activity first")
	idsEq(t, search(t, st, store.ConversationSearchParams{Visibility: store.Visibility{}}), nil, "a person of no workspace")
	idsEq(t, search(t, st, store.ConversationSearchParams{Visibility: store.Visibility{Workspaces: []uuid.UUID{uuid.New()}}}), nil, "a member of another workspace")
	idsEq(t, search(t, st, store.ConversationSearchParams{Visibility: store.Visibility{All: true}}), []uuid.UUID{none.ID, inB.ID, inA.ID}, "the operator")

	// Artifacts follow their conversation.
	_, err := st.ArtifactCreate(ctxFor(t), &store.ArtifactCreateParams{ConversationID: inB.ID, Kind: store.ArtifactDocument, Title: "plan", Content: "x", Now: clk.Now()})
	noErr(t, err, "creating an artifact in b")
	arts, err := st.ArtifactList(ctxFor(t), &store.ArtifactListParams{Visibility: store.Visibility{Workspaces: []uuid.UUID{a}}})
	noErr(t, err, "listing artifacts as a member of a")
	eq(t, len(arts), 0, "artifacts of b seen by a member of a")
}

func (s suite) testHistorySearch(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	all := store.Visibility{All: true}
	agent, err := st.AgentUpsert(ctx, &store.AgentUpsertParams{Name: "atlas", Config: []byte(`{}`), Now: clk.Now()})
	noErr(t, err, "adding an agent")

	zebra := titled(t, st, clk, "Zebra budget", nil)
	apple, err := st.ConversationCreate(ctx, &store.ConversationCreateParams{Title: "apple plans", AgentID: &agent.ID, Now: clk.Advance(time.Second)})
	noErr(t, err, "creating a conversation of atlas")
	mango := titled(t, st, clk, "Mango", nil)
	_, err = st.BindingEnsure(ctx, &store.BindingEnsureParams{
		Place:        store.Place{Platform: "slack", Workspace: "T1", Channel: "C1", Thread: "1.0"},
		Conversation: store.ConversationCreateParams{Title: "slack thread", Now: clk.Advance(time.Second)}, Now: clk.Now(),
	})
	noErr(t, err, "binding a slack thread")
	say(t, st, clk, mango.ID, store.EntryUser, "What about the QUARTERLY numbers?")
	say(t, st, clk, zebra.ID, store.EntryToolCall, "quarterly") // not text people wrote or read

	// Title and content, case-insensitively; a tool call's content is not searched.
	idsEq(t, search(t, st, store.ConversationSearchParams{Visibility: all, Query: "quarterly"}), []uuid.UUID{mango.ID}, "searching the content")
	idsEq(t, search(t, st, store.ConversationSearchParams{Visibility: all, Query: "  BUDGET "}), []uuid.UUID{zebra.ID}, "searching the title")
	idsEq(t, search(t, st, store.ConversationSearchParams{Visibility: all, Query: "100%_"}), nil, "a query whose characters are wildcards in LIKE")

	idsEq(t, search(t, st, store.ConversationSearchParams{Visibility: all, AgentID: &agent.ID}), []uuid.UUID{apple.ID}, "the agent filter")
	name, err := st.AgentNameGet(ctx, agent.ID)
	noErr(t, err, "reading the agent's name")
	eq(t, name, "atlas", "the agent's name")
	_, err = st.AgentNameGet(ctx, uuid.New())
	errIs(t, err, store.ErrNotFound, "the name of no agent")
	slack := search(t, st, store.ConversationSearchParams{Visibility: all, Platform: "slack"})
	eq(t, len(slack), 1, "conversations bound to slack")
	ls, err := st.ConversationSearch(ctx, &store.ConversationSearchParams{Visibility: all, Platform: "slack"})
	noErr(t, err, "listing slack conversations")
	eq(t, ls[0].Platform, "slack", "the platform of a slack conversation")
	api := search(t, st, store.ConversationSearchParams{Visibility: all, Platform: store.PlatformNone, Sort: store.SortCreated})
	idsEq(t, api, []uuid.UUID{mango.ID, apple.ID, zebra.ID}, "conversations bound to no platform, newest first")

	// Mango and zebra were written to last; title sort is case-insensitive.
	byTitle := search(t, st, store.ConversationSearchParams{Visibility: all, Platform: store.PlatformNone, Sort: store.SortTitle})
	idsEq(t, byTitle, []uuid.UUID{apple.ID, mango.ID, zebra.ID}, "sorted by title")
	byActivity := search(t, st, store.ConversationSearchParams{Visibility: all, Platform: store.PlatformNone})
	idsEq(t, byActivity, []uuid.UUID{zebra.ID, mango.ID, apple.ID}, "sorted by last activity")

	// Paging.
	page1 := search(t, st, store.ConversationSearchParams{Visibility: all, Sort: store.SortTitle, Limit: 2})
	page2 := search(t, st, store.ConversationSearchParams{Visibility: all, Sort: store.SortTitle, Limit: 2, Offset: 2})
	eq(t, len(page1), 2, "the first page")
	eq(t, len(page2), 2, "the second page")
	isTrue(t, page1[0] == apple.ID && page2[1] == zebra.ID, "pages in title order: %v %v", page1, page2)

	_, err = st.ConversationSearch(ctx, &store.ConversationSearchParams{Visibility: all, Sort: "size"})
	errIs(t, err, store.ErrInvalid, "an unknown sort")
}

func (s suite) testHistoryFiling(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	a := newTeam(t, st, clk, "a", uuid.New()).ID
	b := newTeam(t, st, clk, "b", uuid.New()).ID
	vis := store.Visibility{Workspaces: []uuid.UUID{a}}
	one := titled(t, st, clk, "one", &a)
	two := titled(t, st, clk, "two", &a)

	// Rename and archive.
	at := clk.Advance(time.Minute)
	l, err := st.ConversationFile(ctx, &store.ConversationFileParams{ID: one.ID, Title: ptr("  First  "), Archived: ptr(true), Now: at})
	noErr(t, err, "renaming and archiving")
	eq(t, l.Conversation.Title, "First", "the new title, trimmed")
	timePtrEq(t, l.ArchivedAt, at, "archived at")
	idsEq(t, search(t, st, store.ConversationSearchParams{Visibility: vis}), []uuid.UUID{two.ID}, "archived conversations are not listed by default")
	idsEq(t, search(t, st, store.ConversationSearchParams{Visibility: vis, Archived: ptr(true)}), []uuid.UUID{one.ID}, "only archived")
	eq(t, len(search(t, st, store.ConversationSearchParams{Visibility: vis, WithArchived: true})), 2, "archived and not")
	l, err = st.ConversationFile(ctx, &store.ConversationFileParams{ID: one.ID, Archived: ptr(false), Now: clk.Now()})
	noErr(t, err, "unarchiving")
	isTrue(t, l.ArchivedAt == nil, "unarchived")
	_, err = st.ConversationFile(ctx, &store.ConversationFileParams{ID: one.ID, Title: ptr("  ")})
	errIs(t, err, store.ErrInvalid, "an empty title")

	// Folders: a colour, moves in and out, another workspace's refused.
	red, err := st.FolderCreate(ctx, &store.FolderCreateParams{WorkspaceID: &a, Name: "Red", Color: "#FF0000", Now: clk.Now()})
	noErr(t, err, "creating a folder")
	eq(t, red.Color, "#ff0000", "the colour, lowercased")
	_, err = st.FolderCreate(ctx, &store.FolderCreateParams{WorkspaceID: &a, Name: "bad", Color: "red"})
	errIs(t, err, store.ErrInvalid, "a colour that is not #rrggbb")
	other, err := st.FolderCreate(ctx, &store.FolderCreateParams{WorkspaceID: &b, Name: "B's", Now: clk.Now()})
	noErr(t, err, "creating a folder in b")
	folders, err := st.FolderList(ctx, vis)
	noErr(t, err, "listing a's folders")
	isTrue(t, len(folders) == 1 && folders[0].ID == red.ID, "a's folders are a's only: %v", folders)

	l, err = st.ConversationFile(ctx, &store.ConversationFileParams{ID: two.ID, FolderID: &red.ID, Now: clk.Now()})
	noErr(t, err, "moving to a folder")
	uuidPtrEq(t, l.FolderID, red.ID, "the folder")
	idsEq(t, search(t, st, store.ConversationSearchParams{Visibility: vis, FolderID: &red.ID}), []uuid.UUID{two.ID}, "the folder filter")
	idsEq(t, search(t, st, store.ConversationSearchParams{Visibility: vis, Unfiled: true}), []uuid.UUID{one.ID}, "in no folder")
	_, err = st.ConversationFile(ctx, &store.ConversationFileParams{ID: one.ID, FolderID: &other.ID, Now: clk.Now()})
	errIs(t, err, store.ErrInvalid, "a folder of another workspace")
	_, err = st.ConversationFile(ctx, &store.ConversationFileParams{ID: one.ID, FolderID: ptr(uuid.New()), Now: clk.Now()})
	errIs(t, err, store.ErrNotFound, "a folder that does not exist")

	up, err := st.FolderUpdate(ctx, &store.FolderUpdateParams{ID: red.ID, Name: ptr("Crimson"), Now: clk.Now()})
	noErr(t, err, "renaming a folder")
	isTrue(t, up.Name == "Crimson" && up.Color == "#ff0000", "renamed, colour kept: %+v", up)

	noErr(t, st.FolderDelete(ctx, red.ID), "deleting a folder")
	f, err := st.ConversationFilingGet(ctx, two.ID)
	noErr(t, err, "reading the filing")
	isTrue(t, f.FolderID == nil, "a deleted folder's conversations are in none")
	errIs(t, st.FolderDelete(ctx, red.ID), store.ErrNotFound, "deleting a folder twice")
	_, err = st.ConversationFilingGet(ctx, uuid.New())
	errIs(t, err, store.ErrNotFound, "the filing of no conversation")
}

func (s suite) testHistoryDelete(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	root := newConversation(t, st, clk)
	appendN(t, st, clk, root.ID, 3)
	res, err := st.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: root.ID, ExpectSeq: ptr(int64(2)), Kind: store.EntryUser, Author: "user:u1", Content: content("edited"), Now: clk.Now()})
	noErr(t, err, "forking")
	isTrue(t, res.Forked, "the append forked")
	fork := res.ConversationID
	parent, err := st.ConversationGet(ctx, root.ID)
	noErr(t, err, "reading the parent")
	eq(t, parent.ChildCount, 1, "child count after the fork")

	noErr(t, st.ConversationDelete(ctx, &store.ConversationDeleteParams{ID: fork, Now: clk.Now()}), "deleting the fork")
	parent, err = st.ConversationGet(ctx, root.ID)
	noErr(t, err, "reading the parent")
	eq(t, parent.ChildCount, 0, "child count after deleting the fork")
	forks, err := st.ConversationForks(ctx, root.ID)
	noErr(t, err, "listing forks")
	eq(t, len(forks), 0, "a deleted fork is not listed")
	errIs(t, st.ConversationDelete(ctx, &store.ConversationDeleteParams{ID: fork, Now: clk.Now()}), store.ErrNotFound, "deleting twice")
	parent, err = st.ConversationGet(ctx, root.ID)
	noErr(t, err, "reading the parent")
	eq(t, parent.ChildCount, 0, "a second delete lowers nothing")

	f, err := st.ConversationFilingGet(ctx, fork)
	noErr(t, err, "reading a deleted conversation's filing")
	isTrue(t, f.DeletedAt != nil, "the deletion is recorded")
	idsEq(t, search(t, st, store.ConversationSearchParams{Visibility: store.Visibility{All: true}, WithArchived: true}), []uuid.UUID{root.ID}, "a deleted conversation is not listed")
	// Archived, then deleted: in no listing, whichever the archive filter.
	gone := newConversation(t, st, clk)
	_, err = st.ConversationFile(ctx, &store.ConversationFileParams{ID: gone.ID, Archived: ptr(true), Now: clk.Now()})
	noErr(t, err, "archiving")
	noErr(t, st.ConversationDelete(ctx, &store.ConversationDeleteParams{ID: gone.ID, Now: clk.Now()}), "deleting an archived conversation")
	for _, p := range []store.ConversationSearchParams{{}, {Archived: ptr(true)}, {WithArchived: true}, {Sort: store.SortCreated}, {Archived: ptr(true), Sort: store.SortTitle}} {
		p.Visibility = store.Visibility{All: true}
		want := []uuid.UUID{root.ID}
		if p.Archived != nil {
			want = nil
		}
		idsEq(t, search(t, st, p), want, fmt.Sprintf("a deleted archived conversation, listing %+v", p))
	}
	_, err = st.ConversationFile(ctx, &store.ConversationFileParams{ID: fork, Archived: ptr(true)})
	errIs(t, err, store.ErrNotFound, "filing a deleted conversation")
	errIs(t, st.ConversationDelete(ctx, &store.ConversationDeleteParams{ID: uuid.New()}), store.ErrNotFound, "deleting no conversation")
}

func (s suite) testArtifactVersions(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	conv := newConversation(t, st, clk)
	author := store.AgentAuthor("atlas")

	a, err := st.ArtifactCreate(ctx, &store.ArtifactCreateParams{ConversationID: conv.ID, Kind: store.ArtifactCode, Title: "main.go", Language: "go", Content: "package main\n", Author: author, Now: clk.Now()})
	noErr(t, err, "creating an artifact")
	eq(t, a.Version, 1, "the first version")
	a2, err := st.ArtifactUpdate(ctx, &store.ArtifactUpdateParams{ID: a.ID, Content: "package main\n\nfunc main() {}\n", Author: author, BaseVersion: 1, Now: clk.Advance(time.Second)})
	noErr(t, err, "the first edit")
	eq(t, a2.Version, 2, "after one edit")
	eq(t, a2.Language, "go", "the language carries over")
	_, err = st.ArtifactUpdate(ctx, &store.ArtifactUpdateParams{ID: a.ID, Content: "lost", BaseVersion: 1, Now: clk.Now()})
	errIs(t, err, store.ErrConflict, "an edit made on an old version")
	c, err := st.ArtifactComment(ctx, &store.ArtifactCommentParams{ArtifactID: a.ID, Author: "user:u1", Text: " needs a test ", Now: clk.Advance(time.Second)})
	noErr(t, err, "commenting")
	isTrue(t, c.Version == 2 && c.Text == "needs a test", "the comment sits on the current version: %+v", c)
	a3, err := st.ArtifactUpdate(ctx, &store.ArtifactUpdateParams{ID: a.ID, Title: ptr("cmd/main.go"), Content: "package main\n\nfunc main() { run() }\n", Author: author, Now: clk.Advance(time.Second)})
	noErr(t, err, "the second edit")
	eq(t, a3.Version, 3, "after two edits")

	vs, err := st.ArtifactVersionList(ctx, a.ID)
	noErr(t, err, "listing versions")
	eq(t, len(vs), 3, "versions")
	for i, want := range []string{"package main\n", "package main\n\nfunc main() {}\n", "package main\n\nfunc main() { run() }\n"} {
		v, err := st.ArtifactVersionGet(ctx, &store.ArtifactVersionParams{ID: a.ID, Version: i + 1})
		noErr(t, err, "reading version %d", i+1)
		eq(t, v.Content, want, "the content of version %d", i+1)
		eq(t, vs[i].Version, i+1, "the listed version")
	}
	eq(t, vs[0].Title, "main.go", "version 1 keeps its title")
	eq(t, vs[2].Title, "cmd/main.go", "version 3 has the new title")
	cur, err := st.ArtifactGet(ctx, a.ID)
	noErr(t, err, "reading the artifact")
	isTrue(t, cur.Version == 3 && cur.Content == vs[2].Content && cur.CreatedBy == author, "the artifact is at its newest version: %+v", cur)
	_, err = st.ArtifactVersionGet(ctx, &store.ArtifactVersionParams{ID: a.ID, Version: 4})
	errIs(t, err, store.ErrNotFound, "a version not made")
	cs, err := st.ArtifactCommentList(ctx, a.ID)
	noErr(t, err, "listing comments")
	eq(t, len(cs), 1, "comments")
	_, err = st.ArtifactComment(ctx, &store.ArtifactCommentParams{ArtifactID: a.ID, Version: 9, Text: "x"})
	errIs(t, err, store.ErrNotFound, "a comment on a version not made")

	_, err = st.ArtifactCreate(ctx, &store.ArtifactCreateParams{ConversationID: uuid.New(), Kind: store.ArtifactPage, Title: "x"})
	errIs(t, err, store.ErrNotFound, "an artifact of no conversation")
	_, err = st.ArtifactCreate(ctx, &store.ArtifactCreateParams{ConversationID: conv.ID, Kind: "video", Title: "x"})
	errIs(t, err, store.ErrInvalid, "an unknown kind")
	_, err = st.ArtifactUpdate(ctx, &store.ArtifactUpdateParams{ID: uuid.New(), Content: "x"})
	errIs(t, err, store.ErrNotFound, "updating no artifact")
}

func (s suite) testArtifactList(t *testing.T) {
	st := s.newStore(t)
	ctx := ctxFor(t)
	clk := newClock()
	a := newTeam(t, st, clk, "a", uuid.New()).ID
	one := titled(t, st, clk, "one", &a)
	two := titled(t, st, clk, "two", &a)
	mk := func(conv uuid.UUID, kind store.ArtifactKind, title, body string) *store.Artifact {
		art, err := st.ArtifactCreate(ctx, &store.ArtifactCreateParams{ConversationID: conv, Kind: kind, Title: title, Content: body, Now: clk.Advance(time.Second)})
		noErr(t, err, "creating %q", title)
		return art
	}
	doc := mk(one.ID, store.ArtifactDocument, "Release notes", "All about Falcon")
	code := mk(one.ID, store.ArtifactCode, "script.py", "print('hi')")
	page := mk(two.ID, store.ArtifactPage, "Landing", "<h1>Falcon</h1>")
	vis := store.Visibility{Workspaces: []uuid.UUID{a}}
	list := func(p store.ArtifactListParams) []uuid.UUID {
		p.Visibility = vis
		arts, err := st.ArtifactList(ctx, &p)
		noErr(t, err, "listing artifacts %+v", p)
		ids := make([]uuid.UUID, len(arts))
		for i, x := range arts {
			ids[i] = x.ID
		}
		return ids
	}
	idsEq(t, list(store.ArtifactListParams{}), []uuid.UUID{page.ID, code.ID, doc.ID}, "every artifact, newest first")
	idsEq(t, list(store.ArtifactListParams{Kind: store.ArtifactCode}), []uuid.UUID{code.ID}, "by kind")
	idsEq(t, list(store.ArtifactListParams{ConversationID: &one.ID}), []uuid.UUID{code.ID, doc.ID}, "by conversation")
	idsEq(t, list(store.ArtifactListParams{Query: "falcon"}), []uuid.UUID{page.ID, doc.ID}, "by content")
	idsEq(t, list(store.ArtifactListParams{Query: "RELEASE"}), []uuid.UUID{doc.ID}, "by title")

	noErr(t, st.ConversationDelete(ctx, &store.ConversationDeleteParams{ID: two.ID, Now: clk.Now()}), "deleting a conversation")
	idsEq(t, list(store.ArtifactListParams{}), []uuid.UUID{code.ID, doc.ID}, "a deleted conversation's artifacts are not listed")
}
