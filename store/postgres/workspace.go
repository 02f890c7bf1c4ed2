package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// Workspaces, their members, the platform teams bound to them and where
// agents answer. The rules in store make the owner's membership with the
// workspace and keep the owner in place.

func (q *queries) WorkspaceCreate(ctx context.Context, p *store.WorkspaceCreateParams) (*store.Workspace, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).WorkspaceInsert, &dbsqlc.WorkspaceInsertParams{
		ID: p.ID, Name: p.Name, Kind: string(p.Kind), OwnerPersonID: p.OwnerPersonID, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "creating workspace %q", p.Name)
	}
	return workspace(&row), nil
}

func (q *queries) WorkspaceEnsurePersonal(ctx context.Context, p *store.WorkspaceEnsurePersonalParams) (*store.Workspace, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).WorkspacePersonalInsert, &dbsqlc.WorkspacePersonalInsertParams{
		ID: newID(), Name: p.Name, OwnerPersonID: p.PersonID, Now: ts(p.Now),
	})
	if errors.Is(err, errNoRow) {
		row, err = call(ctx, q, (*dbsqlc.Queries).WorkspacePersonalGet, p.PersonID)
	}
	if err != nil {
		return nil, wrap(err, "ensuring the personal workspace of %s", p.PersonID)
	}
	return workspace(&row), nil
}

func (q *queries) WorkspaceGet(ctx context.Context, id uuid.UUID) (*store.Workspace, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).WorkspaceGet, id)
	if err != nil {
		return nil, wrap(err, "getting workspace %s", id)
	}
	return workspace(&row), nil
}

func (q *queries) WorkspaceListByPerson(ctx context.Context, personID uuid.UUID) ([]*store.Membership, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).WorkspaceListByPerson, personID)
	if err != nil {
		return nil, wrap(err, "listing the workspaces of %s", personID)
	}
	return each(rows, func(r *dbsqlc.WorkspaceListByPersonRow) *store.Membership {
		return &store.Membership{Workspace: workspace(&r.Workspace), Role: store.Role(r.Role)}
	}), nil
}

func (q *queries) WorkspaceDelete(ctx context.Context, id uuid.UUID) error {
	n, err := call(ctx, q, (*dbsqlc.Queries).WorkspaceDelete, id)
	return wrap(found(n, err), "deleting workspace %s", id)
}

func (q *queries) WorkspaceMemberPut(ctx context.Context, p *store.WorkspaceMemberPutParams) (*store.WorkspaceMember, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).WorkspaceMemberUpsert, &dbsqlc.WorkspaceMemberUpsertParams{
		WorkspaceID: p.WorkspaceID, PersonID: p.PersonID, Role: string(p.Role), Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "putting %s in workspace %s as %s", p.PersonID, p.WorkspaceID, p.Role)
	}
	return memberRow(&row), nil
}

func (q *queries) WorkspaceMemberGet(ctx context.Context, p *store.WorkspaceMemberParams) (*store.WorkspaceMember, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).WorkspaceMemberGet, (*dbsqlc.WorkspaceMemberGetParams)(p))
	if err != nil {
		return nil, wrap(err, "getting member %s of workspace %s", p.PersonID, p.WorkspaceID)
	}
	return memberRow(&row), nil
}

func (q *queries) WorkspaceMemberList(ctx context.Context, workspaceID uuid.UUID) ([]*store.WorkspaceMember, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).WorkspaceMemberList, workspaceID)
	if err != nil {
		return nil, wrap(err, "listing members of workspace %s", workspaceID)
	}
	return each(rows, memberRow), nil
}

func (q *queries) WorkspaceMemberRemove(ctx context.Context, p *store.WorkspaceMemberParams) error {
	n, err := call(ctx, q, (*dbsqlc.Queries).WorkspaceMemberDelete, (*dbsqlc.WorkspaceMemberDeleteParams)(p))
	return wrap(found(n, err), "removing member %s of workspace %s", p.PersonID, p.WorkspaceID)
}

func (q *queries) WorkspaceBind(ctx context.Context, p *store.WorkspaceBindParams) (*store.WorkspaceBinding, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).WorkspaceBind, &dbsqlc.WorkspaceBindParams{
		Platform: p.Platform, ExternalID: p.ExternalID, WorkspaceID: p.WorkspaceID, Now: ts(p.Now),
	})
	if errors.Is(err, errNoRow) {
		err = fmt.Errorf("%w: %s %s is bound to another workspace", store.ErrConflict, p.Platform, p.ExternalID)
	}
	if err != nil {
		return nil, wrap(err, "binding %s %s to workspace %s", p.Platform, p.ExternalID, p.WorkspaceID)
	}
	return (*store.WorkspaceBinding)(&row), nil
}

func (q *queries) WorkspaceBindingFind(ctx context.Context, p *store.WorkspaceBindingFindParams) (*store.WorkspaceBinding, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).WorkspaceBindingFind, (*dbsqlc.WorkspaceBindingFindParams)(p))
	if err != nil {
		return nil, wrap(err, "finding the workspace of %s %s", p.Platform, p.ExternalID)
	}
	return (*store.WorkspaceBinding)(&row), nil
}

func (q *queries) ConversationWorkspace(ctx context.Context, conversationID uuid.UUID) (*uuid.UUID, error) {
	id, err := call(ctx, q, (*dbsqlc.Queries).ConversationWorkspace, conversationID)
	if err != nil {
		return nil, wrap(err, "getting the workspace of conversation %s", conversationID)
	}
	return id, nil
}

func (q *queries) ScheduleWorkspace(ctx context.Context, scheduleID uuid.UUID) (*uuid.UUID, error) {
	id, err := call(ctx, q, (*dbsqlc.Queries).ScheduleWorkspace, scheduleID)
	return id, wrap(err, "getting the workspace of schedule %s", scheduleID)
}

func (q *queries) ConversationWorkspaceSet(ctx context.Context, p *store.ConversationWorkspaceSetParams) error {
	n, err := call(ctx, q, (*dbsqlc.Queries).ConversationWorkspaceSet, &dbsqlc.ConversationWorkspaceSetParams{
		ID: p.ConversationID, WorkspaceID: &p.WorkspaceID,
	})
	if err == nil && n == 0 {
		// Missing, or in another workspace: the read tells which.
		if _, err = q.ConversationWorkspace(ctx, p.ConversationID); err == nil {
			err = fmt.Errorf("%w: conversation is in another workspace", store.ErrConflict)
		}
	}
	return wrap(err, "putting conversation %s in workspace %s", p.ConversationID, p.WorkspaceID)
}

func (q *queries) AgentSharingGet(ctx context.Context, agentID uuid.UUID) (*store.AgentSharing, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).AgentSharingGet, agentID)
	if err != nil {
		return nil, wrap(err, "getting the sharing of agent %s", agentID)
	}
	pins, err := call(ctx, q, (*dbsqlc.Queries).AgentPinList, agentID)
	if err != nil {
		return nil, wrap(err, "listing the pins of agent %s", agentID)
	}
	return &store.AgentSharing{
		AgentID: row.AgentID, OwnerPersonID: row.OwnerPersonID, Pins: pins, Published: row.Published, UpdatedAt: row.UpdatedAt,
	}, nil
}

func (q *queries) AgentOwnerSet(ctx context.Context, p *store.AgentOwnerSetParams) (*store.AgentSharing, error) {
	err := exec(ctx, q, (*dbsqlc.Queries).AgentOwnerSet, &dbsqlc.AgentOwnerSetParams{
		AgentID: p.AgentID, OwnerPersonID: p.OwnerPersonID, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "setting the owner of agent %s", p.AgentID)
	}
	return q.AgentSharingGet(ctx, p.AgentID)
}

func (q *queries) AgentPin(ctx context.Context, p *store.AgentPinParams) (*store.AgentSharing, error) {
	ids := make([]string, len(p.WorkspaceIDs))
	for i, id := range p.WorkspaceIDs {
		ids[i] = id.String()
	}
	err := exec(ctx, q, (*dbsqlc.Queries).AgentPinsReplace, &dbsqlc.AgentPinsReplaceParams{
		AgentID: p.AgentID, WorkspaceIds: ids, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "pinning agent %s", p.AgentID)
	}
	return q.AgentSharingGet(ctx, p.AgentID)
}

func (q *queries) AgentPublish(ctx context.Context, p *store.AgentPublishParams) (*store.AgentSharing, error) {
	err := exec(ctx, q, (*dbsqlc.Queries).AgentPublishSet, &dbsqlc.AgentPublishSetParams{
		AgentID: p.AgentID, Published: p.Published, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "publishing agent %s", p.AgentID)
	}
	return q.AgentSharingGet(ctx, p.AgentID)
}

func (q *queries) AgentListVisible(ctx context.Context, workspaceID uuid.UUID) ([]*store.Listing, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).AgentListVisible, workspaceID)
	if err != nil {
		return nil, wrap(err, "listing the agents of workspace %s", workspaceID)
	}
	return each(rows, func(r *dbsqlc.AgentListVisibleRow) *store.Listing { return (*store.Listing)(r) }), nil
}

func (q *queries) AgentDirectory(ctx context.Context) ([]*store.Listing, error) {
	rows, err := call(ctx, q, func(db *dbsqlc.Queries, ctx context.Context, _ struct{}) ([]dbsqlc.AgentDirectoryRow, error) {
		return db.AgentDirectory(ctx)
	}, struct{}{})
	if err != nil {
		return nil, wrap(err, "listing the agent directory")
	}
	return each(rows, func(r *dbsqlc.AgentDirectoryRow) *store.Listing { return (*store.Listing)(r) }), nil
}

func workspace(r *dbsqlc.Workspace) *store.Workspace {
	return &store.Workspace{ID: r.ID, Name: r.Name, Kind: store.WorkspaceKind(r.Kind), OwnerPersonID: r.OwnerPersonID, CreatedAt: r.CreatedAt}
}

func memberRow(r *dbsqlc.WorkspaceMember) *store.WorkspaceMember {
	return &store.WorkspaceMember{WorkspaceID: r.WorkspaceID, PersonID: r.PersonID, Role: store.Role(r.Role), CreatedAt: r.CreatedAt}
}

// found turns a count of zero rows into ErrNotFound.
func found(n int64, err error) error {
	if err == nil && n == 0 {
		return errNoRow
	}
	return err
}
