package postgres

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func (q *queries) PersonalityAppend(ctx context.Context, p *store.PersonalityAppendParams) (*store.Personality, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).PersonalityInsert, &dbsqlc.PersonalityInsertParams{
		AgentID: p.AgentID, Version: int32(p.After + 1), Text: p.Text, Author: p.Author, Now: ts(p.Now),
	})
	if err != nil {
		return nil, wrap(err, "writing personality version %d of agent %s", p.After+1, p.AgentID)
	}
	return personality(&row), nil
}

func (q *queries) PersonalityGet(ctx context.Context, p *store.PersonalityGetParams) (*store.Personality, error) {
	row, err := call(ctx, q, (*dbsqlc.Queries).PersonalityGet, &dbsqlc.PersonalityGetParams{AgentID: p.AgentID, Version: int32(p.Version)})
	if err != nil {
		return nil, wrap(err, "reading personality version %d of agent %s", p.Version, p.AgentID)
	}
	return personality(&row), nil
}

func (q *queries) PersonalityList(ctx context.Context, p *store.PersonalityListParams) ([]*store.Personality, error) {
	rows, err := call(ctx, q, (*dbsqlc.Queries).PersonalityList, &dbsqlc.PersonalityListParams{AgentID: p.AgentID, MaxRows: int32(p.Limit)})
	if err != nil {
		return nil, wrap(err, "listing personality versions of agent %s", p.AgentID)
	}
	return each(rows, personality), nil
}

func personality(r *dbsqlc.AgentPersonality) *store.Personality {
	return &store.Personality{AgentID: r.AgentID, Version: int(r.Version), Text: r.Text, Author: r.Author, CreatedAt: r.CreatedAt}
}
