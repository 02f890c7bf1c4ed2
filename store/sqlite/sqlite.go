package sqlite

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/migrations"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/internal/retry"
	"github.com/switchboardhq/switchboard/store/sqlite/internal/dbsqlc"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

//go:generate sqlc generate

// Dialect is the name of this driver's SQL dialect and migrations folder.
const Dialect = "sqlite"

// DefaultPath is where the service keeps its database when none is configured.
const DefaultPath = "./data/switchboard.db"

// bookkeeping creates the migration runner's table (see Open).
//
//go:embed bookkeeping.sql
var bookkeeping string

// Statements sqlc does not generate (it skips PRAGMAs and savepoints). They
// are fixed text, never assembled.
const (
	journalModeSQL       = "PRAGMA journal_mode"
	savepointSQL         = "SAVEPOINT switchboard_call"
	savepointReleaseSQL  = "RELEASE switchboard_call"
	savepointRollbackSQL = "ROLLBACK TO switchboard_call" // then release

	// bookkeepingColumnsSQL lists the version table's columns, and the
	// ALTERs give a table made by an earlier binary the columns this one
	// records (SQLite has no ADD COLUMN IF NOT EXISTS). See bookkeeping.sql.
	bookkeepingColumnsSQL     = "SELECT name FROM pragma_table_info('switchboard_schema_migrations')"
	addBinaryVersionColumnSQL = "ALTER TABLE switchboard_schema_migrations ADD COLUMN binary_version TEXT"
	addCompatFloorColumnSQL   = "ALTER TABLE switchboard_schema_migrations ADD COLUMN compat_floor INTEGER"
)

// Options configures Open.
type Options struct {
	// Path is the database file. Its directory is created when missing.
	Path string
	// BusyTimeout is how long a connection waits for a lock held by another
	// process (or by a checkpoint) before giving up. Default 5s.
	BusyTimeout time.Duration
	// MaxReadConns bounds the pool of read-only connections. Default
	// max(4, GOMAXPROCS).
	MaxReadConns int
	// RetryFor is how long a write keeps retrying SQLITE_BUSY or
	// SQLITE_LOCKED (another process holds the lock past BusyTimeout)
	// before the error reaches the caller, wrapped with store.ErrTransient.
	// Default 30s; negative turns retrying off.
	RetryFor time.Duration
	// Logger receives migration and notification events. Default: discard.
	Logger *slog.Logger
	// Now is the clock used when a parameter struct leaves Now zero.
	// Default time.Now.
	Now func() time.Time
	// BinaryVersion is this binary's version (its release and commit, as
	// `switchboard version` shows them): recorded with each migration this
	// store applies, and named when the schema is too new for it. Empty:
	// recorded as unknown.
	BinaryVersion string
}

func (o *Options) validate() error {
	switch {
	case o.Path == "":
		return errors.New("sqlite options: Path is required")
	case o.Path == ":memory:" || strings.HasPrefix(o.Path, "file:"):
		return fmt.Errorf("sqlite options: Path %q must be a plain file path: the writer and the readers must share one file", o.Path)
	case strings.ContainsAny(o.Path, "?#"):
		return fmt.Errorf("sqlite options: Path %q must not contain '?' or '#'", o.Path)
	case o.BusyTimeout < 0:
		return fmt.Errorf("sqlite options: BusyTimeout %s must not be negative", o.BusyTimeout)
	case o.MaxReadConns < 0:
		return fmt.Errorf("sqlite options: MaxReadConns %d must not be negative", o.MaxReadConns)
	}
	return nil
}

func (o *Options) setDefaults() {
	if o.BusyTimeout == 0 {
		o.BusyTimeout = 5 * time.Second
	}
	if o.MaxReadConns == 0 {
		o.MaxReadConns = max(4, runtime.GOMAXPROCS(0))
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RetryFor == 0 {
		o.RetryFor = retry.DefaultFor
	}
}

// Store is the SQLite store: this driver behind the rules every driver
// shares (store.New). See the package comment for the one-writer design.
type Store struct {
	store.Store
	d *driver
}

// DB returns the writer's *sql.DB. It exists for benchmarks that compare the
// store's writes against raw inserts on the same connection; anything else
// must go through the store's methods.
func (s *Store) DB() *sql.DB { return s.d.w }

// driver is the store.Driver: it runs the queries and maps errors, nothing
// more. Its embedded queries are the ones outside any transaction: reads on
// the read pool, each write in a writer transaction of its own.
type driver struct {
	queries
	w    *sql.DB   // exactly one connection; every transaction BEGIN IMMEDIATE
	gate writeGate // the order this process's write transactions take w in
	r    *sql.DB   // read-only pool for plain reads outside transactions
	// wstmts and rstmts are each pool's statements, prepared on first use.
	wstmts, rstmts *stmtCache
	rq             *dbsqlc.Queries // the queries on the read pool
	logger         *slog.Logger
	now            func() time.Time
	retry          retry.Policy
	hub            *hub
	// migrations is the list Migrate applies; tests replace it.
	migrations []migrations.Migration
	binary     string // Options.BinaryVersion

	closeOnce sync.Once
	closeErr  error
}

var _ store.Driver = (*driver)(nil)

// Open validates opts, creates the database file's directory when missing and
// opens the writer connection and the read pool. It does not migrate: call
// Migrate.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts.setDefaults()

	ms, err := migrations.Load(Dialect)
	if err != nil {
		return nil, fmt.Errorf("opening sqlite store: %w", err)
	}
	if dir := filepath.Dir(opts.Path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("creating database directory %s: %w", dir, err)
		}
	}

	w, err := sql.Open("sqlite", dsn(opts.Path, opts.BusyTimeout, true))
	if err != nil {
		return nil, fmt.Errorf("opening sqlite writer on %s: %w", opts.Path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := checkWriter(ctx, w); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("opening sqlite writer on %s: %w", opts.Path, err)
	}

	// The readers open after the writer switched the file to WAL and created
	// the bookkeeping table, so they never need to write.
	r, err := sql.Open("sqlite", dsn(opts.Path, opts.BusyTimeout, false))
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("opening sqlite readers on %s: %w", opts.Path, err)
	}
	r.SetMaxOpenConns(opts.MaxReadConns)
	r.SetMaxIdleConns(opts.MaxReadConns)
	if err := r.PingContext(ctx); err != nil {
		_ = r.Close()
		_ = w.Close()
		return nil, fmt.Errorf("opening sqlite readers on %s: %w", opts.Path, mapErr(err))
	}

	d := &driver{
		w:          w,
		r:          r,
		logger:     opts.Logger,
		now:        opts.Now,
		retry:      retry.Policy{For: opts.RetryFor, Logger: opts.Logger},
		hub:        newHub(opts.Logger),
		migrations: ms,
		binary:     opts.BinaryVersion,
	}
	d.queries = queries{d: d}
	d.wstmts, d.rstmts = newStmtCache(w), newStmtCache(r)
	d.rq = dbsqlc.New(poolDB{c: d.rstmts})
	return &Store{Store: store.New(d, store.Options{Now: opts.Now}), d: d}, nil
}

// dsn builds the connection string. The writer turns WAL on and begins every
// transaction IMMEDIATE, so it takes the write lock before its first read and
// never has to upgrade (the upgrade is what fails with SQLITE_BUSY under
// concurrency). Readers are query_only so a bug cannot write around the
// single writer.
func dsn(path string, busy time.Duration, writer bool) string {
	v := url.Values{}
	v.Add("_pragma", "busy_timeout("+strconv.FormatInt(busy.Milliseconds(), 10)+")")
	v.Add("_pragma", "foreign_keys(1)")
	if writer {
		v.Add("_pragma", "journal_mode(WAL)")
		// FULL: a commit survives power loss, not only a process crash.
		v.Add("_pragma", "synchronous(FULL)")
		v.Set("_txlock", "immediate")
	} else {
		v.Add("_pragma", "query_only(1)")
	}
	return path + "?" + v.Encode()
}

func checkWriter(ctx context.Context, w *sql.DB) error {
	var mode string
	if err := w.QueryRowContext(ctx, journalModeSQL).Scan(&mode); err != nil {
		return mapErr(err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %q, want wal (is the file on a filesystem without shared memory?)", mode)
	}
	if _, err := w.ExecContext(ctx, bookkeeping); err != nil {
		return fmt.Errorf("creating the schema migrations table: %w", mapErr(err))
	}
	if err := bookkeepingColumns(ctx, w); err != nil {
		return fmt.Errorf("adding columns to the schema migrations table: %w", mapErr(err))
	}
	return nil
}

// bookkeepingColumns adds the columns a version table made by an earlier
// binary lacks, under the write lock (w begins IMMEDIATE), so that two
// processes opening the file at once do not both add them.
func bookkeepingColumns(ctx context.Context, w *sql.DB) (err error) {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	rows, err := tx.QueryContext(ctx, bookkeepingColumnsSQL)
	if err != nil {
		return err
	}
	has := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		has[name] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range []struct{ name, add string }{
		{"binary_version", addBinaryVersionColumnSQL},
		{"compat_floor", addCompatFloorColumnSQL},
	} {
		if !has[c.name] {
			if _, err := tx.ExecContext(ctx, c.add); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}

func (d *driver) Dialect() string { return Dialect }

// Ping checks the writer and the read pool.
func (d *driver) Ping(ctx context.Context) error {
	if err := d.w.PingContext(ctx); err != nil {
		return fmt.Errorf("pinging sqlite writer: %w", mapErr(err))
	}
	if err := d.r.PingContext(ctx); err != nil {
		return fmt.Errorf("pinging sqlite readers: %w", mapErr(err))
	}
	return nil
}

// Close ends every subscription and closes both pools. It waits for calls in
// progress to return their connections. Calling it again returns the first
// result.
func (d *driver) Close() error {
	d.closeOnce.Do(func() {
		d.hub.close()
		d.closeErr = errors.Join(d.wstmts.close(), d.rstmts.close(), d.r.Close(), d.w.Close())
		if d.closeErr != nil {
			d.closeErr = fmt.Errorf("closing sqlite store: %w", d.closeErr)
		}
	})
	return d.closeErr
}

// Subscribe delivers wake-ups for topic until ctx ends or the store closes,
// then closes the channel. Notifications come only from this process's
// writes: SQLite has one writer process.
func (d *driver) Subscribe(ctx context.Context, topic string) (<-chan store.Notification, error) {
	return d.hub.subscribe(ctx, topic)
}

// Publish hands payload to this process's subscribers of topic: one
// process writes a SQLite database, so there is no other instance to reach.
func (d *driver) Publish(ctx context.Context, topic, payload string) error {
	if len(payload) > store.MaxPublishPayload {
		return fmt.Errorf("publishing on %s: %w: payload of %d bytes, at most %d", topic, store.ErrInvalid, len(payload), store.MaxPublishPayload)
	}
	d.hub.publish(ctx, []store.Notification{{Topic: topic, Payload: payload}})
	return nil
}

// InTx runs fn in one IMMEDIATE transaction on the writer, each call in a
// savepoint, and publishes the notifications its writes caused after the
// commit. fn must use q, never the Store: the writer has one connection, so
// a call on the Store from inside fn would wait for fn itself until ctx
// ends. When the lock stays busy past BusyTimeout the transaction is rolled
// back and fn runs again (see Options.RetryFor).
func (d *driver) InTx(ctx context.Context, fn func(q store.Queries) error) error {
	// A group commit's members return the error of a failed write, and the
	// group runs the rest again without the member (as on Postgres, where
	// a failed statement ends the transaction): no savepoint per write, a
	// third of the statements.
	savepoints := !store.GroupCommit(ctx)
	_, err := transact(ctx, d, savepoints, func(q *queries) (struct{}, error) { return struct{}{}, fn(q) })
	return err
}
