package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/internal/retry"
	"github.com/switchboardhq/switchboard/store/internal/sqlfile"
)

//go:embed queries/*.sql
var queryFiles embed.FS

// sqlq holds every named query of this driver.
var sqlq = sqlfile.MustLoad(queryFiles, "queries")

// Options configures a Store.
type Options struct {
	// URL is the connection string (DATABASE_URL): postgres://user@host/db?...
	URL string
	// SimpleProtocol runs without prepared statements, for transaction
	// poolers such as PgBouncer.
	SimpleProtocol bool
	// MaxConns caps the pool; 0 keeps pgx's default (max(4, NumCPU)).
	MaxConns int32
	// Schema, when set, is created if missing and used as the search_path, so
	// several deployments (or test runs) can share a database. Notification
	// channels are suffixed with it for the same reason. Lowercase letters,
	// digits and underscores, at most 40 characters.
	Schema string
	// ListenURL, when set, is used for the one LISTEN connection instead of
	// URL. LISTEN does not work through a transaction pooler: point this at the
	// server directly when URL goes through PgBouncer.
	ListenURL string
	// NotifyDebounce is how long the post-commit notifier gathers wake-ups
	// before sending them, deduplicated, in one round trip. Default 1ms.
	NotifyDebounce time.Duration
	// RetryFor is how long a call keeps retrying a transient fault (a lost
	// connection, a server restart, a serialization failure or deadlock)
	// before the error reaches the caller, wrapped with store.ErrTransient.
	// Default 30s; negative turns retrying off.
	RetryFor time.Duration
	// Logger receives the driver's warnings (lost notifications, listener
	// reconnects, retried faults). Default: discard.
	Logger *slog.Logger
	// Now supplies the time when a call's Now is zero. Default time.Now.
	Now func() time.Time
}

const maxSchemaLen = 40

func (o *Options) setDefaults() {
	if o.NotifyDebounce == 0 {
		o.NotifyDebounce = time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RetryFor == 0 {
		o.RetryFor = retry.DefaultFor
	}
}

func (o *Options) validate() error {
	if strings.TrimSpace(o.URL) == "" {
		return errors.New("DATABASE_URL (Options.URL) is empty")
	}
	if o.MaxConns < 0 {
		return fmt.Errorf("Options.MaxConns is %d; want 0 (default) or more", o.MaxConns)
	}
	if o.NotifyDebounce < 0 {
		return fmt.Errorf("Options.NotifyDebounce is %s; want 0 (default) or more", o.NotifyDebounce)
	}
	if o.Schema != "" && !validSchema(o.Schema) {
		return fmt.Errorf("Options.Schema %q: want lowercase letters, digits and underscores, "+
			"not starting with a digit, at most %d characters", o.Schema, maxSchemaLen)
	}
	return nil
}

func validSchema(s string) bool {
	if len(s) == 0 || len(s) > maxSchemaLen || strings.HasPrefix(s, "pg_") {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r == '_':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// Store is the Postgres implementation of store.Store.
type Store struct {
	*queries // the Queries methods, each in its own transaction

	pool     *pgxpool.Pool
	opts     Options
	logger   *slog.Logger
	notifier *notifier
	listener *listener

	closeOnce sync.Once
}

var _ store.Store = (*Store)(nil)

// Open validates opts, connects and checks the server answers. It does not
// migrate: call Migrate.
func Open(ctx context.Context, opts Options) (*Store, error) {
	opts.setDefaults()
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("postgres: %w: %w", store.ErrInvalid, err)
	}
	cfg, err := poolConfig(opts)
	if err != nil {
		return nil, err
	}
	listenCfg := cfg.ConnConfig.Copy()
	if opts.ListenURL != "" {
		lc, err := poolConfig(Options{URL: opts.ListenURL, Schema: opts.Schema})
		if err != nil {
			return nil, fmt.Errorf("postgres: Options.ListenURL: %w", err)
		}
		listenCfg = lc.ConnConfig
	}
	// LISTEN runs on its own connection; prepared statements buy nothing there.
	listenCfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	listenCfg.RuntimeParams["application_name"] = "switchboard-listener"

	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: creating connection pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connecting: %w", err)
	}
	if opts.Schema != "" {
		if err := createSchema(ctx, pool, opts.Schema); err != nil {
			pool.Close()
			return nil, err
		}
	}

	s := &Store{pool: pool, opts: opts, logger: opts.Logger}
	s.queries = &queries{s: s, db: pool}
	s.notifier = newNotifier(pool, opts.NotifyDebounce, opts.Logger, s.channel)
	s.listener = newListener(listenCfg, opts.Logger, s.channel)
	s.notifier.start()
	return s, nil
}

// poolConfig parses opts.URL. Its errors never carry the password.
func poolConfig(opts Options) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(opts.URL)
	if err != nil {
		// Not wrapped: pgconn.ParseConfigError keeps the raw connection string
		// in a field, where errors.As would hand the password to anyone.
		return nil, fmt.Errorf("postgres: %w: DATABASE_URL is not a valid connection string: %s",
			store.ErrInvalid, redactPassword(err.Error(), opts.URL))
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	if opts.SimpleProtocol {
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	}
	if opts.Schema != "" {
		// validSchema admits only names that need no quoting.
		cfg.ConnConfig.RuntimeParams["search_path"] = opts.Schema
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "switchboard"
	}
	return cfg, nil
}

// redactPassword removes the password of rawURL from msg. pgconn already
// masks what it recognises; this also covers the text of the underlying URL
// parse error, which can quote the input.
func redactPassword(msg, rawURL string) string {
	const mask = "xxxxx"
	var secrets []string
	if u, err := url.Parse(rawURL); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			secrets = append(secrets, p)
		}
	}
	// A URL that does not parse: take what sits between "user:" and the last
	// "@" of the authority by hand.
	if _, rest, ok := strings.Cut(rawURL, "://"); ok {
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if _, p, ok := strings.Cut(rest[:at], ":"); ok && p != "" {
				secrets = append(secrets, p)
			}
		}
	}
	// keyword=value strings and URL query parameters.
	for _, key := range []string{"password=", "sslpassword="} {
		for s := rawURL; ; {
			i := strings.Index(s, key)
			if i < 0 {
				break
			}
			s = s[i+len(key):]
			v := s
			if j := strings.IndexAny(v, " &"); j >= 0 {
				v = v[:j]
			}
			v = strings.Trim(v, "'")
			if v != "" {
				secrets = append(secrets, v)
			}
		}
	}
	for _, p := range secrets {
		msg = strings.ReplaceAll(msg, p, mask)
		if esc := url.QueryEscape(p); esc != p {
			msg = strings.ReplaceAll(msg, esc, mask)
		}
		if esc := url.PathEscape(p); esc != p {
			msg = strings.ReplaceAll(msg, esc, mask)
		}
	}
	return msg
}

func createSchema(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	var stmt string
	if err := pool.QueryRow(ctx, sqlq.Get("SchemaCreateStatement"), schema).Scan(&stmt); err != nil {
		return fmt.Errorf("postgres: creating schema %s: %w", schema, err)
	}
	if _, err := pool.Exec(ctx, stmt); err != nil {
		// Two instances creating the schema at once: one loses the race on the
		// catalog's unique index, and the schema exists, which is all we want.
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || (pgErr.Code != "23505" && pgErr.Code != "42P06") {
			return fmt.Errorf("postgres: creating schema %s: %w", schema, err)
		}
	}
	return nil
}

// Pool returns the connection pool, for callers that need raw access (the
// benchmarks' baseline insert). Statements run on it bypass the store's rules.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Dialect reports "postgres".
func (s *Store) Dialect() string { return "postgres" }

// Ping checks that the server answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("pinging postgres: %w", err)
	}
	return nil
}

// Close stops the listener and the notifier (sending what is pending) and
// closes the pool. Subscription channels are closed. Safe to call twice.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.listener.stop()
		s.notifier.stop()
		s.pool.Close()
	})
	return nil
}

// InTx runs fn in one transaction. Notifications caused inside are sent only
// once the commit succeeded. A transient fault rolls the transaction back and
// runs fn again (see store.Store.InTx and the package comment).
func (s *Store) InTx(ctx context.Context, fn func(q store.Queries) error) error {
	return s.inTx(ctx, func(q *queries) error { return fn(q) })
}

// inTx runs fn in a transaction, again after a transient fault, until it
// commits or the retry budget is spent.
//
// Before COMMIT it reads the transaction's id (one more round trip). If the
// COMMIT's answer is lost (the connection died while it was in flight, so the
// server may or may not have committed) it asks the server, on another
// connection, what became of that id: committed means done, aborted means
// run fn again. Only when that cannot be learnt does it give up with
// store.ErrOutcomeUnknown, never running fn twice blindly.
func (s *Store) inTx(ctx context.Context, fn func(q *queries) error) error {
	return retry.Do(ctx, s.retryPolicy(), "transaction", isTransientErr, func() error {
		xid, pending, err := s.tryTx(ctx, fn)
		if err == nil {
			s.notifier.add(pending...)
			return nil
		}
		if xid == nil {
			return err
		}
		committed, rerr := s.txOutcome(ctx, *xid)
		switch {
		case rerr != nil:
			// %v, not %w: the faults are transient, the error must not be,
			// or it would be retried and fn could run twice.
			return fmt.Errorf("%w: transaction %d: %v (finding out: %v)",
				store.ErrOutcomeUnknown, *xid, err, rerr)
		case committed:
			s.logger.InfoContext(ctx, "store: the answer to a commit was lost but it had committed",
				"xid", *xid, "err", err)
			s.notifier.add(pending...)
			return nil
		default:
			s.logger.DebugContext(ctx, "store: the answer to a commit was lost and it had not committed",
				"xid", *xid, "err", err)
			return err // aborted: nothing took effect, fn may run again
		}
	})
}

// tryTx is one attempt. When COMMIT was sent and its answer lost it returns
// the transaction's id (nil when the transaction wrote nothing, so nothing
// can have committed) along with the error.
func (s *Store) tryTx(ctx context.Context, fn func(q *queries) error) (xid *int64, pending []note, err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("beginning transaction: %w", mapErr(err))
	}
	committed := false
	defer func() {
		if !committed {
			// Rollback on a context already cancelled still releases the
			// connection; its own error adds nothing to fn's.
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	q := &queries{s: s, db: tx, tx: true, pending: &pending}
	if err := fn(q); err != nil {
		return nil, nil, err
	}
	var id *int64
	if err := tx.QueryRow(ctx, sqlq.Get("TxID")).Scan(&id); err != nil {
		return nil, nil, fmt.Errorf("reading the transaction id: %w", mapErr(err))
	}
	if err := tx.Commit(ctx); err != nil {
		committed = true // Commit has ended the transaction either way
		err = fmt.Errorf("committing transaction: %w", mapErr(err))
		if id != nil && commitAnswerLost(err) {
			return id, pending, err
		}
		return nil, nil, err
	}
	committed = true
	return nil, pending, nil
}

// txOutcome asks the server whether transaction xid committed. It waits
// (within the retry budget) while the transaction is still in progress,
// which it is until the server has noticed the lost connection.
func (s *Store) txOutcome(ctx context.Context, xid int64) (committed bool, err error) {
	var status *string
	err = retry.Do(ctx, s.retryPolicy(), "reading a transaction's outcome", isTransientErr, func() error {
		status = nil
		if err := s.pool.QueryRow(ctx, sqlq.Get("TxStatus"), xid).Scan(&status); err != nil {
			return mapErr(err)
		}
		if status != nil && *status == "in progress" {
			return fmt.Errorf("%w: transaction %d still in progress", store.ErrTransient, xid)
		}
		return nil
	})
	switch {
	case err != nil:
		return false, err
	case status == nil:
		return false, fmt.Errorf("transaction %d is too old for the server to remember", xid)
	}
	return *status == "committed", nil
}

func (s *Store) retryPolicy() retry.Policy {
	return retry.Policy{For: s.opts.RetryFor, Logger: s.logger}
}

// channel is the Postgres channel name of a topic.
func (s *Store) channel(topic string) string {
	if s.opts.Schema == "" {
		return topic
	}
	return topic + "." + s.opts.Schema
}

// Subscribe delivers wake-ups for topic until ctx ends or the Store closes,
// when the channel is closed. It returns once the topic is being listened to
// (or, if the database is unreachable right now, at once: the listener will
// LISTEN when it reconnects). After a reconnect every subscriber gets one
// notification with an empty payload, since wake-ups sent meanwhile are lost:
// the receiver should re-read everything it watches.
func (s *Store) Subscribe(ctx context.Context, topic string) (<-chan store.Notification, error) {
	if topic == "" {
		return nil, fmt.Errorf("subscribing: %w: empty topic", store.ErrInvalid)
	}
	return s.listener.subscribe(ctx, topic)
}
