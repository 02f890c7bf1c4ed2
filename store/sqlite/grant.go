package sqlite

import (
	"context"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func (q *queries) GrantCreate(ctx context.Context, p *store.GrantCreateParams) (*store.Grant, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Grant, error) {
		return t.tx.GrantInsert(ctx, dbsqlc.GrantInsertParams{
			ID:          p.ID,
			Agent:       p.Agent,
			Tool:        p.Tool,
			Workspace:   p.Workspace,
			WorkspaceID: uuidArg(p.WorkspaceID),
			ArgsHash:    p.ArgsHash,
			GrantedBy:   p.GrantedBy,
			Now:         micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "creating grant of %s to %s", p.Tool, p.Agent)
	}
	return grantOf(r), nil
}

func (q *queries) GrantFind(ctx context.Context, p *store.GrantFindParams) (*store.Grant, error) {
	r, err := q.read().GrantFind(ctx, dbsqlc.GrantFindParams{
		Agent: p.Agent, Tool: p.Tool, Workspace: p.Workspace, WorkspaceID: uuidArg(p.WorkspaceID), ArgsHash: p.ArgsHash,
	})
	if err != nil {
		return nil, wrap(err, "finding a grant of %s to %s in %q", p.Tool, p.Agent, p.Workspace)
	}
	return grantOf(r), nil
}

func (q *queries) GrantGet(ctx context.Context, id uuid.UUID) (*store.Grant, error) {
	r, err := q.read().GrantGet(ctx, id)
	if err != nil {
		return nil, wrap(err, "getting grant %s", id)
	}
	return grantOf(r), nil
}

func (q *queries) GrantList(ctx context.Context, p *store.GrantListParams) ([]*store.Grant, error) {
	arg := dbsqlc.GrantListParams{MaxRows: int64(p.Limit), ByWorkspaceID: uuidArg(p.WorkspaceID)}
	if p.Revoked {
		arg.Revoked = 1
	}
	if p.Workspace != nil {
		arg.ByWorkspace, arg.Workspace = 1, *p.Workspace
	}
	rows, err := q.read().GrantList(ctx, arg)
	if err != nil {
		return nil, wrap(err, "listing grants")
	}
	out := make([]*store.Grant, len(rows))
	for i, r := range rows {
		out[i] = grantOf(dbsqlc.Grant{
			ID: r.ID, Agent: r.Agent, Tool: r.Tool, Workspace: r.Workspace, ArgsHash: r.ArgsHash, GrantedBy: r.GrantedBy,
			CreatedAt: r.CreatedAt, RevokedAt: r.RevokedAt, WorkspaceID: r.WorkspaceID,
		})
		out[i].WorkspaceName = r.WorkspaceName
	}
	return out, nil
}

func (q *queries) GrantRevoke(ctx context.Context, p *store.GrantRevokeParams) (*store.Grant, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Grant, error) {
		return t.tx.GrantRevoke(ctx, dbsqlc.GrantRevokeParams{ID: p.ID, Now: micros(p.Now)})
	})
	if err != nil {
		return nil, wrap(err, "revoking grant %s", p.ID)
	}
	return grantOf(r), nil
}

func grantOf(r dbsqlc.Grant) *store.Grant {
	return &store.Grant{
		ID: r.ID, Agent: r.Agent, Tool: r.Tool, Workspace: r.Workspace, ArgsHash: r.ArgsHash,
		GrantedBy: r.GrantedBy, CreatedAt: fromMicros(r.CreatedAt), RevokedAt: nullMicros(r.RevokedAt),
		WorkspaceID: nullUUID(r.WorkspaceID),
	}
}
