package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"

	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"
)

// stmtCache prepares a pool's statements on their first use and keeps them
// until the store closes. Preparing all of them at open (dbsqlc.Prepare, on
// both pools) took about half of the service's start-to-ready CPU and held
// a compiled program for each of ~250 statements on each pool, most of which
// an idle service never runs; a statement now costs its preparation once,
// when something first needs it, and the same as before from then on.
//
// The writer's one connection is held by the transaction a write runs in,
// where preparing on the pool would wait for that very connection: a
// statement first met inside a transaction runs unprepared there and is
// prepared when the transaction has ended (preparePending).
//
// A statement that fails to prepare (its table does not exist yet, before
// Migrate) runs unprepared and is not cached, so it is prepared again once
// it can be: the same fallback the eager preparation had. SQLite recompiles
// a prepared statement by itself after a schema change, so a cached one
// never goes stale.
type stmtCache struct {
	db      *sql.DB
	mu      sync.Mutex
	stmts   map[string]*sql.Stmt
	pending map[string]bool // met in a transaction, not prepared yet
	closed  bool
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, stmts: map[string]*sql.Stmt{}, pending: map[string]bool{}}
}

// cached returns query's statement when it is prepared; otherwise it notes
// the query for preparePending and returns nil.
func (c *stmtCache) cached(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.stmts[query]
	if !ok && !c.closed {
		c.pending[query] = true
	}
	return s
}

// preparePending prepares the statements cached met since the last call.
// The caller holds the pool's only connection free: no transaction runs.
func (c *stmtCache) preparePending(ctx context.Context) {
	c.mu.Lock()
	if len(c.pending) == 0 {
		c.mu.Unlock()
		return
	}
	queries := make([]string, 0, len(c.pending))
	for q := range c.pending {
		queries = append(queries, q)
	}
	clear(c.pending)
	c.mu.Unlock()
	for _, q := range queries {
		c.stmt(ctx, q)
	}
}

// stmt returns query's prepared statement, preparing it on first use; nil
// when it cannot be prepared (the caller runs the query unprepared).
func (c *stmtCache) stmt(ctx context.Context, query string) *sql.Stmt {
	c.mu.Lock()
	s, ok := c.stmts[query]
	closed := c.closed
	c.mu.Unlock()
	if ok || closed {
		return s
	}
	// Prepared outside the lock: it waits for a connection, and the
	// writer's only one may be held by a transaction for a while.
	s, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.stmts[query]; ok || c.closed {
		// Another call prepared it meanwhile, or the store closed.
		_ = s.Close()
		return prev
	}
	c.stmts[query] = s
	return s
}

// close closes every statement prepared; later calls run unprepared (and
// fail on the closed pool).
func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	var errs []error
	for q, s := range c.stmts {
		errs = append(errs, s.Close())
		delete(c.stmts, q)
	}
	return errors.Join(errs...)
}

// len is the number of statements prepared.
func (c *stmtCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.stmts)
}

// poolDB is the dbsqlc.DBTX of a pool: each query on its cached statement.
type poolDB struct{ c *stmtCache }

var _ dbsqlc.DBTX = poolDB{}

func (p poolDB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := p.c.stmt(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return p.c.db.ExecContext(ctx, query, args...)
}

func (p poolDB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := p.c.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return p.c.db.QueryContext(ctx, query, args...)
}

func (p poolDB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := p.c.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return p.c.db.QueryRowContext(ctx, query, args...)
}

func (p poolDB) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return p.c.db.PrepareContext(ctx, query)
}

// txDB is the dbsqlc.DBTX of a writer transaction: each query on the
// writer's cached statement bound to the transaction (as dbsqlc's WithTx
// does with eagerly prepared ones), or unprepared until it is cached.
type txDB struct {
	tx *sql.Tx
	c  *stmtCache
}

var _ dbsqlc.DBTX = txDB{}

func (t txDB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := t.c.cached(query); s != nil {
		return t.tx.StmtContext(ctx, s).ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, query, args...)
}

func (t txDB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := t.c.cached(query); s != nil {
		return t.tx.StmtContext(ctx, s).QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, query, args...)
}

func (t txDB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := t.c.cached(query); s != nil {
		return t.tx.StmtContext(ctx, s).QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, query, args...)
}

func (t txDB) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return t.tx.PrepareContext(ctx, query)
}
