package sqlite

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

func (q *queries) SyncCursorGet(ctx context.Context, name string) (*store.SyncCursor, error) {
	r, err := q.read().SyncCursorGet(ctx, name)
	if err != nil {
		return nil, wrap(err, "reading sync cursor %s", name)
	}
	return &store.SyncCursor{Name: r.Name, Cursor: r.Cursor, UpdatedAt: fromMicros(r.UpdatedAt)}, nil
}

func (q *queries) SyncCursorSave(ctx context.Context, p *store.SyncCursorSaveParams) error {
	_, err := write(ctx, q, func(t *queries) (struct{}, error) {
		return struct{}{}, t.tx.SyncCursorUpsert(ctx, dbsqlc.SyncCursorUpsertParams{Name: p.Name, Cursor: p.Cursor, Now: micros(p.Now)})
	})
	if err != nil {
		return wrap(err, "saving sync cursor %s", p.Name)
	}
	return nil
}
