package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/auth/apikey"
	"github.com/switchboardhq/switchboard/core/workspace"
)

// PrincipalKind says how a request authenticated.
type PrincipalKind string

const (
	PrincipalOperator PrincipalKind = "operator" // holds SWITCHBOARD_API_TOKEN
	PrincipalLocal    PrincipalKind = "local"    // a direct loopback caller when no token is set
	PrincipalAgent    PrincipalKind = "agent"    // a session exchanged from an agent key or a host token
	PrincipalPerson   PrincipalKind = "person"   // a personal access token
	// The two below exist only on POST /api/auth/token: every other route
	// refuses them.
	PrincipalAgentKey PrincipalKind = "agent_key" // an agent key, to be exchanged
	PrincipalHost     PrincipalKind = "host"      // an exchange-only host token
)

// Principal is who a request acts as: exactly one per /api request,
// resolved by the one middleware in handle and read by handlers with
// PrincipalFrom.
type Principal struct {
	Kind PrincipalKind
	// Agents: the agent a session acts as (one), or those a key or host
	// token may open sessions for.
	Agents []string
	// PersonID and Workspaces: a personal token's person and its scope;
	// an empty scope is every workspace the person belongs to, where their
	// roles decide.
	PersonID   uuid.UUID
	Workspaces []uuid.UUID
	// Key is the credential behind the principal; nil for the operator and
	// local callers.
	Key *core.Key
	// Session is the web console session behind a cookie principal (a
	// person, or the operator signed in with the token); nil otherwise.
	Session *core.Login
	csrf    string // the session's CSRF token
}

// Name is the principal as the log records it as an author: "operator",
// "local", "agent:NAME", "person:ID", or "host:ID".
func (p *Principal) Name() string {
	switch p.Kind {
	case PrincipalAgent, PrincipalAgentKey:
		return "agent:" + p.Agents[0]
	case PrincipalPerson:
		return "person:" + p.PersonID.String()
	case PrincipalHost:
		return "host:" + apikey.ID(p.Key)
	}
	return string(p.Kind)
}

// Admin reports whether the principal is the operator (or a local caller
// when no operator token is set, which is the same person at the machine).
func (p *Principal) Admin() bool { return p.Kind == PrincipalOperator || p.Kind == PrincipalLocal }

// PrincipalFrom returns the request's principal; nil outside the API's
// handlers.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(callerKey{}).(*Principal)
	return p
}

// Action is what a request does to a workspace, for authorize.
type Action string

const (
	ActionRead       Action = "read"        // see what is in the workspace
	ActionWrite      Action = "write"       // change what is in the workspace
	ActionManageKeys Action = "manage_keys" // issue or revoke credentials in it
)

// AuthorizeFunc decides whether p may do action in workspace; nil is yes.
// It is called after the principal's own scope was checked (a personal
// token names the workspaces it may touch at all).
type AuthorizeFunc func(ctx context.Context, p *Principal, workspace uuid.UUID, action Action) error

// ErrForbidden is what a refusal of authorize wraps.
var ErrForbidden = errors.New("forbidden")

// authorize is the credential side of the workspace rights check. A
// personal token never reaches past its workspaces; inside them, the
// person's roles decide (Rights), or Options.AuthorizeFunc when set.
func (a *API) authorize(ctx context.Context, p *Principal, ws uuid.UUID, action Action) error {
	if p.Kind == PrincipalPerson && len(p.Workspaces) > 0 && !slices.Contains(p.Workspaces, ws) {
		return fmt.Errorf("%w: this token is not scoped to workspace %s", ErrForbidden, ws)
	}
	if f := a.opts.AuthorizeFunc; f != nil {
		return f(ctx, p, ws, action)
	}
	if p.Admin() {
		return nil
	}
	need := workspace.Use // reading and writing what is in the workspace
	if action == ActionManageKeys {
		need = workspace.ManageConnections // credentials are the workspace's connections
	}
	if err := a.rights(ctx, p, &ws, need); err != nil {
		return fmt.Errorf("%w: %s may not %s in workspace %s: %w", ErrForbidden, p.Name(), action, ws, err)
	}
	return nil
}

// route says which principals a route admits.
type route int

const (
	routeOrdinary route = iota // anyone but agent keys and host tokens
	routeExchange              // agent keys and host tokens only
)

// bearerPrincipal resolves a bearer token that is not the operator's.
func (a *API) bearerPrincipal(r *http.Request, token string) (*Principal, *httpError) {
	unauthorized := func(msg string) *httpError { return &httpError{status: http.StatusUnauthorized, msg: msg} }
	if a.opts.Keys == nil || !apikey.Looks(token) {
		return nil, unauthorized("a valid Authorization: Bearer token is required")
	}
	key, err := a.opts.Keys.Check(r.Context(), token)
	switch {
	case errors.Is(err, apikey.ErrRevoked):
		return nil, unauthorized(fmt.Sprintf("%s token %s was revoked", key.Kind, apikey.ID(key)))
	case errors.Is(err, apikey.ErrExpired):
		if key.Kind == core.KeySession {
			return nil, unauthorized("session expired: exchange the agent key at POST /api/auth/token for a new one")
		}
		return nil, unauthorized(fmt.Sprintf("%s token %s expired", key.Kind, apikey.ID(key)))
	case errors.Is(err, apikey.ErrInvalid):
		return nil, unauthorized("a valid Authorization: Bearer token is required")
	case err != nil:
		a.log.ErrorContext(r.Context(), "checking api token", "error", err)
		return nil, &httpError{status: http.StatusServiceUnavailable, msg: "could not check the token; try again"}
	}
	c := clientOf(r)
	if err := a.opts.Keys.Touch(r.Context(), key, c.ip, c.userAgent); err != nil {
		a.log.WarnContext(r.Context(), "recording the use of an api token", "error", err)
	}
	p := &Principal{Key: key, Agents: key.Agents, Workspaces: key.Workspaces}
	switch key.Kind {
	case core.KeySession:
		p.Kind = PrincipalAgent
	case core.KeyPersonal:
		p.Kind, p.PersonID = PrincipalPerson, *key.PersonID
	case core.KeyAgent:
		p.Kind = PrincipalAgentKey
	case core.KeyHost:
		p.Kind = PrincipalHost
	}
	return p, nil
}

// admit applies the route's rule to the principal.
func admit(p *Principal, rt route) *httpError {
	exchangeable := p.Kind == PrincipalAgentKey || p.Kind == PrincipalHost
	switch {
	case rt == routeOrdinary && p.Kind == PrincipalAgentKey:
		return &httpError{status: http.StatusUnauthorized, msg: "an agent key is not accepted here: exchange it at POST /api/auth/token for a session token and send that"}
	case rt == routeOrdinary && p.Kind == PrincipalHost:
		return &httpError{status: http.StatusForbidden, msg: "a host token can only be exchanged at POST /api/auth/token for an agent's session"}
	case rt == routeExchange && !exchangeable:
		return &httpError{status: http.StatusForbidden, msg: "POST /api/auth/token takes an agent key or a host token"}
	}
	return nil
}

// mayUseConversation keeps an agent session to its own agent's
// conversations.
func (a *API) mayUseConversation(r *http.Request, p *Principal, id uuid.UUID) error {
	if p.Kind == PrincipalAgent {
		return a.svc.AgentsConversation(r.Context(), p.Agents[0], id)
	}
	// A person's rights in the conversation's workspace are checked by the
	// handler (allowedConversation).
	return nil
}

// mayCreateConversation keeps an agent session to conversations of its own
// agent (filling it in when the body names none).
func (a *API) mayCreateConversation(r *http.Request, agent *string) error {
	p := PrincipalFrom(r.Context())
	switch p.Kind {
	case PrincipalAgent:
		if *agent == "" {
			*agent = p.Agents[0]
		}
		if *agent != p.Agents[0] {
			return &httpError{status: http.StatusForbidden, msg: fmt.Sprintf("a session of agent %s cannot open a conversation of agent %s", p.Agents[0], *agent)}
		}
	}
	// A person's conversation goes to a workspace they may use
	// (workspaceForNew).
	return nil
}
