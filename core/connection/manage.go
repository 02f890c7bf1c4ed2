package connection

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core/workspace"
	"github.com/switchboardhq/switchboard/store"
)

// Viewer is who lists or disconnects connections.
type Viewer struct {
	// Operator sees and disconnects every connection.
	Operator bool
	// PersonID sees their own connections and those of the workspaces
	// where they manage connections (owners and admins).
	PersonID uuid.UUID
	// Workspaces, when set, limits the workspaces considered (a personal
	// token's scope).
	Workspaces []uuid.UUID
}

// List returns the connections v may see, their own first.
func (m *Manager) List(ctx context.Context, v Viewer) ([]*store.Connection, error) {
	if v.Operator {
		return m.listOwner(ctx, nil)
	}
	out, err := m.listOwner(ctx, ptr(store.PersonOwner(v.PersonID)))
	if err != nil {
		return nil, err
	}
	ms, err := m.o.Store.WorkspaceListByPerson(ctx, v.PersonID)
	if err != nil {
		return nil, fmt.Errorf("listing the workspaces of %s: %w", v.PersonID, err)
	}
	for _, ms := range ms {
		if !workspace.Can(ms.Role, workspace.ManageConnections) || (len(v.Workspaces) > 0 && !slices.Contains(v.Workspaces, ms.Workspace.ID)) {
			continue
		}
		cs, err := m.listOwner(ctx, ptr(store.WorkspaceOwner(ms.Workspace.ID)))
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

func ptr[T any](v T) *T { return &v }

func (m *Manager) listOwner(ctx context.Context, o *store.ConnectionOwner) ([]*store.Connection, error) {
	var out []*store.Connection
	after := uuid.Nil
	for {
		page, err := m.o.Store.ConnectionList(ctx, &store.ConnectionListParams{Owner: o, AfterID: after})
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if len(page) < store.DefaultListLimit {
			return out, nil
		}
		after = page[len(page)-1].ID
	}
}

// mayManage reports whether v may see and disconnect c.
func (m *Manager) mayManage(ctx context.Context, v Viewer, c *store.Connection) error {
	switch {
	case v.Operator:
		return nil
	case c.Owner.PersonID != nil && *c.Owner.PersonID == v.PersonID:
		return nil
	case c.Owner.WorkspaceID != nil:
		if len(v.Workspaces) > 0 && !slices.Contains(v.Workspaces, *c.Owner.WorkspaceID) {
			return fmt.Errorf("%w: this token is not scoped to workspace %s", ErrForbidden, *c.Owner.WorkspaceID)
		}
		_, err := workspace.Check(ctx, m.o.Store, *c.Owner.WorkspaceID, v.PersonID, workspace.ManageConnections)
		if errors.Is(err, workspace.ErrForbidden) {
			return fmt.Errorf("%w: %w", ErrForbidden, err)
		}
		return err
	}
	return ErrForbidden
}

// Disconnect revokes a connection's grant at the provider, when the
// provider can revoke, and then deletes it. A connection v may not manage
// is store.ErrNotFound, as if it did not exist. A failed revocation keeps
// the connection: forgetting a token that still works would leave it
// working with nobody able to revoke it from here.
func (m *Manager) Disconnect(ctx context.Context, v Viewer, id uuid.UUID) (*store.Connection, error) {
	c, err := m.o.Store.ConnectionGet(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := m.mayManage(ctx, v, c); err != nil {
		if errors.Is(err, ErrForbidden) {
			return nil, fmt.Errorf("disconnecting %s: %w", id, store.ErrNotFound)
		}
		return nil, err
	}
	if p, ok := m.providers[c.Provider]; ok && p.RevokeFunc != nil {
		tok, err := m.open(c)
		if err != nil {
			return nil, err
		}
		if err := p.RevokeFunc(ctx, m.o.HTTPClient, tok); err != nil {
			return nil, fmt.Errorf("revoking the %s grant of %s (the connection is kept; try again): %w", p.Title, c.Account, err)
		}
	}
	if err := m.o.Store.ConnectionDelete(ctx, id); err != nil {
		return nil, err
	}
	m.log.InfoContext(ctx, "account disconnected", "provider", c.Provider, "owner", c.Owner.String(), "account", c.Account, "connection_id", c.ID)
	return c, nil
}
