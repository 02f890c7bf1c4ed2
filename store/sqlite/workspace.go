package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// Workspaces, their members, the platform teams bound to them and where
// agents answer; the rules in store keep the owner in place.

func (q *queries) WorkspaceCreate(ctx context.Context, p *store.WorkspaceCreateParams) (*store.Workspace, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Workspace, error) {
		return t.tx.WorkspaceInsert(ctx, dbsqlc.WorkspaceInsertParams{
			ID: p.ID, Name: p.Name, Kind: string(p.Kind), OwnerPersonID: p.OwnerPersonID, Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "creating workspace %q", p.Name)
	}
	return toWorkspace(r), nil
}

func (q *queries) WorkspaceEnsurePersonal(ctx context.Context, p *store.WorkspaceEnsurePersonalParams) (*store.Workspace, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Workspace, error) {
		r, err := t.tx.WorkspacePersonalInsert(ctx, dbsqlc.WorkspacePersonalInsertParams{
			ID: newID(), Name: p.Name, OwnerPersonID: p.PersonID, Now: micros(p.Now),
		})
		if errors.Is(err, sql.ErrNoRows) {
			return t.tx.WorkspacePersonalGet(ctx, p.PersonID)
		}
		return r, err
	})
	if err != nil {
		return nil, wrap(err, "ensuring the personal workspace of %s", p.PersonID)
	}
	return toWorkspace(r), nil
}

func (q *queries) WorkspaceGet(ctx context.Context, id uuid.UUID) (*store.Workspace, error) {
	r, err := q.read().WorkspaceGet(ctx, id)
	if err != nil {
		return nil, wrap(err, "getting workspace %s", id)
	}
	return toWorkspace(r), nil
}

func (q *queries) WorkspaceListByPerson(ctx context.Context, personID uuid.UUID) ([]*store.Membership, error) {
	rows, err := q.read().WorkspaceListByPerson(ctx, personID)
	out, err := all(rows, err, func(r dbsqlc.WorkspaceListByPersonRow) *store.Membership {
		return &store.Membership{Workspace: toWorkspace(r.Workspace), Role: store.Role(r.Role)}
	})
	if err != nil {
		return nil, wrap(err, "listing the workspaces of %s", personID)
	}
	return out, nil
}

func (q *queries) WorkspaceDelete(ctx context.Context, id uuid.UUID) error {
	_, err := write(ctx, q, func(t *queries) (int64, error) {
		return affected(t.tx.WorkspaceDelete(ctx, id))
	})
	if err != nil {
		return wrap(err, "deleting workspace %s", id)
	}
	return nil
}

func (q *queries) WorkspaceMemberPut(ctx context.Context, p *store.WorkspaceMemberPutParams) (*store.WorkspaceMember, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.WorkspaceMember, error) {
		return t.tx.WorkspaceMemberUpsert(ctx, dbsqlc.WorkspaceMemberUpsertParams{
			WorkspaceID: p.WorkspaceID, PersonID: p.PersonID, Role: string(p.Role), Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "putting %s in workspace %s as %s", p.PersonID, p.WorkspaceID, p.Role)
	}
	return toMember(r), nil
}

func (q *queries) WorkspaceMemberGet(ctx context.Context, p *store.WorkspaceMemberParams) (*store.WorkspaceMember, error) {
	r, err := q.read().WorkspaceMemberGet(ctx, dbsqlc.WorkspaceMemberGetParams(*p))
	if err != nil {
		return nil, wrap(err, "getting member %s of workspace %s", p.PersonID, p.WorkspaceID)
	}
	return toMember(r), nil
}

func (q *queries) WorkspaceMemberList(ctx context.Context, workspaceID uuid.UUID) ([]*store.WorkspaceMember, error) {
	rows, err := q.read().WorkspaceMemberList(ctx, workspaceID)
	out, err := all(rows, err, toMember)
	if err != nil {
		return nil, wrap(err, "listing members of workspace %s", workspaceID)
	}
	return out, nil
}

func (q *queries) WorkspaceMemberRemove(ctx context.Context, p *store.WorkspaceMemberParams) error {
	_, err := write(ctx, q, func(t *queries) (int64, error) {
		return affected(t.tx.WorkspaceMemberDelete(ctx, dbsqlc.WorkspaceMemberDeleteParams(*p)))
	})
	if err != nil {
		return wrap(err, "removing member %s of workspace %s", p.PersonID, p.WorkspaceID)
	}
	return nil
}

func (q *queries) WorkspaceBind(ctx context.Context, p *store.WorkspaceBindParams) (*store.WorkspaceBinding, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.WorkspaceBinding, error) {
		r, err := t.tx.WorkspaceBindInsert(ctx, dbsqlc.WorkspaceBindInsertParams{
			Platform: p.Platform, ExternalID: p.ExternalID, WorkspaceID: p.WorkspaceID, Now: micros(p.Now),
		})
		if !errors.Is(err, sql.ErrNoRows) {
			return r, err
		}
		r, err = t.tx.WorkspaceBindingFind(ctx, dbsqlc.WorkspaceBindingFindParams{Platform: p.Platform, ExternalID: p.ExternalID})
		if err == nil && r.WorkspaceID != p.WorkspaceID {
			err = fmt.Errorf("%w: %s %s is bound to another workspace", store.ErrConflict, p.Platform, p.ExternalID)
		}
		return r, err
	})
	if err != nil {
		return nil, wrap(err, "binding %s %s to workspace %s", p.Platform, p.ExternalID, p.WorkspaceID)
	}
	return toWorkspaceBinding(r), nil
}

func (q *queries) WorkspaceBindingFind(ctx context.Context, p *store.WorkspaceBindingFindParams) (*store.WorkspaceBinding, error) {
	r, err := q.read().WorkspaceBindingFind(ctx, dbsqlc.WorkspaceBindingFindParams(*p))
	if err != nil {
		return nil, wrap(err, "finding the workspace of %s %s", p.Platform, p.ExternalID)
	}
	return toWorkspaceBinding(r), nil
}

func (q *queries) ConversationWorkspace(ctx context.Context, conversationID uuid.UUID) (*uuid.UUID, error) {
	id, err := q.read().ConversationWorkspace(ctx, conversationID)
	if err != nil {
		return nil, wrap(err, "getting the workspace of conversation %s", conversationID)
	}
	return nullUUID(id), nil
}

func (q *queries) ScheduleWorkspace(ctx context.Context, scheduleID uuid.UUID) (*uuid.UUID, error) {
	id, err := q.read().ScheduleWorkspace(ctx, scheduleID)
	if err != nil {
		return nil, wrap(err, "getting the workspace of schedule %s", scheduleID)
	}
	return nullUUID(id), nil
}

func (q *queries) ConversationWorkspaceSet(ctx context.Context, p *store.ConversationWorkspaceSetParams) error {
	_, err := write(ctx, q, func(t *queries) (struct{}, error) {
		n, err := t.tx.ConversationWorkspaceSet(ctx, dbsqlc.ConversationWorkspaceSetParams{
			ID: p.ConversationID, WorkspaceID: uuidArg(&p.WorkspaceID),
		})
		if err == nil && n == 0 {
			if _, err = t.tx.ConversationWorkspace(ctx, p.ConversationID); err == nil {
				err = fmt.Errorf("%w: conversation is in another workspace", store.ErrConflict)
			}
		}
		return struct{}{}, err
	})
	if err != nil {
		return wrap(err, "putting conversation %s in workspace %s", p.ConversationID, p.WorkspaceID)
	}
	return nil
}

func (q *queries) AgentSharingGet(ctx context.Context, agentID uuid.UUID) (*store.AgentSharing, error) {
	db := q.read()
	r, err := db.AgentSharingGet(ctx, agentID)
	if err != nil {
		return nil, wrap(err, "getting the sharing of agent %s", agentID)
	}
	pins, err := db.AgentPinList(ctx, agentID)
	if err != nil {
		return nil, wrap(err, "listing the pins of agent %s", agentID)
	}
	return &store.AgentSharing{
		AgentID: r.AgentID, OwnerPersonID: nullUUID(r.OwnerPersonID), Pins: pins,
		Published: r.Published == 1, UpdatedAt: fromMicros(r.UpdatedAt),
	}, nil
}

// sharingAfter runs a write, then reads the agent's sharing back in the
// same transaction.
func (q *queries) sharingAfter(ctx context.Context, agentID uuid.UUID, what string, fn func(t *queries) error) (*store.AgentSharing, error) {
	s, err := write(ctx, q, func(t *queries) (*store.AgentSharing, error) {
		if err := fn(t); err != nil {
			return nil, err
		}
		return t.AgentSharingGet(ctx, agentID)
	})
	if err != nil {
		return nil, wrap(err, "%s agent %s", what, agentID)
	}
	return s, nil
}

func (q *queries) AgentOwnerSet(ctx context.Context, p *store.AgentOwnerSetParams) (*store.AgentSharing, error) {
	return q.sharingAfter(ctx, p.AgentID, "setting the owner of", func(t *queries) error {
		return t.tx.AgentOwnerSet(ctx, dbsqlc.AgentOwnerSetParams{AgentID: p.AgentID, OwnerPersonID: uuidArg(p.OwnerPersonID), Now: micros(p.Now)})
	})
}

func (q *queries) AgentPin(ctx context.Context, p *store.AgentPinParams) (*store.AgentSharing, error) {
	return q.sharingAfter(ctx, p.AgentID, "pinning", func(t *queries) error {
		if err := t.tx.AgentSharingTouch(ctx, dbsqlc.AgentSharingTouchParams{AgentID: p.AgentID, Now: micros(p.Now)}); err != nil {
			return err
		}
		if err := t.tx.AgentPinsClear(ctx, p.AgentID); err != nil {
			return err
		}
		for _, ws := range p.WorkspaceIDs {
			if err := t.tx.AgentPinAdd(ctx, dbsqlc.AgentPinAddParams{AgentID: p.AgentID, WorkspaceID: ws, Now: micros(p.Now)}); err != nil {
				return err
			}
		}
		return nil
	})
}

func (q *queries) AgentPublish(ctx context.Context, p *store.AgentPublishParams) (*store.AgentSharing, error) {
	var published int64
	if p.Published {
		published = 1
	}
	return q.sharingAfter(ctx, p.AgentID, "publishing", func(t *queries) error {
		return t.tx.AgentPublishSet(ctx, dbsqlc.AgentPublishSetParams{AgentID: p.AgentID, Published: published, Now: micros(p.Now)})
	})
}

func (q *queries) AgentListVisible(ctx context.Context, workspaceID uuid.UUID) ([]*store.Listing, error) {
	rows, err := q.read().AgentListVisible(ctx, workspaceID)
	out, err := all(rows, err, func(r dbsqlc.AgentListVisibleRow) *store.Listing {
		return &store.Listing{AgentID: r.AgentID, Name: r.Name, OwnerPersonID: nullUUID(r.OwnerPersonID)}
	})
	if err != nil {
		return nil, wrap(err, "listing the agents of workspace %s", workspaceID)
	}
	return out, nil
}

func (q *queries) AgentDirectory(ctx context.Context) ([]*store.Listing, error) {
	rows, err := q.read().AgentDirectory(ctx)
	out, err := all(rows, err, func(r dbsqlc.AgentDirectoryRow) *store.Listing {
		return &store.Listing{AgentID: r.AgentID, Name: r.Name, OwnerPersonID: nullUUID(r.OwnerPersonID)}
	})
	if err != nil {
		return nil, wrap(err, "listing the agent directory")
	}
	return out, nil
}

func toWorkspace(r dbsqlc.Workspace) *store.Workspace {
	return &store.Workspace{
		ID: r.ID, Name: r.Name, Kind: store.WorkspaceKind(r.Kind),
		OwnerPersonID: r.OwnerPersonID, CreatedAt: fromMicros(r.CreatedAt),
	}
}

func toMember(r dbsqlc.WorkspaceMember) *store.WorkspaceMember {
	return &store.WorkspaceMember{
		WorkspaceID: r.WorkspaceID, PersonID: r.PersonID, Role: store.Role(r.Role), CreatedAt: fromMicros(r.CreatedAt),
	}
}

func toWorkspaceBinding(r dbsqlc.WorkspaceBinding) *store.WorkspaceBinding {
	return &store.WorkspaceBinding{
		Platform: r.Platform, ExternalID: r.ExternalID, WorkspaceID: r.WorkspaceID, CreatedAt: fromMicros(r.CreatedAt),
	}
}

// affected turns a count of zero rows into sql.ErrNoRows (ErrNotFound once
// mapped).
func affected(n int64, err error) (int64, error) {
	if err == nil && n == 0 {
		return 0, sql.ErrNoRows
	}
	return n, err
}
