package dbtemplate

// The Postgres side: a pool of migrated schemas (and databases) that tests
// claim, use and give back emptied, instead of creating and migrating a
// new one each and dropping it after.
//
// Creating a schema runs every migration's DDL (about a hundred tables,
// indexes and constraints), and dropping it deletes the same catalog rows
// again: hundreds of tests a run made Postgres the busiest process of the
// suite (about 490 s of CPU in a 720 s run on 2 cores), and, with
// autovacuum off, left the catalog bloated for every later statement.
// Emptying a used schema is a TRUNCATE of the tables that have rows and a
// reset of its sequences, and touches almost nothing in the catalog.
//
// A schema goes back to the pool only as migrated as it came: its shape
// (relations, columns, constraints, functions, types and the version
// table's rows) must match what it was when it was migrated, or it is
// dropped. A test that adds a table, records a newer release's version or
// migrates further leaves nothing behind for the next one.
//
// The pool is a table in the database of TEST_DATABASE_URL, claimed with
// SELECT … FOR UPDATE SKIP LOCKED, so the test processes that go test runs
// side by side share it. A claim that is hours old belongs to a process
// that died: its schema is dropped and made again.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchboardhq/switchboard/migrations"
)

// MigratePostgres migrates a Switchboard store on the database at url, in
// schema (created if missing), or in the database's default schema when
// schema is "".
type MigratePostgres func(ctx context.Context, dbURL, schema string) error

// poolTable lists the pooled schemas and databases and who holds each.
const (
	poolSchema = "switchboard_test_pool"
	poolTable  = poolSchema + ".entries"
	// staleClaim is the age past which a claim is taken for a dead
	// process's: longer than any test binary's -timeout.
	staleClaim = 2 * time.Hour
)

const poolSetup = `CREATE SCHEMA IF NOT EXISTS ` + poolSchema + `;
CREATE TABLE IF NOT EXISTS ` + poolTable + ` (
    name        text PRIMARY KEY,
    kind        text NOT NULL,        -- schema or database
    key         text NOT NULL,        -- the migrations it was made with
    shape       text,                 -- its shape once migrated; NULL until then
    holder      text,                 -- the claiming process and test; NULL when free
    claimed_at  timestamptz
)`

// postgresKey names the current Postgres migrations: pooled entries of
// other migrations are never handed out.
var postgresKey = sync.OnceValues(func() (string, error) {
	ms, err := migrations.Load("postgres")
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, m := range ms {
		fmt.Fprintf(h, "%d\x00%s\x00%d\x00%s\x00", m.Version, m.Name, len(m.SQL), m.SQL)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
})

// setupOnce creates the pool table once per process and URL, and drops the
// free entries of other migrations (an earlier checkout's).
var setupOnce sync.Map // url -> *sync.Once with its error

type onceErr struct {
	once sync.Once
	err  error
}

// PostgresURL is TEST_DATABASE_URL, the Postgres the tests use. Without it
// the test skips, unless SWITCHBOARD_REQUIRE_POSTGRES=1, where a skip
// would hide a broken CI.
func PostgresURL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv("TEST_DATABASE_URL")
	if u == "" {
		if os.Getenv("SWITCHBOARD_REQUIRE_POSTGRES") == "1" {
			tb.Fatal("TEST_DATABASE_URL is not set and SWITCHBOARD_REQUIRE_POSTGRES=1: the Postgres tests must run")
		}
		tb.Skip("TEST_DATABASE_URL is not set: skipping Postgres (e.g. TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable)")
	}
	return u
}

// PostgresSchema claims a migrated, empty schema in the database at url for
// tb, made with migrate when the pool has none free, and gives it back
// (emptied, or dropped if the test changed its shape) when tb ends.
func PostgresSchema(tb testing.TB, dbURL string, migrate MigratePostgres) string {
	tb.Helper()
	return claim(tb, dbURL, "schema", migrate)
}

// PostgresDatabase claims a migrated, empty database on the server at url
// (the store in its default schema, public) for tb, as PostgresSchema does
// a schema, and returns its name.
func PostgresDatabase(tb testing.TB, dbURL string, migrate MigratePostgres) string {
	tb.Helper()
	return claim(tb, dbURL, "database", migrate)
}

func claim(tb testing.TB, dbURL, kind string, migrate MigratePostgres) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := openPool(ctx, dbURL)
	if err != nil {
		tb.Fatal(err)
	}
	holder := fmt.Sprintf("pid %d: %s", os.Getpid(), tb.Name())
	name, err := p.claim(ctx, kind, holder, migrate)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := p.release(ctx, kind, name); err != nil {
			tb.Errorf("giving %s %s back to the test pool: %v", kind, name, err)
		}
	})
	return name
}

type pool struct {
	url string
	key string
}

// poolKey is postgresKey; this package's tests pool under a key of their
// own, so their stand-in migrations never reach another test.
var poolKey = postgresKey

func openPool(ctx context.Context, dbURL string) (*pool, error) {
	key, err := poolKey()
	if err != nil {
		return nil, fmt.Errorf("the test pool: %w", err)
	}
	v, _ := setupOnce.LoadOrStore(dbURL, &onceErr{})
	o := v.(*onceErr)
	o.once.Do(func() { o.err = setup(ctx, dbURL, key) })
	if o.err != nil {
		return nil, o.err
	}
	return &pool{url: dbURL, key: key}, nil
}

func setup(ctx context.Context, dbURL, key string) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("the test pool: connecting: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// Concurrent processes creating the table at once would collide on the
	// catalog's unique indexes: one at a time, under a lock of the pool's.
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('`+poolTable+`'))`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, poolSetup)
		return err
	})
	if err != nil {
		return fmt.Errorf("the test pool: creating its table: %w", err)
	}
	// Free entries of other migrations are never claimed again.
	old, err := deleteEntries(ctx, conn, "key <> $1 AND (holder IS NULL OR claimed_at < now() - $2::interval)", key, staleClaim.String())
	if err != nil {
		return fmt.Errorf("the test pool: clearing old entries: %w", err)
	}
	for _, e := range old {
		_ = dropEntry(ctx, conn, e.kind, e.name)
	}
	return nil
}

// entry is a pooled schema or database.
type entry struct{ name, kind string }

// deleteEntries deletes the pool's rows that match cond (a condition on
// its columns, with args) and returns their entries, for the caller to drop.
func deleteEntries(ctx context.Context, conn *pgx.Conn, cond string, args ...any) ([]entry, error) {
	rows, err := conn.Query(ctx, `DELETE FROM `+poolTable+` WHERE `+cond+` RETURNING name, kind`, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (entry, error) {
		var e entry
		return e, r.Scan(&e.name, &e.kind)
	})
}

// claim takes a free entry of kind, or makes one, and returns its name,
// emptied and migrated.
func (p *pool) claim(ctx context.Context, kind, holder string, migrate MigratePostgres) (string, error) {
	conn, err := pgx.Connect(ctx, p.url)
	if err != nil {
		return "", fmt.Errorf("the test pool: connecting: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var name string
	var recorded *string // the entry's shape, once migrated
	var stale bool
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT name, shape, holder IS NOT NULL FROM `+poolTable+`
WHERE kind = $1 AND key = $2 AND (holder IS NULL OR claimed_at < now() - $3::interval)
ORDER BY name LIMIT 1 FOR UPDATE SKIP LOCKED`, kind, p.key, staleClaim.String()).Scan(&name, &recorded, &stale)
		if errors.Is(err, pgx.ErrNoRows) {
			name, recorded = poolName(kind, p.key), nil
			_, err = tx.Exec(ctx, `INSERT INTO `+poolTable+` (name, kind, key, holder, claimed_at) VALUES ($1, $2, $3, $4, now())`,
				name, kind, p.key, holder)
			return err
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE `+poolTable+` SET holder = $2, claimed_at = now() WHERE name = $1`, name, holder)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("the test pool: claiming a %s: %w", kind, err)
	}
	if recorded != nil && !stale {
		return name, nil // given back emptied, and checked
	}
	// New, half made by a process that died, or held by one: made afresh.
	// A failure leaves nothing in the pool.
	made := false
	defer func() {
		if !made {
			_ = dropEntry(context.WithoutCancel(ctx), conn, kind, name)
			_, _ = conn.Exec(context.WithoutCancel(ctx), `DELETE FROM `+poolTable+` WHERE name = $1`, name)
		}
	}()
	if err := dropEntry(ctx, conn, kind, name); err != nil {
		return "", err
	}
	target := p.url
	schema := name
	if kind == "database" {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			return "", fmt.Errorf("the test pool: creating database %s: %w", name, err)
		}
		if target, err = databaseURL(p.url, name); err != nil {
			return "", err
		}
		schema = ""
	}
	if err := migrate(ctx, target, schema); err != nil {
		return "", fmt.Errorf("the test pool: migrating %s %s: %w", kind, name, err)
	}
	ec, schema, done, err := p.entryConn(ctx, conn, kind, name)
	if err != nil {
		return "", err
	}
	s, err := shape(ctx, ec, schema, name)
	done()
	if err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, `UPDATE `+poolTable+` SET shape = $2 WHERE name = $1`, name, s); err != nil {
		return "", fmt.Errorf("the test pool: recording %s: %w", name, err)
	}
	made = true
	return name, nil
}

// release empties the entry and frees it, or drops it when its shape is no
// longer the one it was migrated to.
func (p *pool) release(ctx context.Context, kind, name string) error {
	conn, err := pgx.Connect(ctx, p.url)
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var want *string
	if err := conn.QueryRow(ctx, `SELECT shape FROM `+poolTable+` WHERE name = $1`, name).Scan(&want); err != nil {
		return fmt.Errorf("reading its entry: %w", err)
	}
	kept, err := p.emptyIfUnchanged(ctx, conn, kind, name, want)
	if kept {
		_, err = conn.Exec(ctx, `UPDATE `+poolTable+` SET holder = NULL, claimed_at = NULL WHERE name = $1`, name)
		return err
	}
	// Changed, or not emptied: dropped, and its entry with it.
	if derr := dropEntry(ctx, conn, kind, name); derr != nil {
		return errors.Join(err, derr)
	}
	_, derr := conn.Exec(ctx, `DELETE FROM `+poolTable+` WHERE name = $1`, name)
	return derr
}

// emptyIfUnchanged empties the entry when its shape is still want, and
// says whether it did.
func (p *pool) emptyIfUnchanged(ctx context.Context, conn *pgx.Conn, kind, name string, want *string) (bool, error) {
	ec, schema, done, err := p.entryConn(ctx, conn, kind, name)
	if err != nil {
		return false, err
	}
	defer done()
	got, err := shape(ctx, ec, schema, name)
	if err != nil || want == nil || got != *want {
		return false, err
	}
	if err := empty(ctx, ec, schema, name); err != nil {
		return false, err
	}
	return true, nil
}

// entryConn returns a connection to where the entry's tables are, and
// their schema: conn itself (to the pool's database) for a schema, a new
// connection for a database, closed by done.
func (p *pool) entryConn(ctx context.Context, conn *pgx.Conn, kind, name string) (ec *pgx.Conn, schema string, done func(), err error) {
	if kind == "schema" {
		return conn, name, func() {}, nil
	}
	u, err := databaseURL(p.url, name)
	if err != nil {
		return nil, "", nil, err
	}
	if ec, err = pgx.Connect(ctx, u); err != nil {
		return nil, "", nil, fmt.Errorf("connecting to %s: %w", name, err)
	}
	return ec, "public", func() { ec.Close(context.WithoutCancel(ctx)) }, nil
}

// shapeQuery digests what a test could change in a schema other than rows:
// its relations and their columns, constraints, functions and types.
const shapeQuery = `SELECT md5(concat_ws('|',
  (SELECT string_agg(c.relname || ':' || c.relkind::text, ',' ORDER BY c.relname) FROM pg_class c WHERE c.relnamespace = n.oid),
  (SELECT string_agg(c.relname || '.' || a.attname || ':' || a.atttypid::text || ':' || a.attnotnull::text || ':' || a.atthasdef::text, ',' ORDER BY c.relname, a.attnum)
     FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid WHERE c.relnamespace = n.oid AND a.attnum > 0 AND NOT a.attisdropped),
  (SELECT string_agg(k.conname || ':' || md5(pg_get_constraintdef(k.oid)), ',' ORDER BY k.conname) FROM pg_constraint k WHERE k.connamespace = n.oid),
  (SELECT string_agg(f.proname || ':' || md5(f.prosrc), ',' ORDER BY f.proname, f.oid) FROM pg_proc f WHERE f.pronamespace = n.oid),
  (SELECT string_agg(t.typname, ',' ORDER BY t.typname) FROM pg_type t WHERE t.typnamespace = n.oid)
)) FROM pg_namespace n WHERE n.nspname = $1`

// shape digests the entry name's schema (on conn) and its version table's
// rows; an entry that is gone has no shape (an error).
func shape(ctx context.Context, conn *pgx.Conn, schema, name string) (string, error) {
	var structure string
	if err := conn.QueryRow(ctx, shapeQuery, schema).Scan(&structure); err != nil {
		return "", fmt.Errorf("reading the shape of %s: %w", name, err)
	}
	var versions string
	err := conn.QueryRow(ctx, `SELECT coalesce(string_agg(version || ':' || name || ':' || coalesce(binary_version, '') || ':' ||
coalesce(compat_floor::text, ''), ',' ORDER BY version), '') FROM `+pgx.Identifier{schema, "switchboard_schema_migrations"}.Sanitize()).Scan(&versions)
	if err != nil {
		return "", fmt.Errorf("reading the versions of %s: %w", name, err)
	}
	return structure + "/" + versions, nil
}

// empty truncates the tables of the entry name's schema (on conn) that hold rows (all but the
// version table) and restarts its sequences. A lock held past a few
// seconds (a process of the test still running) fails it: the entry is
// dropped instead.
func empty(ctx context.Context, conn *pgx.Conn, schema, name string) error {
	rows, err := conn.Query(ctx, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relname <> 'switchboard_schema_migrations'`, schema)
	if err != nil {
		return fmt.Errorf("emptying %s: listing its tables: %w", name, err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("emptying %s: listing its tables: %w", name, err)
	}
	// Which hold rows, in one statement.
	var probes []string
	for _, t := range tables {
		id := pgx.Identifier{schema, t}.Sanitize()
		probes = append(probes, fmt.Sprintf("SELECT %s::text WHERE EXISTS (SELECT 1 FROM %s)", quoteLiteral(id), id))
	}
	var full []string
	if len(probes) > 0 {
		rows, err := conn.Query(ctx, strings.Join(probes, " UNION ALL "))
		if err != nil {
			return fmt.Errorf("emptying %s: finding tables with rows: %w", name, err)
		}
		if full, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return fmt.Errorf("emptying %s: finding tables with rows: %w", name, err)
		}
	}
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '5s'"); err != nil {
			return err
		}
		if len(full) > 0 {
			if _, err := tx.Exec(ctx, "TRUNCATE "+strings.Join(full, ", ")+" CASCADE"); err != nil {
				return fmt.Errorf("emptying %s: %w", name, err)
			}
		}
		// setval is not rolled back, nor need it be: a sequence restarts
		// whether or not its table had rows left.
		if _, err := tx.Exec(ctx, `SELECT setval(format('%I.%I', schemaname, sequencename), start_value, false)
FROM pg_sequences WHERE schemaname = $1`, schema); err != nil {
			return fmt.Errorf("emptying %s: restarting its sequences: %w", name, err)
		}
		return nil
	})
}

// dropEntry drops the schema or database name, if it exists.
func dropEntry(ctx context.Context, conn *pgx.Conn, kind, name string) error {
	stmt := "DROP SCHEMA IF EXISTS " + pgx.Identifier{name}.Sanitize() + " CASCADE"
	if kind == "database" {
		stmt = "DROP DATABASE IF EXISTS " + pgx.Identifier{name}.Sanitize() + " WITH (FORCE)"
	}
	if _, err := conn.Exec(ctx, stmt); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "3F000" { // already gone
			return nil
		}
		return fmt.Errorf("the test pool: dropping %s %s: %w", kind, name, err)
	}
	return nil
}

// poolName is a new entry's name: the pool's prefix, the migrations' key
// and a random part, within Postgres's 63 bytes and the store's 40 for a
// schema.
func poolName(kind, key string) string {
	prefix := "sbpool_"
	if kind == "database" {
		prefix = "sbpooldb_"
	}
	return prefix + key + "_" + randomHex()[:8]
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// databaseURL is rawURL pointed at database name.
func databaseURL(rawURL, name string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("the test pool: the database URL: %w", err)
	}
	u.Path = "/" + name
	return u.String(), nil
}
