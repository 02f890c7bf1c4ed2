package postgres

import (
	"context"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func (q *queries) GrantCreate(ctx context.Context, p *store.GrantCreateParams) (*store.Grant, error) {
	c := *p
	c.Now = ts(c.Now)
	row, err := call(ctx, q, (*dbsqlc.Queries).GrantCreate, &dbsqlc.GrantCreateParams{
		ID: c.ID, Agent: c.Agent, Tool: c.Tool, Workspace: c.Workspace, WorkspaceID: c.WorkspaceID,
		ArgsHash: c.ArgsHash, GrantedBy: c.GrantedBy, Now: c.Now,
	})
	if err != nil {
		return nil, wrap(err, "creating grant of %s to %s", p.Tool, p.Agent)
	}
	return grant(&row), nil
}

func (q *queries) GrantFind(ctx context.Context, p *store.GrantFindParams) (*store.Grant, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).GrantFind, &dbsqlc.GrantFindParams{
		Agent: p.Agent, Tool: p.Tool, Workspace: p.Workspace, WorkspaceID: p.WorkspaceID, ArgsHash: p.ArgsHash,
	})
	if err != nil {
		return nil, wrap(err, "finding a grant of %s to %s in %q", p.Tool, p.Agent, p.Workspace)
	}
	return grant(&row), nil
}

func (q *queries) GrantGet(ctx context.Context, id uuid.UUID) (*store.Grant, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).GrantGet, id)
	if err != nil {
		return nil, wrap(err, "getting grant %s", id)
	}
	return grant(&row), nil
}

func (q *queries) GrantList(ctx context.Context, p *store.GrantListParams) ([]*store.Grant, error) {
	arg := &dbsqlc.GrantListParams{Revoked: p.Revoked, MaxRows: int32(p.Limit), ByWorkspaceID: p.WorkspaceID}
	if p.Workspace != nil {
		arg.ByWorkspace, arg.Workspace = true, *p.Workspace
	}
	rows, err := call(ctx, q, (*dbsqlc.Queries).GrantList, arg)
	if err != nil {
		return nil, wrap(err, "listing grants")
	}
	return each(rows, func(r *dbsqlc.GrantListRow) *store.Grant {
		g := store.Grant(*r)
		return &g
	}), nil
}

func (q *queries) GrantRevoke(ctx context.Context, p *store.GrantRevokeParams) (*store.Grant, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).GrantRevoke, &dbsqlc.GrantRevokeParams{ID: p.ID, Now: ts(p.Now)})
	if err != nil {
		return nil, wrap(err, "revoking grant %s", p.ID)
	}
	return grant(&row), nil
}

func grant(r *dbsqlc.Grant) *store.Grant {
	return &store.Grant{
		ID: r.ID, Agent: r.Agent, Tool: r.Tool, Workspace: r.Workspace, ArgsHash: r.ArgsHash,
		GrantedBy: r.GrantedBy, CreatedAt: r.CreatedAt, RevokedAt: r.RevokedAt, WorkspaceID: r.WorkspaceID,
	}
}
