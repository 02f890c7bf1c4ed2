package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core/auth/apikey"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// startRunTeam starts the API over st with atlas, who leads, and scout,
// who does the steps, a worker that moves runs, and person tokens.
func startRunTeam(t *testing.T, st store.Store) *people {
	t.Helper()
	clk := newClock()
	keys, err := apikey.New(apikey.Options{Store: st, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, echoScript)
	team := []config.Agent{testAgent("atlas", script, true), testAgent("scout", script, false)}
	s := startTeam(t, st, clk, team, true, web.Options{Token: "op", Keys: keys}, nil, nil)
	return &people{srv: s, keys: keys, tokens: map[uuid.UUID]string{}}
}

const twoSteps = `{"goal":"Ship the release","steps":[` +
	`{"id":"find","title":"Find the failing test","agent":"scout"},` +
	`{"id":"tell","title":"Tell the team","agent":"scout","depends_on":["find"]}]}`

// TestStartRunOverTheAPI: POST /api/runs opens a conversation of the
// lead's in the caller's workspace and starts the plan there; the run is
// read back at GET /api/runs/{id} by whoever may use that workspace, and
// its first step starts. A workspace may be named by a Slack team bound
// to it.
func TestStartRunOverTheAPI(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := startRunTeam(t, open(t))
		ana, bo := uuid.New(), uuid.New()
		var a wsOut
		s.as(t, ana, "POST", "/api/workspaces", `{"name":"A"}`, http.StatusCreated, &a)

		var started web.RunJSON
		s.as(t, ana, "POST", "/api/runs", fmt.Sprintf(`{"lead":"atlas","workspace":%q,"title":"Release day","plan":%s}`, a.ID, twoSteps),
			http.StatusCreated, &started)
		if started.ID == uuid.Nil || started.Lead != "atlas" || started.Goal != "Ship the release" || started.Status != "running" ||
			started.Workspace == nil || started.Workspace.String() != a.ID || len(started.Steps) != 2 || started.Steps[0].Key != "find" {
			t.Fatalf("POST /api/runs answered %+v; want a running run of atlas in workspace %s with steps find and tell", started, a.ID)
		}
		path := "/api/runs/" + started.ID.String()
		var got web.RunJSON
		waitFor(t, "the run's first step to start", func() bool {
			s.as(t, ana, "GET", path, "", http.StatusOK, &got)
			return len(got.Steps) == 2 && got.Steps[0].Status != "pending" && got.Steps[0].Conversation != nil
		})
		if got.ID != started.ID || got.Conversation != started.Conversation || got.Steps[0].Agent != "scout" {
			t.Errorf("GET %s = %+v; want the run POST answered, find handed to scout", path, got)
		}

		// The run's conversation is atlas's, titled, in workspace A: ana
		// sees it in her history, bo neither it nor the run.
		var hist struct {
			Conversations []web.ListingJSON `json:"conversations"`
		}
		s.as(t, ana, "GET", "/api/conversations?agent=atlas", "", http.StatusOK, &hist)
		var held *web.ListingJSON
		for i := range hist.Conversations {
			if hist.Conversations[i].ID == started.Conversation {
				held = &hist.Conversations[i]
			}
		}
		if held == nil || held.Title != "Release day" || held.WorkspaceID == nil || held.WorkspaceID.String() != a.ID {
			t.Errorf("the run's conversation in ana's history: %+v; want atlas's, titled, in workspace A", held)
		}
		s.as(t, bo, "GET", path, "", http.StatusNotFound, nil)

		// A Slack team bound to A names A.
		s.as(t, ana, "POST", "/api/workspaces/"+a.ID+"/bindings", `{"platform":"slack","external_id":"T0RUNS"}`, http.StatusCreated, nil)
		var byTeam web.RunJSON
		s.as(t, ana, "POST", "/api/runs", `{"lead":"atlas","workspace":"T0RUNS","plan":`+twoSteps+`}`, http.StatusCreated, &byTeam)
		if byTeam.Workspace == nil || byTeam.Workspace.String() != a.ID {
			t.Errorf("a run started in Slack team T0RUNS: workspace %v, want %s", byTeam.Workspace, a.ID)
		}
	})
}

// TestStartRunRefused: a request that names no lead, an unknown one, no
// plan or an invalid one is refused naming the field, and leaves no
// conversation behind; a caller who may not open a conversation there
// cannot start a run there.
func TestStartRunRefused(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := startRunTeam(t, open(t))
		ana, bo := uuid.New(), uuid.New()
		var a wsOut
		s.as(t, ana, "POST", "/api/workspaces", `{"name":"A"}`, http.StatusCreated, &a)
		conversations := func() int {
			var hist struct {
				Conversations []web.ListingJSON `json:"conversations"`
			}
			s.as(t, uuid.Nil, "GET", "/api/conversations?archived=all&limit=200", "", http.StatusOK, &hist)
			return len(hist.Conversations)
		}
		before := conversations()

		for _, c := range []struct {
			name, body string
			want       int
			says       string
		}{
			{"no lead", `{"plan":` + twoSteps + `}`, 400, "lead: is required"},
			{"unknown lead", `{"lead":"ghost","plan":` + twoSteps + `}`, 400, `lead: no agent named \"ghost\"`},
			{"no plan", `{"lead":"atlas"}`, 400, "plan: is required"},
			{"unknown step agent", `{"lead":"atlas","plan":{"steps":[{"id":"a","title":"A","agent":"ghost"}]}}`, 400, `steps[0].agent: no agent named \"ghost\"`},
			{"step for the lead", `{"lead":"atlas","plan":{"steps":[{"id":"a","title":"A","agent":"atlas"}]}}`, 400, `steps[0].agent: no agent named \"atlas\"`},
			{"cycle", `{"lead":"atlas","plan":{"steps":[{"id":"a","title":"A","agent":"scout","depends_on":["b"]},{"id":"b","title":"B","agent":"scout","depends_on":["a"]}]}}`, 400, "steps[0].depends_on: cycle"},
			{"no steps", `{"lead":"atlas","plan":{"goal":"nothing"}}`, 400, "steps: the plan has no steps"},
			{"unknown plan field", `{"lead":"atlas","plan":{"steps":[],"owner":"me"}}`, 400, `unknown field \"owner\"`},
			{"unknown workspace", `{"lead":"atlas","workspace":"T0NOWHERE","plan":` + twoSteps + `}`, 404, `workspace \"T0NOWHERE\"`},
		} {
			got, raw := s.srv.call(t, "POST", "/api/runs", c.body, http.Header{"Authorization": {"Bearer op"}}, nil)
			if got != c.want || !strings.Contains(raw, c.says) {
				t.Errorf("%s: POST /api/runs %s = %d %s; want %d saying %s", c.name, c.body, got, raw, c.want, c.says)
			}
		}
		if after := conversations(); after != before {
			t.Errorf("refused runs left %d conversations behind", after-before)
		}

		// Who may not open a conversation in A may not start a run there.
		body := fmt.Sprintf(`{"lead":"atlas","workspace":%q,"plan":%s}`, a.ID, twoSteps)
		if got, raw := s.srv.call(t, "POST", "/api/runs", body, nil, nil); got != http.StatusUnauthorized {
			t.Errorf("without a credential: %d %s; want 401", got, raw)
		}
		s.as(t, bo, "POST", "/api/runs", body, http.StatusNotFound, nil)
		var key struct {
			Token string `json:"token"`
		}
		s.as(t, uuid.Nil, "POST", "/api/keys", `{"agent":"scout"}`, http.StatusCreated, &key)
		var session struct {
			Token string `json:"token"`
		}
		if got, raw := s.srv.call(t, "POST", "/api/auth/token", "{}", http.Header{"Authorization": {"Bearer " + key.Token}}, &session); got != http.StatusCreated {
			t.Fatalf("exchanging scout's key: %d %s", got, raw)
		}
		if got, raw := s.srv.call(t, "POST", "/api/runs", `{"lead":"atlas","plan":`+twoSteps+`}`, http.Header{"Authorization": {"Bearer " + session.Token}}, nil); got != http.StatusForbidden {
			t.Errorf("scout's session starting a run led by atlas: %d %s; want 403", got, raw)
		}
		if after := conversations(); after != before {
			t.Errorf("refused callers left %d conversations behind", after-before)
		}
	})
}
