package store

import "context"

// MaxSyncCursorLen bounds a saved cursor (Synapse's tokens are well under
// a hundred characters).
const MaxSyncCursorLen = 4096

func (q checked) SyncCursorGet(ctx context.Context, name string) (*SyncCursor, error) {
	if name == "" {
		return nil, invalidf("reading a sync cursor: Name is required")
	}
	return q.Queries.SyncCursorGet(ctx, name)
}

func (q checked) SyncCursorSave(ctx context.Context, p *SyncCursorSaveParams) error {
	switch {
	case p.Name == "":
		return invalidf("saving a sync cursor: Name is required")
	case p.Cursor == "" || len(p.Cursor) > MaxSyncCursorLen:
		return invalidf("saving sync cursor %s: Cursor must have 1 to %d bytes, has %d", p.Name, MaxSyncCursorLen, len(p.Cursor))
	case p.Now.IsZero():
		return invalidf("saving sync cursor %s: Now is required", p.Name)
	}
	return q.Queries.SyncCursorSave(ctx, p)
}
