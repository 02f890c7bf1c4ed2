package postgres

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func (q *queries) AgentUpsert(ctx context.Context, p *store.AgentUpsertParams) (*store.Agent, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).AgentUpsert, &dbsqlc.AgentUpsertParams{
		ID: newID(), Name: p.Name, Config: p.Config, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "upserting agent %s", p.Name)
	}
	return (*store.Agent)(&row), nil
}

func (q *queries) AgentGetByName(ctx context.Context, name string) (*store.Agent, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).AgentGetByName, name)
	if err != nil {
		return nil, wrap(err, "getting agent %s", name)
	}
	return (*store.Agent)(&row), nil
}
