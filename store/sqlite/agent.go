package sqlite

import (
	"context"
	"encoding/json"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func agent(r dbsqlc.Agent) *store.Agent {
	return &store.Agent{ID: r.ID, Name: r.Name, Config: json.RawMessage(r.Config), CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt)}
}

func (q *queries) AgentUpsert(ctx context.Context, p *store.AgentUpsertParams) (*store.Agent, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.Agent, error) {
		return t.tx.AgentUpsert(ctx, dbsqlc.AgentUpsertParams{ID: newID(), Name: p.Name, Config: string(p.Config), Now: micros(p.Now)})
	})
	if err != nil {
		return nil, wrap(err, "upserting agent %q", p.Name)
	}
	return agent(r), nil
}

func (q *queries) AgentGetByName(ctx context.Context, name string) (*store.Agent, error) {
	r, err := q.read().AgentGetByName(ctx, name)
	if err != nil {
		return nil, wrap(err, "getting agent %q", name)
	}
	return agent(r), nil
}

// InboundRecord is here with the agents: both are what the platforms and
// the config file feed in, not part of any conversation.
func (q *queries) InboundRecord(ctx context.Context, p *store.InboundRecordParams) (bool, error) {
	n, err := write(ctx, q, func(t *queries) (int64, error) {
		return t.tx.InboundRecord(ctx, dbsqlc.InboundRecordParams{Platform: p.Platform, EventID: p.EventID, Now: micros(p.Now)})
	})
	if err != nil {
		return false, wrap(err, "recording inbound event %s/%s", p.Platform, p.EventID)
	}
	return n == 1, nil
}

func (q *queries) InboundPrune(ctx context.Context, p *store.PruneParams) (int, error) {
	n, err := write(ctx, q, func(t *queries) (int64, error) {
		return t.tx.InboundPrune(ctx, dbsqlc.InboundPruneParams{Before: micros(p.Before), Limit: int64(p.Limit)})
	})
	if err != nil {
		return 0, wrap(err, "pruning inbound event ids before %s", p.Before)
	}
	return int(n), nil
}
