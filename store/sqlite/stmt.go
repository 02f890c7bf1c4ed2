package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"sync/atomic"
)

// Preparing a statement costs about as much as running a small one, so each
// pool keeps its named statements prepared. database/sql re-prepares a
// *sql.Stmt on whichever connection runs it, and SQLite re-prepares it after
// a schema change, so the cache never goes stale.

// stmtCache holds prepared statements by query name for one pool. Lookups are
// lock-free: a preparer may be waiting for the writer connection while the
// goroutine holding it looks statements up.
type stmtCache struct {
	db *sql.DB
	mu sync.Mutex // serialises preparers
	m  atomic.Pointer[map[string]*sql.Stmt]
	// complete is set once every named query is prepared.
	complete atomic.Bool
}

func newStmtCache(db *sql.DB) *stmtCache {
	c := &stmtCache{db: db}
	c.m.Store(&map[string]*sql.Stmt{})
	return c
}

func (c *stmtCache) get(name string) *sql.Stmt { return (*c.m.Load())[name] }

// prepare returns the named statement, preparing it on first use. It needs a
// connection of the pool, so it must not run inside a transaction of a
// one-connection pool (the writer): use prepareAll before beginning instead.
func (c *stmtCache) prepare(ctx context.Context, name string) (*sql.Stmt, error) {
	if st := c.get(name); st != nil {
		return st, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.get(name); st != nil {
		return st, nil
	}
	st, err := c.db.PrepareContext(ctx, sqlText.Get(name))
	if err != nil {
		return nil, err
	}
	c.add(map[string]*sql.Stmt{name: st})
	return st, nil
}

// prepareAll prepares every named query not prepared yet. Queries on tables
// that do not exist yet (before Migrate) fail and are retried next time.
func (c *stmtCache) prepareAll(ctx context.Context) {
	if c.complete.Load() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := *c.m.Load()
	added := map[string]*sql.Stmt{}
	failed := false
	for name, text := range sqlText {
		if cur[name] != nil {
			continue
		}
		st, err := c.db.PrepareContext(ctx, text)
		if err != nil {
			failed = true
			continue
		}
		added[name] = st
	}
	c.add(added)
	if !failed {
		c.complete.Store(true)
	}
}

// add publishes a new map with extra added; callers hold mu.
func (c *stmtCache) add(extra map[string]*sql.Stmt) {
	if len(extra) == 0 {
		return
	}
	cur := *c.m.Load()
	next := make(map[string]*sql.Stmt, len(cur)+len(extra))
	for k, v := range cur {
		next[k] = v
	}
	for k, v := range extra {
		next[k] = v
	}
	c.m.Store(&next)
}

func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, st := range *c.m.Load() {
		errs = append(errs, st.Close())
	}
	c.m.Store(&map[string]*sql.Stmt{})
	c.complete.Store(false)
	return errors.Join(errs...)
}

// dbtx runs named queries: on a transaction or on a pool.
type dbtx interface {
	query(ctx context.Context, name string, args ...any) (*sql.Rows, error)
	queryRow(ctx context.Context, name string, args ...any) *sql.Row
	exec(ctx context.Context, name string, args ...any) (sql.Result, error)
	// QueryRowContext runs query text unprepared. Prefer queryRow, which
	// takes a query name and uses the prepared statement.
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// txRunner runs named queries in a transaction, through the pool's prepared
// statements when they are ready and as plain text otherwise.
type txRunner struct {
	tx    *sql.Tx
	cache *stmtCache // nil: always plain text
	local map[string]*sql.Stmt
}

func newTxRunner(tx *sql.Tx, cache *stmtCache) *txRunner {
	return &txRunner{tx: tx, cache: cache}
}

func (r *txRunner) stmt(ctx context.Context, name string) *sql.Stmt {
	if st := r.local[name]; st != nil {
		return st
	}
	if r.cache == nil {
		return nil
	}
	parent := r.cache.get(name)
	if parent == nil {
		return nil
	}
	st := r.tx.StmtContext(ctx, parent)
	if r.local == nil {
		r.local = map[string]*sql.Stmt{}
	}
	r.local[name] = st
	return st
}

func (r *txRunner) query(ctx context.Context, name string, args ...any) (*sql.Rows, error) {
	if st := r.stmt(ctx, name); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return r.tx.QueryContext(ctx, sqlText.Get(name), args...)
}

func (r *txRunner) queryRow(ctx context.Context, name string, args ...any) *sql.Row {
	if st := r.stmt(ctx, name); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return r.tx.QueryRowContext(ctx, sqlText.Get(name), args...)
}

func (r *txRunner) exec(ctx context.Context, name string, args ...any) (sql.Result, error) {
	if st := r.stmt(ctx, name); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return r.tx.ExecContext(ctx, sqlText.Get(name), args...)
}

func (r *txRunner) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return r.tx.QueryRowContext(ctx, query, args...)
}

// poolRunner runs named queries on a pool, preparing them on first use.
type poolRunner struct {
	cache *stmtCache
}

func (r poolRunner) query(ctx context.Context, name string, args ...any) (*sql.Rows, error) {
	st, err := r.cache.prepare(ctx, name)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (r poolRunner) queryRow(ctx context.Context, name string, args ...any) *sql.Row {
	st, err := r.cache.prepare(ctx, name)
	if err != nil {
		// *sql.Row carries no constructor for an error; run the text so the
		// same error comes back through Scan.
		return r.cache.db.QueryRowContext(ctx, sqlText.Get(name), args...)
	}
	return st.QueryRowContext(ctx, args...)
}

func (r poolRunner) exec(ctx context.Context, name string, args ...any) (sql.Result, error) {
	st, err := r.cache.prepare(ctx, name)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (r poolRunner) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return r.cache.db.QueryRowContext(ctx, query, args...)
}

// textRunner runs named queries as plain text on a pool: for the migration
// runner, which works before the schema the cached statements need exists.
type textRunner struct {
	db *sql.DB
}

func (r textRunner) query(ctx context.Context, name string, args ...any) (*sql.Rows, error) {
	return r.db.QueryContext(ctx, sqlText.Get(name), args...)
}

func (r textRunner) queryRow(ctx context.Context, name string, args ...any) *sql.Row {
	return r.db.QueryRowContext(ctx, sqlText.Get(name), args...)
}

func (r textRunner) exec(ctx context.Context, name string, args ...any) (sql.Result, error) {
	return r.db.ExecContext(ctx, sqlText.Get(name), args...)
}

func (r textRunner) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return r.db.QueryRowContext(ctx, query, args...)
}
