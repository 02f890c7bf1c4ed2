package web

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/workspace"
)

// Sessions people can see and end: GET /api/sessions and POST
// /api/sessions/{session}/end. Ending one writes the store, which every
// instance reads on the next request, so it takes effect everywhere.

// Sessions is what the session routes take: core.Service.
type Sessions interface {
	Sessions(ctx context.Context, a workspace.Actor, q core.SessionQuery) ([]*core.SessionInfo, error)
	EndSession(ctx context.Context, a workspace.Actor, id, by string) (*core.SessionInfo, error)
}

func withSessions(o *Options) bool { return o.Sessions != nil }

// SessionItemJSON is one console session or personal token.
type SessionItemJSON struct {
	ID   string `json:"id"`
	Kind string `json:"kind"` // console or token
	// Method is how a console session was opened: link, token or oidc.
	Method        string     `json:"method,omitempty"`
	PersonID      *uuid.UUID `json:"person_id"` // null: the operator's
	Label         string     `json:"label,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	ExpiresAt     *time.Time `json:"expires_at"`
	LastUsedAt    *time.Time `json:"last_used_at"`
	LastIP        string     `json:"last_ip,omitempty"`
	LastUserAgent string     `json:"last_user_agent,omitempty"`
	EndedAt       *time.Time `json:"ended_at,omitempty"`
	// Current marks the session or token this request came with.
	Current bool `json:"current,omitempty"`
}

// SessionList is GET /api/sessions.
type SessionList struct {
	Sessions []SessionItemJSON `json:"sessions"`
}

func toSessionJSON(p *Principal, s *core.SessionInfo) SessionItemJSON {
	out := SessionItemJSON{
		ID: s.ID, Kind: s.Kind, Method: s.Method, PersonID: s.PersonID, Label: s.Label, CreatedAt: s.CreatedAt,
		ExpiresAt: s.ExpiresAt, LastUsedAt: s.LastUsedAt, LastIP: s.LastIP, LastUserAgent: s.LastUserAgent, EndedAt: s.Ended,
	}
	out.Current = (p.Session != nil && p.Session.ID.String() == s.ID) || (p.Key != nil && s.Kind == core.SessionToken && keyID(p) == s.ID)
	return out
}

func keyID(p *Principal) string {
	if p.Key == nil {
		return ""
	}
	return "sbp_" + p.Key.Lookup
}

func (a *API) sessionList(w http.ResponseWriter, r *http.Request) error {
	p := PrincipalFrom(r.Context())
	var q core.SessionQuery
	for _, f := range []struct {
		name string
		dst  **uuid.UUID
	}{{"person", &q.Person}, {"workspace", &q.Workspace}} {
		v := r.URL.Query().Get(f.name)
		if v == "" {
			continue
		}
		id, err := uuid.Parse(v)
		if err != nil && f.name == "workspace" {
			// A Slack team or Discord guild bound to a workspace.
			id, err = a.svc.Workspaces().Named(r.Context(), v)
		}
		if err != nil {
			return &httpError{status: http.StatusBadRequest, msg: fmt.Sprintf("%s %q: want an id", f.name, v)}
		}
		*f.dst = &id
	}
	list, err := a.opts.Sessions.Sessions(r.Context(), p.actor(), q)
	if err != nil {
		return err
	}
	out := SessionList{Sessions: make([]SessionItemJSON, 0, len(list))}
	for _, s := range list {
		out.Sessions = append(out.Sessions, toSessionJSON(p, s))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *API) sessionEnd(w http.ResponseWriter, r *http.Request) error {
	if err := decode(w, r, &struct{}{}, true); err != nil {
		return err
	}
	p := PrincipalFrom(r.Context())
	s, err := a.opts.Sessions.EndSession(r.Context(), p.actor(), r.PathValue("session"), p.Name())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toSessionJSON(p, s))
	return nil
}
