package web

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/auth/apikey"
)

// The credential routes: the exchange of an agent key or host token for a
// session, who am I, and the operator's (and a person's own) management of
// keys and tokens.

// ExchangeRequest is the (optional) body of POST /api/auth/token: the
// agent a host token's session acts as (an agent key names its own).
type ExchangeRequest struct {
	Agent string `json:"agent,omitempty"`
}

// SessionTokenJSON is an agent's session, exchanged for a key.
type SessionTokenJSON struct {
	Token     string     `json:"token"`
	TokenType string     `json:"token_type"` // Bearer
	Agent     string     `json:"agent"`
	ExpiresAt *time.Time `json:"expires_at"`
	ExpiresIn int        `json:"expires_in"` // seconds
}

// WhoamiJSON is GET /api/auth/whoami: the principal, with its credential's
// id and expiry when it has one, the agents of an agent's credential, and
// a person's id and the workspaces their token reaches.
type WhoamiJSON struct {
	Kind PrincipalKind `json:"kind"`
	Name string        `json:"name"`
	*WhoamiKey
	Agents []string `json:"agents,omitempty"`
	*PersonScope
}

// WhoamiKey is the credential behind a principal.
type WhoamiKey struct {
	KeyID     string     `json:"key_id"`
	ExpiresAt *time.Time `json:"expires_at"` // null: it does not expire
}

// PersonScope is the person behind a personal token and the workspaces it
// reaches.
type PersonScope struct {
	Person     uuid.UUID   `json:"person"`
	Workspaces []uuid.UUID `json:"workspaces"` // null: every workspace of the person
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
	var body ExchangeRequest
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
	writeJSON(w, http.StatusCreated, SessionTokenJSON{
		Token: sess.Token, TokenType: "Bearer", Agent: sess.Key.Agents[0],
		ExpiresAt: sess.Key.ExpiresAt, ExpiresIn: int(keys.SessionTTL() / time.Second),
	})
	return nil
}

func (a *API) whoami(w http.ResponseWriter, r *http.Request) error {
	p := PrincipalFrom(r.Context())
	out := WhoamiJSON{Kind: p.Kind, Name: p.Name(), Agents: p.Agents}
	if p.Key != nil {
		out.WhoamiKey = &WhoamiKey{KeyID: apikey.ID(p.Key), ExpiresAt: p.Key.ExpiresAt}
	}
	if p.Kind == PrincipalPerson {
		out.PersonScope = &PersonScope{Person: p.PersonID, Workspaces: p.Workspaces}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// KeyJSON is a credential as lists show it: never its secret or hash. A
// personal token names its person and the workspaces it reaches.
type KeyJSON struct {
	ID        string       `json:"id"`
	Kind      core.KeyKind `json:"kind"`
	Label     string       `json:"label"`
	CreatedAt time.Time    `json:"created_at"`
	ExpiresAt *time.Time   `json:"expires_at"`
	RevokedAt *time.Time   `json:"revoked_at"`
	Agents    []string     `json:"agents,omitempty"`
	*PersonScope
}

// IssuedKeyJSON is a credential just issued, with its secret: the only
// time it is shown.
type IssuedKeyJSON struct {
	KeyJSON
	Token string `json:"token"`
}

// KeyList is GET /api/keys.
type KeyList struct {
	Keys []KeyJSON `json:"keys"`
}

// KeyRequest is the body of POST /api/keys: an agent key names one agent,
// a host token lists its agents.
type KeyRequest struct {
	Kind   core.KeyKind `json:"kind,omitempty"` // agent (the default) or host
	Agent  string       `json:"agent,omitempty"`
	Agents []string     `json:"agents,omitempty"`
	Label  string       `json:"label,omitempty"`
}

// TokenRequest is the body of POST /api/tokens.
type TokenRequest struct {
	Person     uuid.UUID   `json:"person"`
	Workspaces []uuid.UUID `json:"workspaces,omitempty"`
	Label      string      `json:"label,omitempty"`
	ExpiresIn  string      `json:"expires_in,omitempty"` // a Go duration; empty: no expiry
}

func toKeyJSON(k *core.Key) KeyJSON {
	out := KeyJSON{
		ID: apikey.ID(k), Kind: k.Kind, Label: k.Label, CreatedAt: k.CreatedAt,
		ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt, Agents: k.Agents,
	}
	if k.PersonID != nil {
		out.PersonScope = &PersonScope{Person: *k.PersonID, Workspaces: k.Workspaces}
	}
	return out
}

func issuedJSON(is *apikey.Issued) IssuedKeyJSON {
	return IssuedKeyJSON{KeyJSON: toKeyJSON(is.Key), Token: is.Token}
}

func (a *API) keyCreate(w http.ResponseWriter, r *http.Request) error {
	var body KeyRequest
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
	case "", core.KeyAgent:
		if body.Agent == "" || len(body.Agents) > 0 {
			return &httpError{status: http.StatusBadRequest, msg: `an agent key names one "agent"`}
		}
		is, err = keys.CreateAgentKey(r.Context(), body.Agent, body.Label)
	case core.KeyHost:
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
	list, err := keys.List(r.Context(), core.KeyKind(r.URL.Query().Get("kind")), r.URL.Query().Get("revoked") == "1")
	if err != nil {
		return err
	}
	out := KeyList{Keys: make([]KeyJSON, 0, len(list))}
	for _, k := range list {
		out.Keys = append(out.Keys, toKeyJSON(k))
	}
	writeJSON(w, http.StatusOK, out)
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
	if errors.Is(err, core.ErrNotFound) {
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
	writeJSON(w, http.StatusOK, toKeyJSON(key))
	return nil
}

// tokenCreate issues a personal access token: the operator for anyone, a
// person for themselves in workspaces their own token reaches and where
// authorize lets them manage keys.
func (a *API) tokenCreate(w http.ResponseWriter, r *http.Request) error {
	var body TokenRequest
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
