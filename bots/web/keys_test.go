package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/bots/web"
	"github.com/switchboardhq/switchboard/core/auth/apikey"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// rightsCall is one call of the workspace rights hook.
type rightsCall struct {
	kind      web.PrincipalKind
	person    uuid.UUID
	workspace uuid.UUID
	action    web.Action
}

// rightsHook records what authorize asks and allows managing keys only in
// the workspaces it is given.
type rightsHook struct {
	mu    sync.Mutex
	calls []rightsCall
	allow map[uuid.UUID]bool
}

func (h *rightsHook) authorize(_ context.Context, p *web.Principal, ws uuid.UUID, action web.Action) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, rightsCall{p.Kind, p.PersonID, ws, action})
	if !h.allow[ws] {
		return fmt.Errorf("%w: not an admin of %s", web.ErrForbidden, ws)
	}
	return nil
}

func (h *rightsHook) take() []rightsCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.calls
	h.calls = nil
	return out
}

func bearerHdr(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}

// wantStatus calls and checks the status and that the error says errHas.
func wantStatus(t *testing.T, s *server, method, path, token, body string, want int, errHas string) map[string]any {
	t.Helper()
	got, raw := s.call(t, method, path, body, bearerHdr(token), nil)
	if got != want || !strings.Contains(raw, errHas) {
		t.Fatalf("%s %s %s = %d %s; want %d saying %q", method, path, body, got, raw, want, errHas)
	}
	out := map[string]any{}
	_ = json.Unmarshal([]byte(raw), &out)
	return out
}

func TestPersonalTokenScopedToItsWorkspaces(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		st := open(t)
		clk := newClock()
		keys, err := apikey.New(apikey.Options{Store: st, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		wsA, wsB, wsC := uuid.New(), uuid.New(), uuid.New()
		hook := &rightsHook{allow: map[uuid.UUID]bool{wsA: true}}
		s := start(t, st, clk, writeScript(t, echoScript), web.Options{Token: "op-token", Keys: keys, AuthorizeFunc: hook.authorize})

		person := uuid.New()
		pat, err := keys.CreatePersonal(context.Background(), person, []uuid.UUID{wsA, wsB}, "laptop", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		who := wantStatus(t, s, "GET", "/api/auth/whoami", pat.Token, "", 200, "")
		if who["kind"] != "person" || who["person"] != person.String() || fmt.Sprint(who["workspaces"]) != fmt.Sprint([]string{wsA.String(), wsB.String()}) {
			t.Fatalf("whoami with a personal token = %v; want person %s in %s and %s", who, person, wsA, wsB)
		}

		// In scope: the rights hook decides, asked about the right workspace.
		mk := func(ws ...uuid.UUID) string {
			b, _ := json.Marshal(map[string]any{"person": person, "workspaces": ws})
			return string(b)
		}
		made := wantStatus(t, s, "POST", "/api/tokens", pat.Token, mk(wsA), 201, "")
		if got := hook.take(); len(got) != 1 || got[0] != (rightsCall{web.PrincipalPerson, person, wsA, web.ActionManageKeys}) {
			t.Fatalf("rights hook calls = %+v; want one for %s in %s, manage_keys", got, person, wsA)
		}
		wantStatus(t, s, "POST", "/api/tokens", pat.Token, mk(wsB), 403, "not an admin of "+wsB.String())
		if got := hook.take(); len(got) != 1 || got[0].workspace != wsB {
			t.Fatalf("rights hook calls = %+v; want one for %s", got, wsB)
		}
		// Out of the token's scope: refused before the hook is asked.
		wantStatus(t, s, "POST", "/api/tokens", pat.Token, mk(wsC), 403, "not scoped to workspace "+wsC.String())
		if got := hook.take(); len(got) != 0 {
			t.Fatalf("rights hook asked %+v about a workspace outside the token; want no call", got)
		}
		b, _ := json.Marshal(map[string]any{"person": uuid.New(), "workspaces": []uuid.UUID{wsA}})
		wantStatus(t, s, "POST", "/api/tokens", pat.Token, string(b), 403, "only for themselves")
		// Conversations carry no workspace yet: a person's token does not reach them.
		wantStatus(t, s, "POST", "/api/conversations", pat.Token, "{}", 403, "not scoped")

		// The new token reaches only what it was made for.
		narrow := made["token"].(string)
		who = wantStatus(t, s, "GET", "/api/auth/whoami", narrow, "", 200, "")
		if fmt.Sprint(who["workspaces"]) != fmt.Sprint([]string{wsA.String()}) {
			t.Fatalf("whoami with the new token = %v; want only %s", who, wsA)
		}
		wantStatus(t, s, "POST", "/api/tokens", narrow, mk(wsB), 403, "not scoped")

		// A person may revoke their own token, and nobody else's.
		agentKey, err := keys.CreateAgentKey(context.Background(), "atlas", "")
		if err != nil {
			t.Fatal(err)
		}
		wantStatus(t, s, "POST", "/api/keys/"+apikey.ID(agentKey.Key)+"/revoke", pat.Token, "", 404, "not found")
		wantStatus(t, s, "POST", "/api/keys/"+made["id"].(string)+"/revoke", pat.Token, "", 200, "")
		wantStatus(t, s, "GET", "/api/auth/whoami", narrow, "", 401, "revoked")
		// Management of agent keys is the operator's.
		wantStatus(t, s, "POST", "/api/keys", pat.Token, `{"agent":"atlas"}`, 403, "only the operator")
		wantStatus(t, s, "GET", "/api/keys", pat.Token, "", 403, "only the operator")

		// The token's own expiry.
		clk.mu.Lock()
		clk.t = clk.t.Add(time.Hour)
		clk.mu.Unlock()
		wantStatus(t, s, "GET", "/api/auth/whoami", pat.Token, "", 401, "expired")
	})
}

func TestAuthorizeDefaultsToOperatorForWrites(t *testing.T) {
	t.Parallel()
	st := testenv.SQLite(t)
	clk := newClock()
	keys, err := apikey.New(apikey.Options{Store: st, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, st, clk, writeScript(t, echoScript), web.Options{Token: "op-token", Keys: keys})
	person, ws := uuid.New(), uuid.New()
	pat, err := keys.CreatePersonal(context.Background(), person, []uuid.UUID{ws}, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"person": person, "workspaces": []uuid.UUID{ws}})
	wantStatus(t, s, "POST", "/api/tokens", pat.Token, string(body), 403, "may not manage_keys")
	made := wantStatus(t, s, "POST", "/api/tokens", "op-token", string(body), 201, "")
	if !strings.HasPrefix(made["token"].(string), "sbp_") {
		t.Fatalf("operator's POST /api/tokens = %v; want an sbp_ token", made)
	}
	// A wrong secret with a real lookup is as unknown as a made-up token.
	forged := made["id"].(string) + "_" + strings.Repeat("A", 43)
	wantStatus(t, s, "GET", "/api/auth/whoami", forged, "", 401, "a valid Authorization: Bearer token is required")
}
