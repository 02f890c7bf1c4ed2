package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
)

// Grants is what the grant endpoints need of core; *core.Service
// implements it.
type Grants interface {
	Grants(ctx context.Context, place *core.GrantPlace) ([]*core.Grant, error)
	RevokeGrant(ctx context.Context, id uuid.UUID, place *core.GrantPlace) (*core.Grant, error)
}

var _ Grants = (*core.Service)(nil)

type grantJSON struct {
	ID            uuid.UUID  `json:"id"`
	Agent         string     `json:"agent"`
	Tool          string     `json:"tool"`
	Workspace     string     `json:"workspace"`
	ArgsHash      string     `json:"args_hash,omitempty"`
	GrantedBy     string     `json:"granted_by"`
	CreatedAt     time.Time  `json:"created_at"`
	RevokedAt     *time.Time `json:"revoked_at,omitempty"`
	WorkspaceID   *uuid.UUID `json:"workspace_id,omitempty"`
	WorkspaceName string     `json:"workspace_name,omitempty"`
}

// GrantList is GET /api/grants.
type GrantList struct {
	Grants []grantJSON `json:"grants"`
}

func toGrantJSON(g *core.Grant) grantJSON {
	return grantJSON(*g)
}

// listGrants answers the standing grants that hold, of every workspace or
// of one: ?workspace_id=UUID names a workspace, ?workspace=T… the grants
// of no workspace made in a platform workspace.
func (a *API) listGrants(w http.ResponseWriter, r *http.Request) error {
	if err := mayManageGrants(r); err != nil {
		return err
	}
	var ws *core.GrantPlace
	q := r.URL.Query()
	switch {
	case q.Has("workspace_id"):
		id, err := uuid.Parse(q.Get("workspace_id"))
		if err != nil {
			return fmt.Errorf("%w: workspace_id %q is not a UUID", core.ErrInvalid, q.Get("workspace_id"))
		}
		ws = &core.GrantPlace{WorkspaceID: &id}
	case q.Has("workspace"):
		ws = &core.GrantPlace{Team: q.Get("workspace")}
	}
	gs, err := a.opts.Grants.Grants(r.Context(), ws)
	if err != nil {
		return err
	}
	out := make([]grantJSON, 0, len(gs))
	for _, g := range gs {
		out = append(out, toGrantJSON(g))
	}
	writeJSON(w, http.StatusOK, GrantList{Grants: out})
	return nil
}

// revokeGrant answers DELETE /api/grants/{id}: the grant is revoked (kept,
// with its revocation time) and the guard asks again from the next call.
func (a *API) revokeGrant(w http.ResponseWriter, r *http.Request) error {
	if err := mayManageGrants(r); err != nil {
		return err
	}
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		return fmt.Errorf("%w: grant id %q is not a UUID", core.ErrInvalid, r.PathValue("id"))
	}
	g, err := a.opts.Grants.RevokeGrant(r.Context(), id, nil)
	if errors.Is(err, core.ErrNotFound) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("grant %s not found", id))
		return nil
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toGrantJSON(g))
	return nil
}

// mayManageGrants is where the right to list and revoke grants is checked:
// grants of every workspace are the operator's (SWITCHBOARD_API_TOKEN, or
// a loopback caller without it); a workspace's own people use !grants.
func mayManageGrants(r *http.Request) error {
	return operatorOnly(PrincipalFrom(r.Context()), "list and revoke standing grants")
}
