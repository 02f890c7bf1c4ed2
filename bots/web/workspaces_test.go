package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core/auth/apikey"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// people holds a real personal access token per person, issued by the
// apikey package the way the operator issues them (no workspace list: every
// workspace the person belongs to, where their roles decide).
type people struct {
	srv    *server
	keys   *apikey.Keys
	tokens map[uuid.UUID]string
}

// startWithPeople starts the API with person tokens enabled.
func startWithPeople(t *testing.T, st store.Store) *people {
	t.Helper()
	clk := newClock()
	keys, err := apikey.New(apikey.Options{Store: st, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, st, clk, writeScript(t, echoScript), web.Options{Token: "op", Keys: keys})
	return &people{srv: s, keys: keys, tokens: map[uuid.UUID]string{}}
}

// as calls the API as a person (uuid.Nil for the operator) and checks the
// status.
func (pp *people) as(t *testing.T, person uuid.UUID, method, path, body string, want int, out any) string {
	t.Helper()
	tok := "op"
	if person != uuid.Nil {
		tok = pp.tokens[person]
		if tok == "" {
			is, err := pp.keys.CreatePersonal(context.Background(), person, nil, "test", 0)
			if err != nil {
				t.Fatalf("issuing a token for %s: %v", person, err)
			}
			tok = is.Token
			pp.tokens[person] = tok
		}
	}
	got, raw := pp.srv.call(t, method, path, body, http.Header{"Authorization": {"Bearer " + tok}}, out)
	if got != want {
		t.Fatalf("%s %s %s as %s = %d %s; want %d", method, path, body, person, got, raw, want)
	}
	return raw
}

type wsOut struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Role    string `json:"role"`
	Members []struct {
		Person string `json:"person"`
		Role   string `json:"role"`
	} `json:"members"`
}

func TestWorkspaceRightsThroughTheAPI(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		s := startWithPeople(t, st)
		ana, bo, cy, dee := uuid.New(), uuid.New(), uuid.New(), uuid.New()

		var a, b wsOut
		s.as(t, ana, "POST", "/api/workspaces", `{"name":"A"}`, http.StatusCreated, &a)
		s.as(t, bo, "POST", "/api/workspaces", `{"name":"B"}`, http.StatusCreated, &b)
		if a.Role != "owner" || a.Kind != "team" {
			t.Fatalf("the creator of A: want owner of a team workspace, got %+v", a)
		}
		wsA, wsB := "/api/workspaces/"+a.ID, "/api/workspaces/"+b.ID

		// Ana makes Cy an admin and Dee a member of A.
		s.as(t, ana, "POST", wsA+"/members", fmt.Sprintf(`{"person":%q,"role":"admin"}`, cy), http.StatusCreated, nil)
		s.as(t, cy, "POST", wsA+"/members", fmt.Sprintf(`{"person":%q}`, dee), http.StatusCreated, nil)

		// A conversation in A; Bo (of B only) cannot see it, Dee can.
		var conv struct {
			ID uuid.UUID `json:"id"`
		}
		s.as(t, dee, "POST", "/api/conversations", fmt.Sprintf(`{"workspace":%q}`, a.ID), http.StatusCreated, &conv)
		path := "/api/conversations/" + conv.ID.String()
		s.as(t, dee, "GET", path, "", http.StatusOK, nil)
		s.as(t, ana, "GET", path+"/entries", "", http.StatusOK, nil)
		s.as(t, bo, "GET", path, "", http.StatusNotFound, nil)
		s.as(t, bo, "GET", path+"/entries", "", http.StatusNotFound, nil)
		s.as(t, bo, "POST", path+"/messages", `{"text":"hi"}`, http.StatusNotFound, nil)
		s.as(t, bo, "POST", "/api/conversations", fmt.Sprintf(`{"workspace":%q}`, a.ID), http.StatusNotFound, nil)
		s.as(t, uuid.Nil, "GET", path, "", http.StatusOK, nil) // the operator sees all
		// A person's conversation without a workspace goes to their personal one.
		var mine struct {
			ID uuid.UUID `json:"id"`
		}
		s.as(t, bo, "POST", "/api/conversations", ``, http.StatusCreated, &mine)
		s.as(t, dee, "GET", "/api/conversations/"+mine.ID.String(), "", http.StatusNotFound, nil)
		s.as(t, bo, "GET", "/api/conversations/"+mine.ID.String(), "", http.StatusOK, nil)

		// Members use; admins invite and connect; only the owner changes
		// roles and deletes.
		s.as(t, dee, "POST", wsA+"/members", fmt.Sprintf(`{"person":%q}`, uuid.New()), http.StatusForbidden, nil)
		s.as(t, dee, "POST", wsA+"/bindings", `{"platform":"slack","external_id":"TA"}`, http.StatusForbidden, nil)
		s.as(t, cy, "POST", wsA+"/bindings", `{"platform":"slack","external_id":"TA"}`, http.StatusCreated, nil)
		s.as(t, bo, "POST", wsB+"/bindings", `{"platform":"slack","external_id":"TA"}`, http.StatusConflict, nil)
		s.as(t, cy, "PUT", wsA+"/members/"+dee.String(), `{"role":"admin"}`, http.StatusForbidden, nil)
		s.as(t, cy, "POST", wsA+"/members", fmt.Sprintf(`{"person":%q,"role":"admin"}`, dee), http.StatusForbidden, nil)
		s.as(t, ana, "PUT", wsA+"/members/"+dee.String(), `{"role":"admin"}`, http.StatusOK, nil)
		s.as(t, cy, "DELETE", wsA+"/members/"+dee.String(), ``, http.StatusForbidden, nil) // an admin now: the owner's call
		s.as(t, cy, "DELETE", wsA, ``, http.StatusForbidden, nil)
		s.as(t, bo, "DELETE", wsA, ``, http.StatusNotFound, nil)

		// The owner can never be removed or reassigned, even by the owner.
		raw := s.as(t, ana, "PUT", wsA+"/members/"+ana.String(), `{"role":"admin"}`, http.StatusConflict, nil)
		if !strings.Contains(raw, "can never be removed or reassigned") {
			t.Fatalf("demoting the owner: want the refusal to say why, got %s", raw)
		}
		s.as(t, ana, "DELETE", wsA+"/members/"+ana.String(), ``, http.StatusConflict, nil)
		s.as(t, ana, "POST", wsA+"/members", fmt.Sprintf(`{"person":%q,"role":"owner"}`, cy), http.StatusConflict, nil)

		var got wsOut
		s.as(t, dee, "GET", wsA, "", http.StatusOK, &got)
		if len(got.Members) != 3 {
			t.Fatalf("members of A: want ana, cy and dee, got %+v", got.Members)
		}
		var list struct {
			Workspaces []wsOut `json:"workspaces"`
		}
		s.as(t, cy, "GET", "/api/workspaces", "", http.StatusOK, &list)
		if len(list.Workspaces) != 1 || list.Workspaces[0].ID != a.ID || list.Workspaces[0].Role != "admin" {
			t.Fatalf("cy's workspaces: want A as admin, got %+v", list.Workspaces)
		}

		s.as(t, ana, "DELETE", wsA, ``, http.StatusNoContent, nil)
		s.as(t, dee, "GET", path, "", http.StatusNotFound, nil)
	})
}

func TestDirectoryRefusesAnAgentPinnedToATeam(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		s := startWithPeople(t, st)
		ana := uuid.New()
		var team wsOut
		s.as(t, ana, "POST", "/api/workspaces", `{"name":"Acme"}`, http.StatusCreated, &team)
		// atlas is the operator's (switchboard.yaml): ana cannot pin it.
		s.as(t, ana, "PUT", "/api/agents/atlas/pins", fmt.Sprintf(`{"workspaces":[%q]}`, team.ID), http.StatusForbidden, nil)
		s.as(t, uuid.Nil, "PUT", "/api/agents/atlas/pins", fmt.Sprintf(`{"workspaces":[%q]}`, team.ID), http.StatusOK, nil)
		raw := s.as(t, uuid.Nil, "POST", "/api/agents/atlas/publish", `{}`, http.StatusConflict, nil)
		if !strings.Contains(raw, `pinned to the team workspace \"Acme\"`) || !strings.Contains(raw, "cannot be listed in the public directory") {
			t.Fatalf("publishing a pinned agent: want the refusal to say why, got %s", raw)
		}
		var dir struct {
			Agents []map[string]string `json:"agents"`
		}
		s.as(t, ana, "GET", "/api/directory", "", http.StatusOK, &dir)
		if len(dir.Agents) != 0 {
			t.Fatalf("the directory after the refusal: want it empty, got %v", dir.Agents)
		}
		var seen struct {
			Agents []map[string]string `json:"agents"`
		}
		s.as(t, ana, "GET", "/api/workspaces/"+team.ID+"/agents", "", http.StatusOK, &seen)
		if len(seen.Agents) != 1 || seen.Agents[0]["name"] != "atlas" {
			t.Fatalf("agents of Acme, where atlas is pinned: want atlas, got %v", seen.Agents)
		}
		s.as(t, uuid.New(), "GET", "/api/workspaces/"+team.ID+"/agents", "", http.StatusNotFound, nil)
		s.as(t, uuid.Nil, "PUT", "/api/agents/atlas/pins", `{"workspaces":[]}`, http.StatusOK, nil)
		s.as(t, uuid.Nil, "POST", "/api/agents/atlas/publish", ``, http.StatusOK, nil)
		s.as(t, ana, "GET", "/api/directory", "", http.StatusOK, &dir)
		if len(dir.Agents) != 1 || dir.Agents[0]["name"] != "atlas" {
			t.Fatalf("the directory: want atlas, got %v", dir.Agents)
		}
	})
}
