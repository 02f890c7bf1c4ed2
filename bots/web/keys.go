package web

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/auth/apikey"
	"github.com/switchboardhq/switchboard/store"
)

// keyRoutes registers the credential routes: the exchange of an agent key
// or host token for a session, who am I, and the operator's (and a
// person's own) management of keys and tokens.
func (a *API) keyRoutes(mux *http.ServeMux) {
	mux.Handle("POST /api/auth/token", a.handleRoute(routeExchange, a.exchange))
	mux.Handle("GET /api/auth/whoami", a.handle(a.whoami))
	mux.Handle("POST /api/keys", a.handle(a.keyCreate))
	mux.Handle("GET /api/keys", a.handle(a.keyList))
	mux.Handle("POST /api/keys/{key}/revoke", a.handle(a.keyRevoke))
	mux.Handle("POST /api/tokens", a.handle(a.tokenCreate))
}

func (a *API) keys() (*apikey.Keys, error) {
	if a.opts.Keys == nil {
		return nil, &httpError{status: http.StatusNotFound, msg: "API keys are not enabled on this server"}
	}
	return a.opts.Keys, nil
}

func operatorOnly(p *Principal, what string) error {
	if !p.Admin() {
		return &httpError{status: http.StatusForbidden, msg: fmt.Sprintf("only the operator may %s", what)}
	}
	return nil
}

func (a *API) exchange(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Agent string `json:"agent"`
	}
	if err := decode(w, r, &body, true); err != nil {
		return err
	}
	keys, err := a.keys()
	if err != nil {
		return err
	}
	sess, err := keys.ExchangeKey(r.Context(), PrincipalFrom(r.Context()).Key, body.Agent)
	if errors.Is(err, apikey.ErrAgent) {
		return &httpError{status: http.StatusForbidden, msg: err.Error()}
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{
		"token": sess.Token, "token_type": "Bearer", "agent": sess.Key.Agents[0],
		"expires_at": sess.Key.ExpiresAt, "expires_in": int(keys.SessionTTL() / time.Second),
	})
	return nil
}

func (a *API) whoami(w http.ResponseWriter, r *http.Request) error {
	p := PrincipalFrom(r.Context())
	out := map[string]any{"kind": p.Kind, "name": p.Name()}
	if p.Key != nil {
		out["key_id"] = apikey.ID(p.Key)
		out["expires_at"] = p.Key.ExpiresAt
	}
	if len(p.Agents) > 0 {
		out["agents"] = p.Agents
	}
	if p.Kind == PrincipalPerson {
		out["person"] = p.PersonID
		out["workspaces"] = p.Workspaces
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// KeyJSON is a credential as lists show it: never its secret or hash.
func KeyJSON(k *store.Key) map[string]any {
	out := map[string]any{
		"id": apikey.ID(k), "kind": k.Kind, "label": k.Label, "created_at": k.CreatedAt,
		"expires_at": k.ExpiresAt, "revoked_at": k.RevokedAt,
	}
	if len(k.Agents) > 0 {
		out["agents"] = k.Agents
	}
	if k.PersonID != nil {
		out["person"] = k.PersonID
		out["workspaces"] = k.Workspaces
	}
	return out
}

func issuedJSON(is *apikey.Issued) map[string]any {
	out := KeyJSON(is.Key)
	out["token"] = is.Token
	return out
}

func (a *API) keyCreate(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Kind   store.KeyKind `json:"kind"` // agent (default) or host
		Agent  string        `json:"agent"`
		Agents []string      `json:"agents"`
		Label  string        `json:"label"`
	}
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	if err := operatorOnly(PrincipalFrom(r.Context()), "create agent keys and host tokens"); err != nil {
		return err
	}
	keys, err := a.keys()
	if err != nil {
		return err
	}
	var is *apikey.Issued
	switch body.Kind {
	case "", store.KeyAgent:
		if body.Agent == "" || len(body.Agents) > 0 {
			return &httpError{status: http.StatusBadRequest, msg: `an agent key names one "agent"`}
		}
		is, err = keys.CreateAgentKey(r.Context(), body.Agent, body.Label)
	case store.KeyHost:
		if len(body.Agents) == 0 || body.Agent != "" {
			return &httpError{status: http.StatusBadRequest, msg: `a host token lists its "agents"`}
		}
		is, err = keys.CreateHostToken(r.Context(), body.Agents, body.Label)
	default:
		return &httpError{status: http.StatusBadRequest, msg: fmt.Sprintf(`kind %q: want "agent" or "host" (personal tokens: POST /api/tokens)`, body.Kind)}
	}
	if errors.Is(err, apikey.ErrAgent) {
		return &httpError{status: http.StatusBadRequest, msg: err.Error()}
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, issuedJSON(is))
	return nil
}

func (a *API) keyList(w http.ResponseWriter, r *http.Request) error {
	if err := operatorOnly(PrincipalFrom(r.Context()), "list keys"); err != nil {
		return err
	}
	keys, err := a.keys()
	if err != nil {
		return err
	}
	list, err := keys.List(r.Context(), store.KeyKind(r.URL.Query().Get("kind")), r.URL.Query().Get("revoked") == "1")
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(list))
	for _, k := range list {
		out = append(out, KeyJSON(k))
	}
	writeJSON(w, http.StatusOK, map[string]any{"keys": out})
	return nil
}

// keyRevoke revokes a key and its sessions: the operator any, a person
// their own tokens.
func (a *API) keyRevoke(w http.ResponseWriter, r *http.Request) error {
	if err := decode(w, r, &struct{}{}, true); err != nil {
		return err
	}
	keys, err := a.keys()
	if err != nil {
		return err
	}
	p := PrincipalFrom(r.Context())
	notFound := &httpError{status: http.StatusNotFound, msg: fmt.Sprintf("key %s not found", r.PathValue("key"))}
	key, err := keys.Find(r.Context(), r.PathValue("key"))
	if errors.Is(err, store.ErrNotFound) {
		return notFound
	}
	if err != nil {
		return err
	}
	own := p.Kind == PrincipalPerson && key.PersonID != nil && *key.PersonID == p.PersonID
	if !p.Admin() && !own {
		return notFound // another's key is none of the caller's business
	}
	key, err = keys.Revoke(r.Context(), apikey.ID(key))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, KeyJSON(key))
	return nil
}

// tokenCreate issues a personal access token: the operator for anyone, a
// person for themselves in workspaces their own token reaches and where
// authorize lets them manage keys.
func (a *API) tokenCreate(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Person     uuid.UUID   `json:"person"`
		Workspaces []uuid.UUID `json:"workspaces"`
		Label      string      `json:"label"`
		ExpiresIn  string      `json:"expires_in"` // a Go duration; empty: no expiry
	}
	if err := decode(w, r, &body, false); err != nil {
		return err
	}
	p := PrincipalFrom(r.Context())
	switch {
	case body.Person == uuid.Nil:
		return &httpError{status: http.StatusBadRequest, msg: `a personal token names its "person"`}
	case len(body.Workspaces) == 0 && !p.Admin():
		// No list reaches every workspace the person belongs to: only the
		// operator issues that; a person names the workspaces.
		return &httpError{status: http.StatusBadRequest, msg: `name the "workspaces" the token reaches (only the operator issues a token for all of a person's workspaces)`}
	case p.Kind == PrincipalPerson && body.Person != p.PersonID:
		return &httpError{status: http.StatusForbidden, msg: "a person may create tokens only for themselves"}
	case !p.Admin() && p.Kind != PrincipalPerson:
		return &httpError{status: http.StatusForbidden, msg: "only the operator or the person may create personal tokens"}
	}
	if p.Kind == PrincipalPerson {
		for _, ws := range body.Workspaces {
			if err := a.authorize(r.Context(), p, ws, ActionManageKeys); err != nil {
				return err
			}
		}
	}
	var ttl time.Duration
	if body.ExpiresIn != "" {
		d, err := time.ParseDuration(body.ExpiresIn)
		if err != nil || d <= 0 {
			return &httpError{status: http.StatusBadRequest, msg: fmt.Sprintf("expires_in %q: want a positive duration such as 720h", body.ExpiresIn)}
		}
		ttl = d
	}
	keys, err := a.keys()
	if err != nil {
		return err
	}
	is, err := keys.CreatePersonal(r.Context(), body.Person, body.Workspaces, body.Label, ttl)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, issuedJSON(is))
	return nil
}
