package postgres

import (
	"context"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

func (q *queries) SyncCursorGet(ctx context.Context, name string) (*store.SyncCursor, error) {
	r, err := call(ctx, q, (*dbsqlc.Queries).SyncCursorGet, name)
	if err != nil {
		return nil, wrap(err, "reading sync cursor %s", name)
	}
	return &store.SyncCursor{Name: r.Name, Cursor: r.Cursor, UpdatedAt: r.UpdatedAt}, nil
}

func (q *queries) SyncCursorSave(ctx context.Context, p *store.SyncCursorSaveParams) error {
	err := exec(ctx, q, (*dbsqlc.Queries).SyncCursorUpsert, &dbsqlc.SyncCursorUpsertParams{Name: p.Name, Cursor: p.Cursor, Now: ts(p.Now)})
	return wrap(err, "saving sync cursor %s", p.Name)
}
