package postgres

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func mcpGrant(r *dbsqlc.McpOauthGrant) *store.MCPGrant {
	return &store.MCPGrant{
		MCPGrantKey: store.MCPGrantKey{Server: r.Server, Workspace: r.Workspace},
		SealedGrant: r.SealedGrant, Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
}

func (q *queries) MCPGrantGet(ctx context.Context, k *store.MCPGrantKey) (*store.MCPGrant, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).MCPGrantGet, &dbsqlc.MCPGrantGetParams{Server: k.Server, Workspace: k.Workspace})
	if err != nil {
		return nil, wrap(err, "reading the OAuth grant of MCP server %s", k)
	}
	return mcpGrant(&row), nil
}

func (q *queries) MCPGrantPut(ctx context.Context, p *store.MCPGrantPutParams) (*store.MCPGrant, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).MCPGrantPut, &dbsqlc.MCPGrantPutParams{
		Server: p.Server, Workspace: p.Workspace, SealedGrant: p.SealedGrant, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "storing the OAuth grant of MCP server %s", p.MCPGrantKey)
	}
	return mcpGrant(&row), nil
}

func (q *queries) MCPGrantCreate(ctx context.Context, p *store.MCPGrantPutParams) (*store.MCPGrant, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).MCPGrantInsert, &dbsqlc.MCPGrantInsertParams{
		Server: p.Server, Workspace: p.Workspace, SealedGrant: p.SealedGrant, Now: ts(p.Now),
	})
	if err == nil && len(rows) == 0 {
		return nil, wrap(store.ErrConflict, "creating the OAuth grant of MCP server %s: one is stored", p.MCPGrantKey)
	}
	if err != nil {
		return nil, wrap(err, "creating the OAuth grant of MCP server %s", p.MCPGrantKey)
	}
	return mcpGrant(&rows[0]), nil
}

func (q *queries) MCPGrantSwap(ctx context.Context, p *store.MCPGrantSwapParams) (*store.MCPGrant, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).MCPGrantSwap, &dbsqlc.MCPGrantSwapParams{
		Server: p.Server, Workspace: p.Workspace, Expect: p.Expect, SealedGrant: p.SealedGrant, Now: ts(p.Now),
	})
	if err == nil && len(rows) == 0 {
		err = errNoRow
	}
	if err != nil {
		return nil, wrap(err, "replacing the OAuth grant of MCP server %s", p.MCPGrantKey)
	}
	return mcpGrant(&rows[0]), nil
}

func (q *queries) MCPGrantList(ctx context.Context) ([]*store.MCPGrant, error) {
	rows, err := call(ctx, q, func(db *dbsqlc.Queries, ctx context.Context, _ struct{}) ([]dbsqlc.McpOauthGrant, error) {
		return db.MCPGrantList(ctx)
	}, struct{}{})
	if err != nil {
		return nil, wrap(err, "listing MCP OAuth grants")
	}
	return each(rows, mcpGrant), nil
}

func (q *queries) MCPGrantDelete(ctx context.Context, k *store.MCPGrantKey) error {
	n, err := call(ctx, q, (*dbsqlc.Queries).MCPGrantDelete, &dbsqlc.MCPGrantDeleteParams{Server: k.Server, Workspace: k.Workspace})
	if err == nil && n == 0 {
		err = errNoRow
	}
	return wrap(err, "removing the OAuth grant of MCP server %s", k)
}
