package store

import (
	"context"
	"time"
)

// Sync cursors: where a platform's event stream was read up to, for
// platforms that are pulled rather than pushed (Matrix /sync's next_batch).
// One row per name ("matrix:@bot:example.org"); a restart, or the instance
// that takes the reading over, continues from it.

// SyncCursor is a saved position.
type SyncCursor struct {
	Name      string
	Cursor    string
	UpdatedAt time.Time
}

// SyncCursorSaveParams saves a position, replacing the last.
type SyncCursorSaveParams struct {
	Name   string
	Cursor string
	Now    time.Time
}

// SyncCursorQueries are the sync cursors' reads and writes.
type SyncCursorQueries interface {
	// SyncCursorGet reads a cursor; ErrNotFound when none was saved.
	SyncCursorGet(ctx context.Context, name string) (*SyncCursor, error)
	// SyncCursorSave saves a cursor, replacing any.
	SyncCursorSave(ctx context.Context, p *SyncCursorSaveParams) error
}
