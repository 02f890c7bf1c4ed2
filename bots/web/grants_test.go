package web_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core/auth/apikey"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// GET /api/grants and DELETE /api/grants/{id} are the operator's: without
// the token, or with a person's token, they are refused; with it a grant is
// listed (with its workspace), revoked (the guard no longer finds it, the
// list no longer shows it), and an unknown or malformed id is refused.
func TestGrantsListAndRevokeByTheOperator(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		ctx := context.Background()
		clk := newClock()
		keys, err := apikey.New(apikey.Options{Store: st, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		s := start(t, st, clk, writeScript(t, echoScript), web.Options{Token: "op-token", Keys: keys})
		ws, err := st.WorkspaceCreate(ctx, &store.WorkspaceCreateParams{Name: "Acme Ops", Kind: store.WorkspaceTeam, OwnerPersonID: uuid.New(), Now: clk.Now()})
		if err != nil {
			t.Fatal(err)
		}
		g, err := st.GrantCreate(ctx, &store.GrantCreateParams{Agent: "atlas", Tool: "send_email", Workspace: "T0ACME", WorkspaceID: &ws.ID, GrantedBy: "U0ALICE", Now: clk.Now()})
		if err != nil {
			t.Fatal(err)
		}
		pat, err := keys.CreatePersonal(ctx, uuid.New(), []uuid.UUID{ws.ID}, "laptop", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		path := "/api/grants/" + g.ID.String()

		if got, raw := s.call(t, http.MethodDelete, path, "", http.Header{"Content-Type": {"application/json"}}, nil); got != http.StatusUnauthorized {
			t.Fatalf("DELETE %s without the token = %d %s; want 401", path, got, raw)
		}
		wantStatus(t, s, http.MethodGet, "/api/grants", pat.Token, "", http.StatusForbidden, "only the operator")
		wantStatus(t, s, http.MethodDelete, path, pat.Token, "", http.StatusForbidden, "only the operator")
		if _, err := st.GrantFind(ctx, &store.GrantFindParams{Agent: "atlas", Tool: "send_email", WorkspaceID: &ws.ID}); err != nil {
			t.Fatalf("a refused DELETE revoked the grant: %v", err)
		}

		listed := wantStatus(t, s, http.MethodGet, "/api/grants?workspace_id="+ws.ID.String(), "op-token", "", http.StatusOK, g.ID.String())
		if gs, _ := listed["grants"].([]any); len(gs) != 1 || gs[0].(map[string]any)["workspace_name"] != "Acme Ops" {
			t.Fatalf("GET /api/grants?workspace_id = %v; want the one grant with its workspace's name", listed)
		}
		revoked := wantStatus(t, s, http.MethodDelete, path, "op-token", "", http.StatusOK, g.ID.String())
		if revoked["revoked_at"] == nil {
			t.Errorf("DELETE %s = %v; want the grant with its revocation time", path, revoked)
		}
		if _, err := st.GrantFind(ctx, &store.GrantFindParams{Agent: "atlas", Tool: "send_email", WorkspaceID: &ws.ID}); err == nil {
			t.Error("the guard still finds the revoked grant")
		}
		if after := wantStatus(t, s, http.MethodGet, "/api/grants", "op-token", "", http.StatusOK, ""); len(after["grants"].([]any)) != 0 {
			t.Errorf("GET /api/grants after the revoke = %v; want none", after)
		}
		wantStatus(t, s, http.MethodDelete, "/api/grants/"+uuid.NewString(), "op-token", "", http.StatusNotFound, "not found")
		wantStatus(t, s, http.MethodDelete, "/api/grants/nope", "op-token", "", http.StatusBadRequest, "not a UUID")
	})
}
