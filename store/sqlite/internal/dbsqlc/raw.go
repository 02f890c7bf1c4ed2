package dbsqlc

import (
	"context"
	"database/sql"
)

// Written by hand, not by sqlc: sqlc scans every row into a struct, and a
// stream's catch-up hands its rows over unscanned instead (the store's
// EntryScan). It runs the generated query's own prepared statement.

// EntryScanRows runs EntryScan and returns its rows for the caller to read.
func (q *Queries) EntryScanRows(ctx context.Context, arg EntryScanParams) (*sql.Rows, error) {
	return q.query(ctx, q.entryScanStmt, entryScan, arg.ConversationID, arg.AfterSeq, arg.UpTo, arg.Limit)
}
