package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchboardhq/switchboard/migrations"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/internal/retry"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

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
	// Now supplies the time when a call's Now is zero (store.Options.Now).
	// Default time.Now.
	Now func() time.Time

	// BinaryVersion is this binary's version (its release and commit, as
	// `switchboard version` shows them): recorded with each migration this
	// store applies, and named when the schema is too new for it. Empty:
	// recorded as unknown.
	BinaryVersion string

	// migrations, when set, replaces the shipped migrations (tests).
	migrations []migrations.Migration
	// tracer sees every query of the main pool: the plan tests read the
	// SQL and arguments of a call from it.
	tracer pgx.QueryTracer
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

// Store is the Postgres store: the driver behind the rules every driver
// shares (store.New).
type Store struct {
	store.Store
	d *driver
}

// driver implements store.Driver on pgx: it runs the queries of
// internal/dbsqlc and maps Postgres's errors to the store's.
type driver struct {
	*queries // the Queries methods, each in its own transaction

	pool *pgxpool.Pool
	// groupPool holds the connections of group commits (InTxGroup: the
	// acknowledgements of inbound events; not those under
	// store.GroupBehind), one a lane, so an ack never waits for a
	// connection behind the workers' transactions.
	groupPool *pgxpool.Pool
	// claims runs WorkClaim outside a transaction on claimPool, in a
	// transaction of its own that commits without waiting for the WAL
	// flush (see WorkClaim and claimDB).
	claims    *dbsqlc.Queries
	claimPool *pgxpool.Pool
	opts      Options
	logger    *slog.Logger
	notifier  *notifier
	listener  *listener

	closeOnce sync.Once
}

var _ store.Driver = (*driver)(nil)

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

	gcfg := cfg.Copy()
	gcfg.MaxConns = groupLanes
	groupPool, err := pgxpool.NewWithConfig(ctx, gcfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: creating the group commit connection pool: %w", err)
	}

	ccfg := cfg.Copy()
	ccfg.MaxConns = claimConns
	claimPool, err := pgxpool.NewWithConfig(ctx, ccfg)
	if err != nil {
		groupPool.Close()
		pool.Close()
		return nil, fmt.Errorf("postgres: creating the claim connection pool: %w", err)
	}

	d := &driver{pool: pool, groupPool: groupPool, claimPool: claimPool, claims: dbsqlc.New(claimDB{claimPool}), opts: opts, logger: opts.Logger}
	d.queries = &queries{d: d, db: dbsqlc.New(pool)}
	d.notifier = newNotifier(pool, opts.NotifyDebounce, opts.Logger, d.channel)
	d.listener = newListener(listenCfg, opts.Logger, d.channel)
	d.notifier.start()
	// A burst of acknowledgements spreads over a few connections: each
	// batch is round trips, which Postgres can serve side by side.
	return &Store{Store: store.New(d, store.Options{Now: opts.Now, GroupLanes: groupLanes}), d: d}, nil
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
	if opts.tracer != nil {
		cfg.ConnConfig.Tracer = opts.tracer
	}
	if opts.Schema != "" {
		// validSchema admits only names that need no quoting.
		cfg.ConnConfig.RuntimeParams["search_path"] = opts.Schema
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "switchboard"
	}
	// Times come back in UTC (the store's rule), without a conversion per
	// field.
	cfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		conn.TypeMap().RegisterType(&pgtype.Type{
			Name: "timestamptz", OID: pgtype.TimestamptzOID,
			Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC},
		})
		// JSON columns read into a json.RawMessage as the bytes Postgres
		// keeps (it checked them on the way in), without the decode pgx
		// would otherwise run on every value: a catch-up reads thousands.
		conn.TypeMap().RegisterType(&pgtype.Type{
			Name: "json", OID: pgtype.JSONOID,
			Codec: &pgtype.JSONCodec{Marshal: json.Marshal, Unmarshal: unmarshalJSON},
		})
		return nil
	}
	return cfg, nil
}

// unmarshalJSON is json.Unmarshal, but copies a value bound for a
// json.RawMessage as it is.
func unmarshalJSON(data []byte, v any) error {
	if raw, ok := v.(*json.RawMessage); ok {
		*raw = append(json.RawMessage(nil), data...) // data is pgx's read buffer
		return nil
	}
	return json.Unmarshal(data, v)
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
	stmt, err := dbsqlc.New(pool).SchemaCreateStatement(ctx, schema)
	if err != nil {
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
func (s *Store) Pool() *pgxpool.Pool { return s.d.pool }

func (d *driver) Dialect() string { return "postgres" }

func (d *driver) Ping(ctx context.Context) error {
	if err := d.pool.Ping(ctx); err != nil {
		return fmt.Errorf("pinging postgres: %w", err)
	}
	return nil
}

// Close stops the listener and the notifier (sending what is pending) and
// closes the pool. Subscription channels are closed. Safe to call twice.
func (d *driver) Close() error {
	d.closeOnce.Do(func() {
		d.listener.stop()
		d.notifier.stop()
		d.groupPool.Close()
		d.claimPool.Close()
		d.pool.Close()
	})
	return nil
}

// channel is the Postgres channel name of a topic.
func (d *driver) channel(topic string) string {
	if d.opts.Schema == "" {
		return topic
	}
	if ch := topic + "." + d.opts.Schema; len(ch) <= maxChannel {
		return ch
	}
	// Postgres cuts identifiers at 63 bytes, and pg_notify refuses longer
	// ones: a long topic (store.LiveTopic) with a long schema takes a
	// digest of the schema instead, as unique in practice.
	sum := sha256.Sum256([]byte(d.opts.Schema))
	return topic + "." + hex.EncodeToString(sum[:8])
}

// maxChannel is the longest channel name Postgres keeps whole.
const maxChannel = 63

// Publish queues payload for NOTIFY on topic's channel, sent with the
// wake-ups of the next notifier round trip.
func (d *driver) Publish(ctx context.Context, topic, payload string) error {
	if len(payload) > store.MaxPublishPayload {
		return fmt.Errorf("publishing on %s: %w: payload of %d bytes, at most %d", topic, store.ErrInvalid, len(payload), store.MaxPublishPayload)
	}
	d.notifier.add(note{topic: topic, payload: payload})
	return nil
}

// Subscribe delivers wake-ups for topic until ctx ends or the Store closes,
// when the channel is closed. It returns once the topic is being listened to
// (or, if the database is unreachable right now, at once: the listener will
// LISTEN when it reconnects). After a reconnect every subscriber gets one
// notification with an empty payload, since wake-ups sent meanwhile are lost:
// the receiver should re-read everything it watches.
func (d *driver) Subscribe(ctx context.Context, topic string) (<-chan store.Notification, error) {
	return d.listener.subscribe(ctx, topic)
}

// groupLanes is how many group commits run at once on Postgres, each on a
// connection of its own pool (driver.groupPool).
const groupLanes = 3
