package sqlite

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func (q *queries) PersonalityAppend(ctx context.Context, p *store.PersonalityAppendParams) (*store.Personality, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.AgentPersonality, error) {
		return t.tx.PersonalityInsert(ctx, dbsqlc.PersonalityInsertParams{
			AgentID: p.AgentID, Version: int64(p.After + 1), Text: p.Text, Author: p.Author, Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "writing personality version %d of agent %s", p.After+1, p.AgentID)
	}
	return personalityOf(r), nil
}

func (q *queries) PersonalityGet(ctx context.Context, p *store.PersonalityGetParams) (*store.Personality, error) {
	r, err := q.read().PersonalityGet(ctx, dbsqlc.PersonalityGetParams{AgentID: p.AgentID, Version: int64(p.Version)})
	if err != nil {
		return nil, wrap(err, "reading personality version %d of agent %s", p.Version, p.AgentID)
	}
	return personalityOf(r), nil
}

func (q *queries) PersonalityList(ctx context.Context, p *store.PersonalityListParams) ([]*store.Personality, error) {
	rows, err := q.read().PersonalityList(ctx, dbsqlc.PersonalityListParams{AgentID: p.AgentID, MaxRows: int64(p.Limit)})
	if err != nil {
		return nil, wrap(err, "listing personality versions of agent %s", p.AgentID)
	}
	out := make([]*store.Personality, len(rows))
	for i, r := range rows {
		out[i] = personalityOf(r)
	}
	return out, nil
}

func personalityOf(r dbsqlc.AgentPersonality) *store.Personality {
	return &store.Personality{
		AgentID: r.AgentID, Version: int(r.Version), Text: r.Text, Author: r.Author, CreatedAt: fromMicros(r.CreatedAt),
	}
}
