package dbsqlc

// Written by hand, not by sqlc: sqlc scans every row into a struct, and a
// few reads hand their rows over unscanned instead (the store's EntryScan,
// a stream's catch-up). They run the generated queries' own text on the
// queries' own connection or transaction.

// DB is the connection or transaction q runs on.
func (q *Queries) DB() DBTX { return q.db }

// The text of generated queries read unscanned.
const (
	EntryScanSQL      = entryScan
	EntryErrorListSQL = entryErrorList
)
