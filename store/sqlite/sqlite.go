package sqlite

import (
	"context"
	"database/sql"
	"embed"
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
	"github.com/switchboardhq/switchboard/store/internal/sqlfile"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

//go:embed queries/*.sql
var queryFiles embed.FS

// sqlText holds every statement this driver runs, by name.
var sqlText = sqlfile.MustLoad(queryFiles, "queries")

// Dialect is the name of this driver's SQL dialect and migrations folder.
const Dialect = "sqlite"

// DefaultPath is where the service keeps its database when none is configured.
const DefaultPath = "./data/switchboard.db"

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

// Store is the SQLite implementation of store.Store. See the package comment
// for the one-writer design.
type Store struct {
	w       *sql.DB // exactly one connection; every transaction BEGIN IMMEDIATE
	r       *sql.DB // read-only pool for plain reads outside transactions
	logger  *slog.Logger
	nowFunc func() time.Time
	retry   retry.Policy
	hub     *hub
	wstmts  *stmtCache
	rstmts  *stmtCache
	// migrations is the list Migrate applies; tests replace it.
	migrations []migrations.Migration

	closeOnce sync.Once
	closeErr  error
}

var _ store.Store = (*Store)(nil)

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

	// The readers open after the writer switched the file to WAL, so they
	// never need to write the journal mode themselves.
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

	return &Store{
		w:          w,
		r:          r,
		logger:     opts.Logger,
		nowFunc:    opts.Now,
		retry:      retry.Policy{For: opts.RetryFor, Logger: opts.Logger},
		hub:        newHub(opts.Logger),
		wstmts:     newStmtCache(w),
		rstmts:     newStmtCache(r),
		migrations: ms,
	}, nil
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
	if err := (textRunner{w}).queryRow(ctx, "JournalMode").Scan(&mode); err != nil {
		return mapErr(err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %q, want wal (is the file on a filesystem without shared memory?)", mode)
	}
	return nil
}

// DB returns the writer's *sql.DB. It exists for benchmarks that compare the
// store's writes against raw inserts on the same connection; anything else
// must go through the store's methods.
func (s *Store) DB() *sql.DB { return s.w }

// Dialect returns "sqlite".
func (s *Store) Dialect() string { return Dialect }

// Ping checks the writer and the read pool.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.w.PingContext(ctx); err != nil {
		return fmt.Errorf("pinging sqlite writer: %w", mapErr(err))
	}
	if err := s.r.PingContext(ctx); err != nil {
		return fmt.Errorf("pinging sqlite readers: %w", mapErr(err))
	}
	return nil
}

// Close ends every subscription and closes both pools. It waits for calls in
// progress to return their connections. Calling it again returns the first
// result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.hub.close()
		s.closeErr = errors.Join(s.rstmts.close(), s.wstmts.close(), s.r.Close(), s.w.Close())
		if s.closeErr != nil {
			s.closeErr = fmt.Errorf("closing sqlite store: %w", s.closeErr)
		}
	})
	return s.closeErr
}

// Subscribe delivers wake-ups for topic until ctx ends or the store closes,
// then closes the channel. Notifications come only from this process's
// writes: SQLite has one writer process.
func (s *Store) Subscribe(ctx context.Context, topic string) (<-chan store.Notification, error) {
	if topic == "" {
		return nil, fmt.Errorf("subscribing: %w: topic is empty", store.ErrInvalid)
	}
	return s.hub.subscribe(ctx, topic)
}

// InTx runs fn in one IMMEDIATE transaction on the writer and publishes the
// notifications its writes caused after the commit. fn must use q, never s:
// the writer has one connection, so a call on s from inside fn would wait for
// fn itself until ctx ends. When the lock stays busy past BusyTimeout the
// transaction is rolled back and fn runs again (see Options.RetryFor).
func (s *Store) InTx(ctx context.Context, fn func(q store.Queries) error) error {
	_, err := write(ctx, s, true, func(q *queries) (struct{}, error) {
		return struct{}{}, fn(q)
	})
	return err
}

// write runs fn in a transaction on the writer, commits, then publishes the
// notifications collected. savepoints makes each call on q atomic on its own,
// which a caller's InTx needs (a failed call must not leave half its writes
// behind if the caller goes on and commits).
//
// A transient fault (the lock busy past BusyTimeout) rolls the transaction
// back and runs fn again, in a new one, until the retry budget is spent. A
// commit here is local: when COMMIT fails nothing was written, so there is
// no outcome to guess.
func write[T any](ctx context.Context, s *Store, savepoints bool, fn func(q *queries) (T, error)) (T, error) {
	var out T
	err := retry.Do(ctx, s.retry, "write transaction", store.IsTransient, func() error {
		var err error
		out, err = writeOnce(ctx, s, savepoints, fn)
		return err
	})
	return out, err
}

func writeOnce[T any](ctx context.Context, s *Store, savepoints bool, fn func(q *queries) (T, error)) (_ T, err error) {
	var zero T
	s.wstmts.prepareAll(ctx) // before BEGIN: preparing needs the one connection
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return zero, fmt.Errorf("beginning write transaction: %w", mapErr(err))
	}
	committed := false
	defer func() {
		if !committed {
			// Also on panic: a transaction left open would hold the only
			// writer connection forever.
			_ = tx.Rollback()
		}
	}()
	q := &queries{db: newTxRunner(tx, s.wstmts), s: s, savepoints: savepoints, notes: &notes{}}
	out, err := fn(q)
	if err != nil {
		return zero, err
	}
	if err := tx.Commit(); err != nil {
		return zero, fmt.Errorf("committing write transaction: %w", mapErr(err))
	}
	committed = true
	s.hub.publish(ctx, q.notes.list)
	return out, nil
}

// reader returns Queries over the read pool, for single reads.
func (s *Store) reader() *queries { return &queries{db: poolRunner{s.rstmts}, s: s} }
