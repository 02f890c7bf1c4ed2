package web_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// TestRunsAreScopedToTheirWorkspace: a run is read, listed and acted on
// only by whoever may use the conversation it came from.
func TestRunsAreScopedToTheirWorkspace(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		s := startWithPeople(t, st)
		ana, bo := uuid.New(), uuid.New()
		var a wsOut
		s.as(t, ana, "POST", "/api/workspaces", `{"name":"A"}`, http.StatusCreated, &a)
		var conv struct {
			ID uuid.UUID `json:"id"`
		}
		s.as(t, ana, "POST", "/api/conversations", fmt.Sprintf(`{"workspace":%q}`, a.ID), http.StatusCreated, &conv)
		ws := uuid.MustParse(a.ID)
		r, err := st.RunCreate(context.Background(), &store.RunCreateParams{
			ConversationID: conv.ID, WorkspaceID: &ws, LeadAgent: "lead", Goal: "ship",
			Steps: []store.RunStepSpec{{Key: "a", Title: "A", Agent: "scout", Class: "default"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.RunEventAppend(context.Background(), &store.RunEventAppendParams{RunID: r.ID, Kind: "created", Status: "running"}); err != nil {
			t.Fatal(err)
		}
		path := "/api/runs/" + r.ID.String()

		type list struct {
			Runs []struct {
				ID string `json:"id"`
			} `json:"runs"`
		}
		var mine, theirs, all list
		s.as(t, ana, "GET", "/api/runs", "", http.StatusOK, &mine)
		s.as(t, bo, "GET", "/api/runs", "", http.StatusOK, &theirs)
		s.as(t, uuid.Nil, "GET", "/api/runs?status=running", "", http.StatusOK, &all)
		if len(mine.Runs) != 1 || mine.Runs[0].ID != r.ID.String() || len(theirs.Runs) != 0 || len(all.Runs) != 1 {
			t.Fatalf("lists: ana %+v, bo %+v, operator %+v; want the run for ana and the operator only", mine, theirs, all)
		}
		var one struct {
			Steps []struct {
				Key string `json:"key"`
			} `json:"steps"`
		}
		s.as(t, ana, "GET", path, "", http.StatusOK, &one)
		if len(one.Steps) != 1 || one.Steps[0].Key != "a" {
			t.Errorf("run as ana: %+v", one)
		}
		var evs struct {
			Events []struct {
				Kind string `json:"kind"`
			} `json:"events"`
		}
		s.as(t, ana, "GET", path+"/events", "", http.StatusOK, &evs)
		if len(evs.Events) != 1 || evs.Events[0].Kind != "created" {
			t.Errorf("events as ana: %+v", evs)
		}
		s.as(t, bo, "GET", path, "", http.StatusNotFound, nil)
		s.as(t, bo, "GET", path+"/events", "", http.StatusNotFound, nil)
		s.as(t, bo, "POST", path+"/cancel", `{}`, http.StatusNotFound, nil)
		s.as(t, bo, "POST", path+"/retry", `{}`, http.StatusNotFound, nil)
		s.as(t, ana, "GET", "/api/runs/"+uuid.NewString(), "", http.StatusNotFound, nil)
		s.as(t, ana, "GET", "/api/runs/nope", "", http.StatusBadRequest, nil)
		s.as(t, ana, "GET", "/api/runs?status=sleeping", "", http.StatusBadRequest, nil)
	})
}
