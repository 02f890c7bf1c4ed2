package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core/artifact"
	"github.com/switchboardhq/switchboard/core/auth/apikey"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// artifactScript makes an artifact, edits it twice and comments on it, on
// cue.
const artifactScript = `
turns:
  - when_last_user_contains: "write it"
    once: true
    tool_calls:
      - {name: artifact_create, input: {kind: code, title: main.go, language: go, content: "package main\n"}}
  - when_last_user_contains: "edit one"
    once: true
    tool_calls:
      - {name: artifact_update, input: {id: main.go, content: "package main\n\nfunc main() {}\n"}}
  - when_last_user_contains: "edit two"
    once: true
    tool_calls:
      - {name: artifact_update, input: {id: main.go, content: "package main\n\nfunc main() { run() }\n", base_version: 2}}
  - when_last_user_contains: "review it"
    once: true
    tool_calls:
      - {name: artifact_comment, input: {id: main.go, text: "run needs a test"}}
  - after_tool: artifact_create
    text: "Made it."
  - after_tool: artifact_update
    text: "Edited."
fallback:
  text: "ok"
`

func TestArtifactEditedTwiceWithACommentThroughTheAPI(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		clk := newClock()
		keys, err := apikey.New(apikey.Options{Store: st, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		srv := startWith(t, st, clk, writeScript(t, artifactScript), web.Options{Token: "op", Keys: keys}, func(r *tool.Registry) {
			arts, err := artifact.New(artifact.Options{Store: st, PublicURL: "https://sb.example.com", Now: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			if err := artifact.RegisterTools(r, arts); err != nil {
				t.Fatal(err)
			}
		})
		defer srv.stop()
		s := &people{srv: srv, keys: keys, tokens: map[uuid.UUID]string{}}
		ana, bo := uuid.New(), uuid.New()
		conv := s.newConv(t, ana, "")
		for _, say := range []string{"write it", "edit one", "edit two", "review it"} {
			s.as(t, ana, "POST", "/api/conversations/"+conv.String()+"/messages", fmt.Sprintf(`{"text":%q}`, say), http.StatusAccepted, nil)
			waitStatus(t, st, conv, store.ConversationIdle)
		}

		var list struct {
			Artifacts []struct {
				ID      uuid.UUID `json:"id"`
				Version int       `json:"version"`
				Kind    string    `json:"kind"`
			} `json:"artifacts"`
		}
		s.as(t, ana, "GET", "/api/artifacts?conversation="+conv.String(), "", http.StatusOK, &list)
		if len(list.Artifacts) != 1 || list.Artifacts[0].Version != 3 || list.Artifacts[0].Kind != "code" {
			t.Fatalf("the conversation's artifacts: %+v", list.Artifacts)
		}
		id := list.Artifacts[0].ID.String()
		s.as(t, ana, "GET", "/api/artifacts?type=page", "", http.StatusOK, &list)
		if len(list.Artifacts) != 0 {
			t.Fatalf("pages: %+v", list.Artifacts)
		}
		s.as(t, ana, "GET", "/api/artifacts?q=RUN()", "", http.StatusOK, &list)
		if len(list.Artifacts) != 1 {
			t.Fatalf("searching the content: %+v", list.Artifacts)
		}

		var got struct {
			Version  int    `json:"version"`
			Content  string `json:"content"`
			Versions []struct {
				Version int    `json:"version"`
				Author  string `json:"author"`
			} `json:"versions"`
			Comments []struct {
				Text    string `json:"text"`
				Version int    `json:"version"`
				Author  string `json:"author"`
			} `json:"comments"`
		}
		s.as(t, ana, "GET", "/api/artifacts/"+id, "", http.StatusOK, &got)
		if got.Version != 3 || len(got.Versions) != 3 || got.Content != "package main\n\nfunc main() { run() }\n" {
			t.Fatalf("the artifact: %+v", got)
		}
		if len(got.Comments) != 1 || got.Comments[0].Text != "run needs a test" || got.Comments[0].Version != 3 || got.Comments[0].Author != "agent:atlas" {
			t.Fatalf("the agent's comment, on the version the edit before it made: %+v", got.Comments)
		}
		want := []string{"package main\n", "package main\n\nfunc main() {}\n", "package main\n\nfunc main() { run() }\n"}
		for n, body := range want {
			var v struct {
				Content string `json:"content"`
			}
			s.as(t, ana, "GET", fmt.Sprintf("/api/artifacts/%s/versions/%d", id, n+1), "", http.StatusOK, &v)
			if v.Content != body {
				t.Fatalf("version %d: %q, want %q", n+1, v.Content, body)
			}
		}
		s.as(t, ana, "GET", "/api/artifacts/"+id+"/versions/4", "", http.StatusNotFound, nil)
		diff := s.as(t, ana, "GET", "/api/artifacts/"+id+"/diff?from=1&to=2", "", http.StatusOK, nil)
		wantDiff := "--- main.go (version 1)\n+++ main.go (version 2)\n@@ -1 +1,3 @@\n package main\n+\n+func main() {}\n"
		if diff != wantDiff {
			t.Fatalf("the diff:\n%s\nwant:\n%s", diff, wantDiff)
		}
		s.as(t, ana, "POST", "/api/artifacts/"+id+"/comments", `{"text":"looks good","version":3}`, http.StatusCreated, nil)
		s.as(t, ana, "GET", "/api/artifacts/"+id, "", http.StatusOK, &got)
		if len(got.Comments) != 2 || got.Comments[1].Text != "looks good" {
			t.Fatalf("comments after the person's: %+v", got.Comments)
		}

		// Exactly the people who see the conversation see its artifact.
		s.as(t, bo, "GET", "/api/artifacts/"+id, "", http.StatusNotFound, nil)
		s.as(t, bo, "GET", "/api/artifacts/"+id+"/versions/1", "", http.StatusNotFound, nil)
		s.as(t, bo, "GET", "/api/artifacts/"+id+"/diff", "", http.StatusNotFound, nil)
		s.as(t, bo, "POST", "/api/artifacts/"+id+"/comments", `{"text":"hi"}`, http.StatusNotFound, nil)
		s.as(t, bo, "GET", "/api/artifacts?conversation="+conv.String(), "", http.StatusNotFound, nil)
		s.as(t, bo, "GET", "/api/artifacts", "", http.StatusOK, &list)
		if len(list.Artifacts) != 0 {
			t.Fatalf("bo sees ana's artifacts: %+v", list.Artifacts)
		}
		s.as(t, uuid.Nil, "GET", "/api/artifacts/"+id, "", http.StatusOK, nil)
		// Deleting the conversation takes the artifact with it.
		s.as(t, ana, "DELETE", "/api/conversations/"+conv.String(), "", http.StatusNoContent, nil)
		s.as(t, ana, "GET", "/api/artifacts/"+id, "", http.StatusNotFound, nil)

		// The file the platform got for each version, from the log.
		es, err := st.EntryList(context.Background(), &store.EntryListParams{ConversationID: conv})
		if err != nil {
			t.Fatal(err)
		}
		files := 0
		for _, e := range es {
			if e.Kind == store.EntryToolResult && len(e.Content) > 0 && containsAll(string(e.Content), `"attachments"`, `main.go`, `https://sb.example.com/?view=artifacts\u0026artifact=`+id) {
				files++
			}
		}
		if files != 3 {
			t.Fatalf("tool results carrying the artifact's file and link: %d, want 3 (a create and two edits)", files)
		}
	})
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
