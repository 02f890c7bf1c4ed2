package sqlite

import (
	"context"
	"encoding/json"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// Run messages (migration 0025). The insert's primary key is the intent's
// uniqueness (ErrConflict); a foreign key names a missing run or binding
// (ErrNotFound).

func (q *queries) RunMessageCreate(ctx context.Context, p *store.RunMessageCreateParams) (*store.RunMessage, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.RunMessage, error) {
		return t.tx.RunMessageInsert(ctx, dbsqlc.RunMessageInsertParams{
			RunID: p.RunID, BindingID: p.BindingID, Platform: p.Platform, Kind: p.Kind, Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "recording the message of run %s on binding %s", p.RunID, p.BindingID)
	}
	return runMessageOf(r), nil
}

func (q *queries) RunMessageGet(ctx context.Context, k *store.RunMessageKey) (*store.RunMessage, error) {
	r, err := q.read().RunMessageGet(ctx, dbsqlc.RunMessageGetParams{RunID: k.RunID, BindingID: k.BindingID})
	if err != nil {
		return nil, wrap(err, "reading the message of run %s on binding %s", k.RunID, k.BindingID)
	}
	return runMessageOf(r), nil
}

func (q *queries) RunMessageSave(ctx context.Context, p *store.RunMessageSaveParams) (*store.RunMessage, error) {
	r, err := write(ctx, q, func(t *queries) (dbsqlc.RunMessage, error) {
		return t.tx.RunMessageSave(ctx, dbsqlc.RunMessageSaveParams{
			RunID: p.RunID, BindingID: p.BindingID, PrevVersion: p.PrevVersion, Channel: p.Channel,
			MessageID: p.MessageID, Kind: p.Kind, State: string(p.State), Sent: string(p.Sent), Now: micros(p.Now),
		})
	})
	if err != nil {
		return nil, wrap(err, "saving the message of run %s on binding %s", p.RunID, p.BindingID)
	}
	return runMessageOf(r), nil
}

func runMessageOf(r dbsqlc.RunMessage) *store.RunMessage {
	return &store.RunMessage{
		RunID: r.RunID, BindingID: r.BindingID, Platform: r.Platform, Channel: r.Channel, MessageID: r.MessageID,
		Kind: r.Kind, State: store.RunMessageState(r.State), Version: r.Version, Sent: json.RawMessage(r.Sent),
		CreatedAt: fromMicros(r.CreatedAt), UpdatedAt: fromMicros(r.UpdatedAt),
	}
}
