package bench

// The bare limits: what the store's engine does with no Switchboard code
// around it, beside the figures whose goal is set against it (issue
// "Closer to the limit"). Each is written here in a few statements on the
// driver's raw connection, so a figure can say how far above the floor it
// runs, not only how far above its current baseline.

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres"
	"github.com/switchboardhq/switchboard/store/sqlite"
)

const (
	bareQueueCreatePostgres = `CREATE TABLE bench_bare_queue (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    state text NOT NULL DEFAULT 'available',
    payload jsonb NOT NULL DEFAULT '{}');
CREATE INDEX bench_bare_queue_available ON bench_bare_queue (id) WHERE state = 'available'`
	bareQueueFillPostgres  = `INSERT INTO bench_bare_queue (payload) SELECT '{}' FROM generate_series(1, $1)`
	bareQueueClaimPostgres = `SELECT id FROM bench_bare_queue WHERE state = 'available' ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`
	bareQueueDonePostgres  = `UPDATE bench_bare_queue SET state = 'done' WHERE id = ANY($1)`

	bareQueueCreateSQLite = `CREATE TABLE bench_bare_queue (
    id INTEGER PRIMARY KEY,
    state TEXT NOT NULL DEFAULT 'available',
    payload TEXT NOT NULL DEFAULT '{}');
CREATE INDEX bench_bare_queue_available ON bench_bare_queue (id) WHERE state = 'available'`
	bareQueueFillSQLite = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
INSERT INTO bench_bare_queue (payload) SELECT '{}' FROM n`
	// SQLite has one writer and no SKIP LOCKED: the claim and the finish
	// are one statement.
	bareQueueTakeSQLite = `UPDATE bench_bare_queue SET state = 'done'
WHERE id IN (SELECT id FROM bench_bare_queue WHERE state = 'available' ORDER BY id LIMIT ?)`
)

// bareQueue fills a bare queue table with n rows and empties it in
// batches of batch, each claimed and finished in one transaction
// (Postgres: SELECT … FOR UPDATE SKIP LOCKED, then one UPDATE of the
// batch), and returns the rate in items/s of the emptying.
func bareQueue(ctx context.Context, st store.Store, n, batch int) (float64, error) {
	take, err := bareQueueTaker(ctx, st, n)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	for done := 0; done < n; {
		got, err := take(ctx, batch)
		if err != nil {
			return 0, fmt.Errorf("the bare queue: %w", err)
		}
		if got == 0 {
			return 0, fmt.Errorf("the bare queue ran dry after %d of %d items", done, n)
		}
		done += got
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// bareQueueTaker makes and fills the bare queue table with n items, and
// returns what claims and finishes up to batch of them in one
// transaction, saying how many it took.
func bareQueueTaker(ctx context.Context, st store.Store, n int) (func(ctx context.Context, batch int) (int, error), error) {
	switch s := st.(type) {
	case *postgres.Store:
		pool := s.Pool()
		if _, err := pool.Exec(ctx, bareQueueCreatePostgres); err != nil {
			return nil, fmt.Errorf("creating the bare queue: %w", err)
		}
		if _, err := pool.Exec(ctx, bareQueueFillPostgres, n); err != nil {
			return nil, fmt.Errorf("filling the bare queue: %w", err)
		}
		return func(ctx context.Context, batch int) (got int, err error) {
			err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				rows, err := tx.Query(ctx, bareQueueClaimPostgres, batch)
				if err != nil {
					return err
				}
				ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
				if err != nil || len(ids) == 0 {
					return err
				}
				got = len(ids)
				_, err = tx.Exec(ctx, bareQueueDonePostgres, ids)
				return err
			})
			return got, err
		}, nil
	case *sqlite.Store:
		db := s.DB()
		if _, err := db.ExecContext(ctx, bareQueueCreateSQLite); err != nil {
			return nil, fmt.Errorf("creating the bare queue: %w", err)
		}
		if _, err := db.ExecContext(ctx, bareQueueFillSQLite, n); err != nil {
			return nil, fmt.Errorf("filling the bare queue: %w", err)
		}
		return func(ctx context.Context, batch int) (int, error) {
			res, err := db.ExecContext(ctx, bareQueueTakeSQLite, batch)
			if err != nil {
				return 0, err
			}
			got, err := res.RowsAffected()
			return int(got), err
		}, nil
	}
	return nil, fmt.Errorf("no bare queue for a %T store", st)
}

const (
	bareEntriesPostgres = `SELECT seq, content FROM entries WHERE conversation_id = $1 AND seq IS NOT NULL ORDER BY seq`
	bareEntriesSQLite   = `SELECT seq, content FROM entries WHERE conversation_id = ? AND seq IS NOT NULL ORDER BY seq`
)

// bareCatchUp serves a conversation's entries as the stream's catch-up
// would at its floor: one SELECT of the two columns a frame needs, each
// row written as an SSE frame (event, id, data: the stored JSON as it is;
// the bench's entries are compact, one line) into the response's buffer.
// The bench's client counts its frames as it counts the stream's.
func bareCatchUp(st store.Store, conv uuid.UUID) (http.Handler, error) {
	// read runs the SELECT and calls each with every row.
	var read func(ctx context.Context, each func(seq int64, content []byte) error) error
	switch s := st.(type) {
	case *postgres.Store:
		read = func(ctx context.Context, each func(int64, []byte) error) error {
			rows, err := s.Pool().Query(ctx, bareEntriesPostgres, conv)
			if err != nil {
				return err
			}
			defer rows.Close()
			var seq int64
			var content []byte
			return eachRow(rows, func() error { return rows.Scan(&seq, &content) }, func() error { return each(seq, content) })
		}
	case *sqlite.Store:
		read = func(ctx context.Context, each func(int64, []byte) error) error {
			rows, err := s.DB().QueryContext(ctx, bareEntriesSQLite, conv.String())
			if err != nil {
				return err
			}
			defer rows.Close()
			var seq int64
			var content sql.RawBytes // the driver's bytes, not a copy
			return eachRow(rows, func() error { return rows.Scan(&seq, &content) }, func() error { return each(seq, content) })
		}
	default:
		return nil, fmt.Errorf("no bare catch-up for a %T store", st)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-store")
		bw := bufio.NewWriterSize(w, 32<<10)
		var num []byte
		err := read(r.Context(), func(seq int64, content []byte) error {
			num = strconv.AppendInt(num[:0], seq, 10)
			bw.WriteString("event: entry\nid: ")
			bw.Write(num)
			bw.WriteString("\ndata: ")
			bw.Write(content)
			_, err := bw.WriteString("\n\n")
			return err
		})
		if err == nil {
			_ = bw.Flush()
		}
		// On an error the client sees a short stream and says how short.
	}), nil
}

// eachRow scans every row of rows and hands it on, as pgx's rows and
// database/sql's both iterate.
func eachRow(rows interface {
	Next() bool
	Err() error
}, scan, emit func() error) error {
	for rows.Next() {
		if err := scan(); err != nil {
			return err
		}
		if err := emit(); err != nil {
			return err
		}
	}
	return rows.Err()
}
