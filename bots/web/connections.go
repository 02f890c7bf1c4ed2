package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/connection"
)

// Connections is what the connection endpoints need;
// *connection.Manager implements it.
type Connections interface {
	List(ctx context.Context, v connection.Viewer) ([]*core.Connection, error)
	Disconnect(ctx context.Context, v connection.Viewer, id uuid.UUID) (*core.Connection, error)
}

var _ Connections = (*connection.Manager)(nil)

// connectionJSON is a connection as the API shows it: never a token.
type connectionJSON struct {
	ID          uuid.UUID  `json:"id"`
	Provider    string     `json:"provider"`
	OwnerKind   string     `json:"owner_kind"`
	OwnerID     uuid.UUID  `json:"owner_id"`
	Account     string     `json:"account"`
	AccountID   string     `json:"account_id,omitempty"`
	Scopes      []string   `json:"scopes"`
	ExpiresAt   *time.Time `json:"expires_at,omitempty"`
	ConnectedBy uuid.UUID  `json:"connected_by"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
}

// ConnectionList is GET /api/connections.
type ConnectionList struct {
	Connections []connectionJSON `json:"connections"`
}

// DisconnectedJSON answers DELETE /api/connections/{id}: the connection
// as it was.
type DisconnectedJSON struct {
	Disconnected connectionJSON `json:"disconnected"`
}

func toConnectionJSON(c *core.Connection) connectionJSON {
	kind, id := c.Owner.Columns()
	return connectionJSON{
		ID: c.ID, Provider: string(c.Provider), OwnerKind: kind, OwnerID: id, Account: c.Account, AccountID: c.AccountID,
		Scopes: c.Scopes, ExpiresAt: c.Expiry, ConnectedBy: c.ConnectedBy, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
	}
}

// connectionViewer is who the principal is to the connections: the
// operator sees all; a person their own and those of the workspaces they
// manage; an agent none.
func connectionViewer(p *Principal) (connection.Viewer, error) {
	switch {
	case p.Admin():
		return connection.Viewer{Operator: true}, nil
	case p.Kind == PrincipalPerson:
		return connection.Viewer{PersonID: p.PersonID, Workspaces: p.Workspaces}, nil
	}
	return connection.Viewer{}, &httpError{status: http.StatusForbidden, msg: fmt.Sprintf("%s has no connections: use a personal token", p.Name())}
}

func (a *API) listConnections(w http.ResponseWriter, r *http.Request) error {
	v, err := connectionViewer(principal(r))
	if err != nil {
		return err
	}
	cs, err := a.opts.Connections.List(r.Context(), v)
	if err != nil {
		return err
	}
	out := make([]connectionJSON, 0, len(cs))
	for _, c := range cs {
		out = append(out, toConnectionJSON(c))
	}
	writeJSON(w, http.StatusOK, ConnectionList{Connections: out})
	return nil
}

func (a *API) disconnect(w http.ResponseWriter, r *http.Request) error {
	v, err := connectionViewer(principal(r))
	if err != nil {
		return err
	}
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		return &httpError{status: http.StatusBadRequest, msg: fmt.Sprintf("%q is not a connection id", r.PathValue("id"))}
	}
	c, err := a.opts.Connections.Disconnect(r.Context(), v, id)
	if errors.Is(err, core.ErrNotFound) {
		return &httpError{status: http.StatusNotFound, msg: fmt.Sprintf("no connection %s that you manage", id)}
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, DisconnectedJSON{Disconnected: toConnectionJSON(c)})
	return nil
}

// PersonViewer authenticates r as the API does and returns the person it
// acts as, with the token's workspace scope: only a personal token is
// accepted. The start of a connection (GET /connections/{provider}/start)
// uses it.
func (a *API) PersonViewer(r *http.Request) (connection.Viewer, error) {
	p, herr := a.authenticate(r)
	if herr != nil {
		return connection.Viewer{}, errors.New(herr.msg)
	}
	if p.Kind != PrincipalPerson {
		return connection.Viewer{}, fmt.Errorf("%s cannot connect an account: use a personal token", p.Name())
	}
	return connection.Viewer{PersonID: p.PersonID, Workspaces: p.Workspaces}, nil
}
