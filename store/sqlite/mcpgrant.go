package sqlite

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func mcpGrant(r dbsqlc.McpOauthGrant) *store.MCPGrant {
	return &store.MCPGrant{
		MCPGrantKey: store.MCPGrantKey{Server: r.Server, Workspace: r.Workspace},
		SealedGrant: r.SealedGrant, Version: r.Version, CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt),
	}
}

func (q *queries) MCPGrantGet(ctx context.Context, k *store.MCPGrantKey) (*store.MCPGrant, error) {
	r, err := q.read().MCPGrantGet(ctx, dbsqlc.MCPGrantGetParams{Server: k.Server, Workspace: k.Workspace})
	if err != nil {
		return nil, wrap(err, "reading the OAuth grant of MCP server %s", k)
	}
	return mcpGrant(r), nil
}

func (q *queries) MCPGrantPut(ctx context.Context, p *store.MCPGrantPutParams) (*store.MCPGrant, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.McpOauthGrant, error) {
		return t.tx.MCPGrantPut(ctx, dbsqlc.MCPGrantPutParams{Server: p.Server, Workspace: p.Workspace, SealedGrant: p.SealedGrant, Now: micros(p.Now)})
	})
	if err != nil {
		return nil, wrap(err, "storing the OAuth grant of MCP server %s", p.MCPGrantKey)
	}
	return mcpGrant(r), nil
}

func (q *queries) MCPGrantCreate(ctx context.Context, p *store.MCPGrantPutParams) (*store.MCPGrant, error) {
	rs, err := write(ctx, q, func(t *queries) ([]dbsqlc.McpOauthGrant, error) {
		return t.tx.MCPGrantInsert(ctx, dbsqlc.MCPGrantInsertParams{Server: p.Server, Workspace: p.Workspace, SealedGrant: p.SealedGrant, Now: micros(p.Now)})
	})
	if err == nil && len(rs) == 0 {
		return nil, wrap(store.ErrConflict, "creating the OAuth grant of MCP server %s: one is stored", p.MCPGrantKey)
	}
	if err != nil {
		return nil, wrap(err, "creating the OAuth grant of MCP server %s", p.MCPGrantKey)
	}
	return mcpGrant(rs[0]), nil
}

func (q *queries) MCPGrantSwap(ctx context.Context, p *store.MCPGrantSwapParams) (*store.MCPGrant, error) {
	rs, err := write(ctx, q, func(t *queries) ([]dbsqlc.McpOauthGrant, error) {
		return t.tx.MCPGrantSwap(ctx, dbsqlc.MCPGrantSwapParams{
			Server: p.Server, Workspace: p.Workspace, Expect: p.Expect, SealedGrant: p.SealedGrant, Now: micros(p.Now),
		})
	})
	if err == nil && len(rs) == 0 {
		err = store.ErrNotFound
	}
	if err != nil {
		return nil, wrap(err, "replacing the OAuth grant of MCP server %s", p.MCPGrantKey)
	}
	return mcpGrant(rs[0]), nil
}

func (q *queries) MCPGrantList(ctx context.Context) ([]*store.MCPGrant, error) {
	rs, err := q.read().MCPGrantList(ctx)
	if err != nil {
		return nil, wrap(err, "listing MCP OAuth grants")
	}
	out := make([]*store.MCPGrant, 0, len(rs))
	for _, r := range rs {
		out = append(out, mcpGrant(r))
	}
	return out, nil
}

func (q *queries) MCPGrantDelete(ctx context.Context, k *store.MCPGrantKey) error {
	_, err := write(ctx, q, func(t *queries) (struct{}, error) {
		n, err := t.tx.MCPGrantDelete(ctx, dbsqlc.MCPGrantDeleteParams{Server: k.Server, Workspace: k.Workspace})
		if err == nil && n == 0 {
			err = store.ErrNotFound
		}
		return struct{}{}, err
	})
	if err != nil {
		return wrap(err, "removing the OAuth grant of MCP server %s", k)
	}
	return nil
}
