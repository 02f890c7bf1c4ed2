package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

type listingOut struct {
	ID         uuid.UUID  `json:"id"`
	Title      string     `json:"title"`
	TitleAuto  bool       `json:"title_auto"`
	Agent      string     `json:"agent"`
	Platform   string     `json:"platform"`
	Archived   bool       `json:"archived"`
	FolderID   *uuid.UUID `json:"folder_id"`
	ChildCount int        `json:"child_count"`
}

type historyOut struct {
	Conversations []listingOut `json:"conversations"`
	NextOffset    *int         `json:"next_offset"`
}

func (pp *people) history(t *testing.T, person uuid.UUID, query string) []uuid.UUID {
	t.Helper()
	var out historyOut
	pp.as(t, person, "GET", "/api/conversations"+query, "", http.StatusOK, &out)
	ids := make([]uuid.UUID, len(out.Conversations))
	for i, c := range out.Conversations {
		ids[i] = c.ID
	}
	return ids
}

func (pp *people) newConv(t *testing.T, person uuid.UUID, ws string) uuid.UUID {
	t.Helper()
	var c struct {
		ID uuid.UUID `json:"id"`
	}
	body := ""
	if ws != "" {
		body = fmt.Sprintf(`{"workspace":%q}`, ws)
	}
	pp.as(t, person, "POST", "/api/conversations", body, http.StatusCreated, &c)
	return c.ID
}

func sameIDs(t *testing.T, got, want []uuid.UUID, what string) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: want %v, got %v", what, want, got)
	}
}

// A person sees the conversations of their workspaces in the history and
// nothing of another's, through every route the page uses.
func TestHistoryListScopedToWorkspaces(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := startWithPeople(t, open(t))
		defer s.srv.stop()
		ana, bo, nobody := uuid.New(), uuid.New(), uuid.New()
		var a wsOut
		s.as(t, ana, "POST", "/api/workspaces", `{"name":"A"}`, http.StatusCreated, &a)
		inA := s.newConv(t, ana, a.ID)
		anaOwn := s.newConv(t, ana, "")
		boOwn := s.newConv(t, bo, "")

		sameIDs(t, s.history(t, ana, ""), []uuid.UUID{anaOwn, inA}, "ana's history")
		sameIDs(t, s.history(t, bo, ""), []uuid.UUID{boOwn}, "bo's history")
		sameIDs(t, s.history(t, nobody, ""), nil, "the history of a person of no workspace")
		sameIDs(t, s.history(t, uuid.Nil, ""), []uuid.UUID{boOwn, anaOwn, inA}, "the operator's history")

		// Bo cannot reach Ana's conversations by id either.
		path := "/api/conversations/" + inA.String()
		s.as(t, bo, "PATCH", path, `{"title":"mine now"}`, http.StatusNotFound, nil)
		s.as(t, bo, "DELETE", path, ``, http.StatusNotFound, nil)
		s.as(t, bo, "GET", path+"/export", ``, http.StatusNotFound, nil)
		s.as(t, bo, "POST", "/api/conversations/bulk", fmt.Sprintf(`{"ids":[%q,%q],"action":"delete"}`, boOwn, inA), http.StatusNotFound, nil)
		sameIDs(t, s.history(t, bo, ""), []uuid.UUID{boOwn}, "a refused bulk delete deleted nothing")

		// Folders are per workspace too.
		var f struct {
			ID uuid.UUID `json:"id"`
		}
		s.as(t, ana, "POST", "/api/folders", fmt.Sprintf(`{"name":"Plans","color":"#3366ff","workspace":%q}`, a.ID), http.StatusCreated, &f)
		s.as(t, bo, "PATCH", "/api/folders/"+f.ID.String(), `{"name":"x"}`, http.StatusNotFound, nil)
		var bos struct {
			Folders []json.RawMessage `json:"folders"`
		}
		s.as(t, bo, "GET", "/api/folders", "", http.StatusOK, &bos)
		if len(bos.Folders) != 0 {
			t.Fatalf("bo sees folders of A: %s", bos.Folders)
		}
		// Bo's conversation cannot go into A's folder.
		s.as(t, bo, "PATCH", "/api/conversations/"+boOwn.String(), fmt.Sprintf(`{"folder":%q}`, f.ID), http.StatusBadRequest, nil)
	})
}

func TestHistorySearchArchiveAndFolders(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		s := startWithPeople(t, st)
		defer s.srv.stop()
		ana := uuid.New()
		one, two, three := s.newConv(t, ana, ""), s.newConv(t, ana, ""), s.newConv(t, ana, "")
		base := "/api/conversations/"

		// Rename inline; search by title and by what was said.
		var l listingOut
		s.as(t, ana, "PATCH", base+one.String(), `{"title":"Budget review"}`, http.StatusOK, &l)
		if l.Title != "Budget review" || l.Agent != "atlas" || l.Platform != store.PlatformNone {
			t.Fatalf("the renamed listing: %+v", l)
		}
		s.as(t, ana, "PATCH", base+two.String(), `{"title":"Trip"}`, http.StatusOK, nil)
		s.as(t, ana, "PATCH", base+three.String(), `{"title":"Another"}`, http.StatusOK, nil)
		s.as(t, ana, "POST", base+two.String()+"/messages", `{"text":"Where do falcons nest?"}`, http.StatusAccepted, nil)
		waitStatus(t, st, two, store.ConversationIdle)
		sameIDs(t, s.history(t, ana, "?q=BUDGET"), []uuid.UUID{one}, "search by title")
		sameIDs(t, s.history(t, ana, "?q=falcons"), []uuid.UUID{two}, "search by content")
		sameIDs(t, s.history(t, ana, "?q=falcons&agent=atlas"), []uuid.UUID{two}, "search and the agent filter")
		sameIDs(t, s.history(t, ana, "?agent=nobody"), nil, "an agent that does not exist")
		sameIDs(t, s.history(t, ana, "?platform=slack"), nil, "no slack conversations")
		sameIDs(t, s.history(t, ana, "?sort=title"), []uuid.UUID{three, one, two}, "sorted by title")
		sameIDs(t, s.history(t, ana, "?sort=created"), []uuid.UUID{three, two, one}, "newest first")
		// (Last activity is ordered in the store's conformance tests: this
		// server's clock stands still.)
		var page historyOut
		s.as(t, ana, "GET", "/api/conversations?sort=title&limit=2", "", http.StatusOK, &page)
		if len(page.Conversations) != 2 || page.NextOffset == nil || *page.NextOffset != 2 {
			t.Fatalf("the first page of two: %+v", page)
		}
		sameIDs(t, s.history(t, ana, "?sort=title&limit=2&offset=2"), []uuid.UUID{two}, "the second page")
		sameIDs(t, s.history(t, ana, "?sort=title&limit=2&before=2"), []uuid.UUID{two}, "the second page by the next cursor")
		s.as(t, ana, "GET", "/api/conversations?sort=size", "", http.StatusBadRequest, nil)

		// Archive and unarchive.
		s.as(t, ana, "PATCH", base+one.String(), `{"archived":true}`, http.StatusOK, &l)
		if !l.Archived {
			t.Fatalf("archiving: %+v", l)
		}
		sameIDs(t, s.history(t, ana, "?sort=title"), []uuid.UUID{three, two}, "archived ones are hidden")
		sameIDs(t, s.history(t, ana, "?archived=true"), []uuid.UUID{one}, "only archived")
		sameIDs(t, s.history(t, ana, "?archived=all&sort=title"), []uuid.UUID{three, one, two}, "all")
		s.as(t, ana, "POST", base+"bulk", fmt.Sprintf(`{"ids":[%q],"action":"unarchive"}`, one), http.StatusOK, nil)
		sameIDs(t, s.history(t, ana, "?archived=true"), nil, "unarchived in bulk")

		// Colour folders; moves by PATCH (a drop) and in bulk.
		var red, blue struct {
			ID    uuid.UUID `json:"id"`
			Color string    `json:"color"`
		}
		s.as(t, ana, "POST", "/api/folders", `{"name":"Red","color":"#FF0000"}`, http.StatusCreated, &red)
		s.as(t, ana, "POST", "/api/folders", `{"name":"Blue","color":"#0000ff"}`, http.StatusCreated, &blue)
		s.as(t, ana, "POST", "/api/folders", `{"name":"Bad","color":"red"}`, http.StatusBadRequest, nil)
		if red.Color != "#ff0000" {
			t.Fatalf("the folder's colour: %q", red.Color)
		}
		s.as(t, ana, "PATCH", base+one.String(), fmt.Sprintf(`{"folder":%q}`, red.ID), http.StatusOK, &l)
		if l.FolderID == nil || *l.FolderID != red.ID {
			t.Fatalf("moved to red: %+v", l)
		}
		s.as(t, ana, "POST", base+"bulk", fmt.Sprintf(`{"ids":[%q,%q],"action":"move","folder":%q}`, two, three, blue.ID), http.StatusOK, nil)
		sameIDs(t, s.history(t, ana, "?folder="+red.ID.String()), []uuid.UUID{one}, "in red")
		sameIDs(t, s.history(t, ana, "?folder="+blue.ID.String()+"&sort=title"), []uuid.UUID{three, two}, "in blue")
		s.as(t, ana, "PATCH", base+two.String(), `{"folder":null}`, http.StatusOK, nil)
		sameIDs(t, s.history(t, ana, "?folder=none"), []uuid.UUID{two}, "in no folder")
		s.as(t, ana, "PATCH", base+two.String(), fmt.Sprintf(`{"folder":%q}`, uuid.New()), http.StatusNotFound, nil)
		s.as(t, ana, "PATCH", "/api/folders/"+blue.ID.String(), `{"color":"#00ff00"}`, http.StatusOK, nil)
		s.as(t, ana, "DELETE", "/api/folders/"+blue.ID.String(), ``, http.StatusNoContent, nil)
		sameIDs(t, s.history(t, ana, "?folder=none&sort=title"), []uuid.UUID{three, two}, "a deleted folder's conversations are in none")
	})
}

// exportNormalized is an export with the ids an import changes blanked.
func exportNormalized(t *testing.T, s *people, person, conv uuid.UUID) (map[string]any, string) {
	t.Helper()
	raw := s.as(t, person, "GET", "/api/conversations/"+conv.String()+"/export?format=json", "", http.StatusOK, nil)
	var doc map[string]any
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		t.Fatalf("decoding the export: %v", err)
	}
	c := doc["conversation"].(map[string]any)
	c["id"] = ""
	for _, e := range doc["entries"].([]any) {
		e.(map[string]any)["id"] = ""
	}
	return doc, raw
}

func TestHistoryExportImportIdentical(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		s := startWithPeople(t, st)
		defer s.srv.stop()
		ana := uuid.New()
		conv := s.newConv(t, ana, "")
		base := "/api/conversations/" + conv.String()
		s.as(t, ana, "PATCH", base, `{"title":"Round trip","archived":true}`, http.StatusOK, nil)
		for _, text := range []string{"first question", "second — with ünïcode and \"quotes\""} {
			s.as(t, ana, "POST", base+"/messages", fmt.Sprintf(`{"text":%q}`, text), http.StatusAccepted, nil)
			waitStatus(t, st, conv, store.ConversationIdle)
		}
		before, raw := exportNormalized(t, s, ana, conv)
		if n := len(before["entries"].([]any)); n != 4 {
			t.Fatalf("the export holds %d entries; want 4 (two questions, two replies)", n)
		}

		var imported listingOut
		s.as(t, ana, "POST", "/api/conversations/import", raw, http.StatusCreated, &imported)
		if imported.ID == conv || !imported.Archived || imported.Title != "Round trip" {
			t.Fatalf("the imported conversation: %+v", imported)
		}
		after, _ := exportNormalized(t, s, ana, imported.ID)
		if !reflect.DeepEqual(before, after) {
			b, _ := json.MarshalIndent(before, "", " ")
			a, _ := json.MarshalIndent(after, "", " ")
			t.Fatalf("export → import → export changed more than the ids:\nbefore %s\nafter  %s", b, a)
		}
		// The import is the importer's: another person does not see it.
		sameIDs(t, s.history(t, uuid.New(), "?archived=all"), nil, "another person's history")

		// Markdown: readable, and its text comes back.
		md := s.as(t, ana, "GET", base+"/export?format=md", "", http.StatusOK, nil)
		if !strings.HasPrefix(md, "# Round trip\n") || !strings.Contains(md, "second — with ünïcode") {
			t.Fatalf("the Markdown export:\n%s", md)
		}
		body, _ := json.Marshal(map[string]string{"markdown": md})
		var fromMD listingOut
		s.as(t, ana, "POST", "/api/conversations/import", string(body), http.StatusCreated, &fromMD)
		var es struct {
			Entries []entryOut `json:"entries"`
		}
		s.as(t, ana, "GET", "/api/conversations/"+fromMD.ID.String()+"/entries", "", http.StatusOK, &es)
		if len(es.Entries) != 4 || es.Entries[2].text(t) != "second — with ünïcode and \"quotes\"" {
			t.Fatalf("the Markdown import's entries: %+v", es.Entries)
		}
		s.as(t, ana, "POST", "/api/conversations/import", `{"format":"other/v9","conversation":{"title":"x"},"entries":[]}`, http.StatusBadRequest, nil)
		// Bulk export names every conversation asked for.
		var bulk struct {
			Conversations []json.RawMessage `json:"conversations"`
		}
		s.as(t, ana, "POST", "/api/conversations/bulk", fmt.Sprintf(`{"ids":[%q,%q],"action":"export"}`, conv, imported.ID), http.StatusOK, &bulk)
		if len(bulk.Conversations) != 2 {
			t.Fatalf("a bulk export of two: %d", len(bulk.Conversations))
		}
	})
}

func TestHistoryBulkDeleteLowersChildCount(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		s := startWithPeople(t, st)
		defer s.srv.stop()
		ana := uuid.New()
		root := s.newConv(t, ana, "")
		base := "/api/conversations/" + root.String()
		s.as(t, ana, "POST", base+"/messages", `{"text":"one"}`, http.StatusAccepted, nil)
		waitStatus(t, st, root, store.ConversationIdle)
		var fork struct {
			ConversationID uuid.UUID `json:"conversation_id"`
		}
		s.as(t, ana, "POST", base+"/fork", `{"seq":1,"content":"one, edited"}`, http.StatusCreated, &fork)
		waitStatus(t, st, fork.ConversationID, store.ConversationIdle)
		var c conversationOut
		s.as(t, ana, "GET", base, "", http.StatusOK, &c)
		if c.ChildCount != 1 || len(c.Forks) != 1 {
			t.Fatalf("after the fork: child count %d, forks %v", c.ChildCount, c.Forks)
		}
		other := s.newConv(t, ana, "")

		s.as(t, ana, "POST", "/api/conversations/bulk", fmt.Sprintf(`{"ids":[%q,%q],"action":"delete"}`, fork.ConversationID, other), http.StatusOK, nil)
		s.as(t, ana, "GET", base, "", http.StatusOK, &c)
		if c.ChildCount != 0 || len(c.Forks) != 0 {
			t.Fatalf("after deleting the fork: child count %d, forks %v", c.ChildCount, c.Forks)
		}
		s.as(t, ana, "GET", "/api/conversations/"+fork.ConversationID.String(), "", http.StatusNotFound, nil)
		sameIDs(t, s.history(t, ana, "?archived=all"), []uuid.UUID{root}, "the history after the bulk delete")
		s.as(t, ana, "DELETE", "/api/conversations/"+fork.ConversationID.String(), "", http.StatusNotFound, nil)
		s.as(t, ana, "DELETE", base, "", http.StatusNoContent, nil)
		sameIDs(t, s.history(t, ana, "?archived=all"), nil, "the history after deleting the root")
	})
}

// A fork made by editing the first message through the API is titled by
// the edited text in the history, and its parent keeps its own; a fork of
// a later message keeps the parent's title, and so does every fork of a
// renamed conversation.
func TestHistoryForkTitledByEditedFirstMessage(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		s := startWithPeople(t, st)
		defer s.srv.stop()
		ana := uuid.New()
		listed := func() map[uuid.UUID]listingOut {
			t.Helper()
			var out historyOut
			s.as(t, ana, "GET", "/api/conversations", "", http.StatusOK, &out)
			m := map[uuid.UUID]listingOut{}
			for _, c := range out.Conversations {
				m[c.ID] = c
			}
			return m
		}
		say := func(conv uuid.UUID, text string) {
			t.Helper()
			s.as(t, ana, "POST", "/api/conversations/"+conv.String()+"/messages", fmt.Sprintf(`{"text":%q}`, text), http.StatusAccepted, nil)
			waitStatus(t, st, conv, store.ConversationIdle)
		}
		fork := func(conv uuid.UUID, seq int64, text string) uuid.UUID {
			t.Helper()
			var f struct {
				ConversationID uuid.UUID `json:"conversation_id"`
				Forked         bool      `json:"forked"`
			}
			s.as(t, ana, "POST", "/api/conversations/"+conv.String()+"/fork", fmt.Sprintf(`{"seq":%d,"content":%q}`, seq, text), http.StatusCreated, &f)
			if !f.Forked {
				t.Fatalf("an edit of seq %d of %s did not fork", seq, conv)
			}
			waitStatus(t, st, f.ConversationID, store.ConversationIdle)
			return f.ConversationID
		}
		titleIs := func(l map[uuid.UUID]listingOut, id uuid.UUID, want string, auto bool, what string) {
			t.Helper()
			c, ok := l[id]
			if !ok {
				t.Fatalf("%s: %s is not in the history", what, id)
			}
			if c.Title != want || c.TitleAuto != auto {
				t.Fatalf("%s: want title %q (automatic %v), got %q (automatic %v)", what, want, auto, c.Title, c.TitleAuto)
			}
		}

		root := s.newConv(t, ana, "")
		say(root, "plan the launch")
		say(root, "and the budget")
		edited := fork(root, 1, "plan the party")
		// The echo agent answers each message: seq 3 is the second message.
		later := fork(root, 3, "and the staff")
		l := listed()
		titleIs(l, root, "plan the launch", true, "the parent after its forks")
		titleIs(l, edited, "plan the party", true, "the fork of the edited first message")
		titleIs(l, later, "plan the launch", true, "the fork of an edited later message")

		renamed := s.newConv(t, ana, "")
		say(renamed, "draft the memo")
		s.as(t, ana, "PATCH", "/api/conversations/"+renamed.String(), `{"title":"Memo"}`, http.StatusOK, nil)
		kept := fork(renamed, 1, "draft the letter")
		l = listed()
		titleIs(l, renamed, "Memo", false, "the renamed parent after its fork")
		titleIs(l, kept, "Memo", false, "the fork of a renamed conversation")
	})
}
