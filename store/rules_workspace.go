package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// The rules of workspaces: the owner is made a member with the workspace
// and never leaves nor changes role; a personal workspace is never deleted;
// pins and the public directory exclude each other for team workspaces.

// ErrOwnerFixed is the conflict of removing or changing a workspace's owner.
var ErrOwnerFixed = fmt.Errorf("%w: a workspace's owner is set at creation and can never be removed or reassigned", ErrConflict)

func (q checked) WorkspaceCreate(ctx context.Context, p *WorkspaceCreateParams) (*Workspace, error) {
	switch {
	case p == nil:
		return nil, invalidf("creating workspace: params are nil")
	case strings.TrimSpace(p.Name) == "":
		return nil, invalidf("creating workspace: Name is empty")
	case p.Kind != WorkspaceTeam && p.Kind != WorkspacePersonal:
		return nil, invalidf("creating workspace %q: Kind %q is neither team nor personal", p.Name, p.Kind)
	case p.Kind == WorkspacePersonal:
		return nil, invalidf("creating workspace %q: a personal workspace is made with its person (WorkspaceEnsurePersonal)", p.Name)
	case p.OwnerPersonID == uuid.Nil:
		return nil, invalidf("creating workspace %q: OwnerPersonID is empty", p.Name)
	}
	c := *p
	c.Name = strings.TrimSpace(c.Name)
	if c.ID == uuid.Nil {
		c.ID = newID()
	}
	c.Now = q.at(c.Now)
	var ws *Workspace
	err := q.atomic(ctx, func(tq Queries) error {
		var err error
		if ws, err = tq.WorkspaceCreate(ctx, &c); err != nil {
			return err
		}
		_, err = tq.WorkspaceMemberPut(ctx, &WorkspaceMemberPutParams{WorkspaceID: ws.ID, PersonID: ws.OwnerPersonID, Role: RoleOwner, Now: c.Now})
		return err
	})
	if err != nil {
		return nil, err
	}
	return ws, nil
}

func (q checked) WorkspaceEnsurePersonal(ctx context.Context, p *WorkspaceEnsurePersonalParams) (*Workspace, error) {
	switch {
	case p == nil:
		return nil, invalidf("ensuring personal workspace: params are nil")
	case p.PersonID == uuid.Nil:
		return nil, invalidf("ensuring personal workspace: PersonID is empty")
	}
	c := *p
	if c.Name = strings.TrimSpace(c.Name); c.Name == "" {
		c.Name = "Personal"
	}
	c.Now = q.at(c.Now)
	var ws *Workspace
	err := q.atomic(ctx, func(tq Queries) error {
		var err error
		if ws, err = tq.WorkspaceEnsurePersonal(ctx, &c); err != nil {
			return err
		}
		if _, err := tq.WorkspaceMemberGet(ctx, &WorkspaceMemberParams{WorkspaceID: ws.ID, PersonID: c.PersonID}); !errors.Is(err, ErrNotFound) {
			return err
		}
		_, err = tq.WorkspaceMemberPut(ctx, &WorkspaceMemberPutParams{WorkspaceID: ws.ID, PersonID: c.PersonID, Role: RoleOwner, Now: c.Now})
		return err
	})
	if err != nil {
		return nil, err
	}
	return ws, nil
}

func (q checked) WorkspaceDelete(ctx context.Context, id uuid.UUID) error {
	return q.atomic(ctx, func(tq Queries) error {
		ws, err := tq.WorkspaceGet(ctx, id)
		if err != nil {
			return err
		}
		if ws.Kind == WorkspacePersonal {
			return fmt.Errorf("deleting workspace %s: %w: a personal workspace is never deleted", id, ErrConflict)
		}
		return tq.WorkspaceDelete(ctx, id)
	})
}

func (q checked) WorkspaceMemberPut(ctx context.Context, p *WorkspaceMemberPutParams) (*WorkspaceMember, error) {
	switch {
	case p == nil:
		return nil, invalidf("putting workspace member: params are nil")
	case p.PersonID == uuid.Nil:
		return nil, invalidf("putting workspace member: PersonID is empty")
	case p.Role == RoleOwner:
		return nil, fmt.Errorf("making %s owner of %s: %w", p.PersonID, p.WorkspaceID, ErrOwnerFixed)
	case !p.Role.Valid():
		return nil, invalidf("putting workspace member: Role %q is not admin or member", p.Role)
	}
	c := *p
	c.Now = q.at(c.Now)
	var m *WorkspaceMember
	err := q.atomic(ctx, func(tq Queries) error {
		if err := notOwner(ctx, tq, c.WorkspaceID, c.PersonID); err != nil {
			return fmt.Errorf("changing the role of %s in %s: %w", c.PersonID, c.WorkspaceID, err)
		}
		var err error
		m, err = tq.WorkspaceMemberPut(ctx, &c)
		return err
	})
	return m, err
}

func (q checked) WorkspaceMemberGet(ctx context.Context, p *WorkspaceMemberParams) (*WorkspaceMember, error) {
	if p == nil {
		return nil, invalidf("getting workspace member: params are nil")
	}
	return q.Queries.WorkspaceMemberGet(ctx, p)
}

func (q checked) WorkspaceMemberRemove(ctx context.Context, p *WorkspaceMemberParams) error {
	if p == nil {
		return invalidf("removing workspace member: params are nil")
	}
	return q.atomic(ctx, func(tq Queries) error {
		if err := notOwner(ctx, tq, p.WorkspaceID, p.PersonID); err != nil {
			return fmt.Errorf("removing %s from %s: %w", p.PersonID, p.WorkspaceID, err)
		}
		return tq.WorkspaceMemberRemove(ctx, p)
	})
}

// notOwner refuses a change to the workspace owner's membership.
func notOwner(ctx context.Context, q Queries, workspaceID, personID uuid.UUID) error {
	ws, err := q.WorkspaceGet(ctx, workspaceID)
	if err != nil {
		return err
	}
	if ws.OwnerPersonID == personID {
		return ErrOwnerFixed
	}
	return nil
}

func (q checked) WorkspaceBind(ctx context.Context, p *WorkspaceBindParams) (*WorkspaceBinding, error) {
	switch {
	case p == nil:
		return nil, invalidf("binding workspace: params are nil")
	case p.Platform == "" || p.ExternalID == "":
		return nil, invalidf("binding workspace %s: Platform and ExternalID are required", p.WorkspaceID)
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.WorkspaceBind(ctx, &c)
}

func (q checked) WorkspaceBindingFind(ctx context.Context, p *WorkspaceBindingFindParams) (*WorkspaceBinding, error) {
	if p == nil {
		return nil, invalidf("finding workspace binding: params are nil")
	}
	return q.Queries.WorkspaceBindingFind(ctx, p)
}

func (q checked) ConversationWorkspaceSet(ctx context.Context, p *ConversationWorkspaceSetParams) error {
	if p == nil || p.WorkspaceID == uuid.Nil {
		return invalidf("putting a conversation in a workspace: WorkspaceID is empty")
	}
	return q.Queries.ConversationWorkspaceSet(ctx, p)
}

func (q checked) AgentSharingGet(ctx context.Context, agentID uuid.UUID) (*AgentSharing, error) {
	s, err := q.Queries.AgentSharingGet(ctx, agentID)
	if errors.Is(err, ErrNotFound) {
		return &AgentSharing{AgentID: agentID}, nil
	}
	return s, err
}

func (q checked) AgentOwnerSet(ctx context.Context, p *AgentOwnerSetParams) (*AgentSharing, error) {
	if p == nil || p.AgentID == uuid.Nil {
		return nil, invalidf("setting an agent's owner: AgentID is empty")
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.AgentOwnerSet(ctx, &c)
}

func (q checked) AgentPin(ctx context.Context, p *AgentPinParams) (*AgentSharing, error) {
	if p == nil || p.AgentID == uuid.Nil {
		return nil, invalidf("pinning an agent: AgentID is empty")
	}
	c := *p
	c.WorkspaceIDs = slices.Compact(slices.SortedFunc(slices.Values(p.WorkspaceIDs), func(a, b uuid.UUID) int {
		return strings.Compare(a.String(), b.String())
	}))
	if c.WorkspaceIDs == nil {
		c.WorkspaceIDs = []uuid.UUID{}
	}
	c.Now = q.at(c.Now)
	var out *AgentSharing
	err := q.atomic(ctx, func(tq Queries) error {
		cur, err := checked{Queries: tq}.AgentSharingGet(ctx, c.AgentID)
		if err != nil {
			return err
		}
		for _, id := range c.WorkspaceIDs {
			ws, err := tq.WorkspaceGet(ctx, id)
			if errors.Is(err, ErrNotFound) {
				return invalidf("pinning agent %s: no workspace %s", c.AgentID, id)
			}
			if err != nil {
				return err
			}
			if cur.Published && ws.Kind == WorkspaceTeam {
				return fmt.Errorf("pinning agent %s to %q: %w", c.AgentID, ws.Name, ErrPublishedPin)
			}
			if cur.OwnerPersonID != nil {
				// A person's agent is seen only where its owner belongs.
				if _, err := tq.WorkspaceMemberGet(ctx, &WorkspaceMemberParams{WorkspaceID: id, PersonID: *cur.OwnerPersonID}); errors.Is(err, ErrNotFound) {
					return fmt.Errorf("pinning agent %s to %q: %w: its owner is not a member there", c.AgentID, ws.Name, ErrConflict)
				} else if err != nil {
					return err
				}
			}
		}
		out, err = tq.AgentPin(ctx, &c)
		return err
	})
	return out, err
}

// ErrPublishedPin refuses what would list an agent pinned to a shared
// workspace in the public directory.
var ErrPublishedPin = fmt.Errorf("%w: an agent pinned to a shared (team) workspace cannot be listed in the public directory", ErrConflict)

func (q checked) AgentPublish(ctx context.Context, p *AgentPublishParams) (*AgentSharing, error) {
	if p == nil || p.AgentID == uuid.Nil {
		return nil, invalidf("publishing an agent: AgentID is empty")
	}
	c := *p
	c.Now = q.at(c.Now)
	var out *AgentSharing
	err := q.atomic(ctx, func(tq Queries) error {
		if c.Published {
			cur, err := checked{Queries: tq}.AgentSharingGet(ctx, c.AgentID)
			if err != nil {
				return err
			}
			for _, id := range cur.Pins {
				ws, err := tq.WorkspaceGet(ctx, id)
				if err != nil {
					return err
				}
				if ws.Kind == WorkspaceTeam {
					return fmt.Errorf("publishing agent %s: it is pinned to the team workspace %q: %w; unpin it, or pin it to its owner's personal workspace only",
						c.AgentID, ws.Name, ErrPublishedPin)
				}
			}
		}
		var err error
		out, err = tq.AgentPublish(ctx, &c)
		return err
	})
	return out, err
}
