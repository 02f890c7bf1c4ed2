package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// claimSettings is what a claim runs under, set for its own transaction
// only (set_config's is_local): synchronous_commit off (see WorkClaim), no
// bitmap scans and no sort where an index has the order (see claimDB), and
// so no JIT (a disabled sort still costs its plan 10^10, far past
// jit_above_cost).
const claimSettings = "SELECT set_config('synchronous_commit', 'off', true), set_config('enable_bitmapscan', 'off', true), " +
	"set_config('enable_sort', 'off', true), set_config('jit', 'off', true)"

// claimDB runs the claim query on the claim pool with its settings sent in
// the same round trip: a batch of the settings and the query, which
// Postgres runs as one implicit transaction (one Sync in the extended
// protocol, one Query message in the simple one). The settings are not
// startup parameters: a transaction pooler (PgBouncer, Supabase's) refuses
// startup parameters it does not track, and would hand a session setting
// to whichever client gets the server connection next.
//
// Why no bitmap scan: every scan of the claim is meant to be an index scan
// in claim order, stopped at its LIMIT. Without statistics (a new or
// freshly filled table, before autovacuum analyzed it) the planner guesses
// that few rows match the kinds and picks a bitmap scan of every available
// item and a sort: measured, 4ms a claim at 2,500 available items against
// 0.9ms. No bitmap scan serves a LIMIT in order. Nor does a sort: the
// queue's count index (kind, state), which /metrics reads, matches the
// claim's kind and state better than work_items_available_idx does, and
// without statistics (or with statistics from before a backlog built up)
// the planner read every available item of the kinds through it and sorted
// them: 52ms a claim at 20,000 available items against 1.8ms, a claim
// whose time grows with the backlog, so a queue that fell behind fell
// further (burn-down of 20,000 items: 493 items/s, of 5,000: 1,206). With
// sorts off, the available items are read in claim order from their own
// index; the sorts no index can replace (the few candidates' ranking)
// remain. The settings are in force when the claim is planned: the batch's
// statements run in order.
type claimDB struct{ pool *pgxpool.Pool }

func (c claimDB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	b := &pgx.Batch{}
	b.Queue(claimSettings)
	b.Queue(sql, args...)
	br := c.pool.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		return nil, errors.Join(err, br.Close())
	}
	rows, err := br.Query()
	if err != nil {
		return nil, errors.Join(err, br.Close())
	}
	return &batchRows{Rows: rows, br: br}, nil
}

func (c claimDB) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return c.pool.Exec(ctx, sql, args...)
}

func (c claimDB) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return c.pool.QueryRow(ctx, sql, args...)
}

func (c claimDB) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return c.pool.SendBatch(ctx, b)
}

// batchRows closes the batch (returning its connection to the pool, and
// reading the end of the implicit transaction) when the rows are closed.
type batchRows struct {
	pgx.Rows
	br     pgx.BatchResults
	closed bool
	err    error
}

func (r *batchRows) Close() {
	if r.closed {
		return
	}
	r.closed = true
	r.Rows.Close()
	r.err = r.br.Close()
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}
