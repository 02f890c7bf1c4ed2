// Package testenv opens real stores for tests outside the store packages: a
// fresh SQLite file, or a fresh schema on the Postgres of TEST_DATABASE_URL.
package testenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard/internal/dbtemplate"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
	"github.com/switchboardhq/switchboard/store/postgres"
	"github.com/switchboardhq/switchboard/store/sqlite"
)

// Logger routes logs to tb.Log.
func Logger(tb testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tbWriter{tb}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tbWriter struct{ tb testing.TB }

func (w tbWriter) Write(p []byte) (int, error) {
	w.tb.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// SQLite opens a migrated store on a fresh file, closed when the test ends.
func SQLite(tb testing.TB) store.Store {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := sqlite.Open(ctx, sqlite.Options{Path: SQLiteFile(tb), Logger: Logger(tb)})
	if err != nil {
		tb.Fatalf("opening sqlite: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	if _, err := s.Migrate(ctx); err != nil {
		tb.Fatalf("migrating sqlite: %v", err)
	}
	return s
}

// SQLiteFile returns the path of a fresh SQLite database in tb's temporary
// folder, migrated already: a copy of one migrated file (internal/dbtemplate).
// A service started on it finds nothing to migrate.
func SQLiteFile(tb testing.TB) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "switchboard.db")
	if err := dbtemplate.CopySQLite(path, migrateSQLite); err != nil {
		tb.Fatal(err)
	}
	return path
}

// migrateSQLite creates a migrated SQLite database at path and closes it:
// the dbtemplate.Migrate of the SQLite driver.
func migrateSQLite(path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := sqlite.Open(ctx, sqlite.Options{Path: path})
	if err != nil {
		return err
	}
	if _, err := s.Migrate(ctx); err != nil {
		_ = s.Close()
		return err
	}
	return s.Close()
}

// PostgresURL is TEST_DATABASE_URL. Without it the test skips, unless
// SWITCHBOARD_REQUIRE_POSTGRES=1, where a skip would hide a broken CI
// (dbtemplate.PostgresURL).
func PostgresURL(tb testing.TB) string {
	tb.Helper()
	return dbtemplate.PostgresURL(tb)
}

// PostgresSchema returns a migrated, empty schema of the test's own, from
// the pool of internal/dbtemplate: a service started on it finds nothing
// to migrate, as on a SQLiteFile. It goes back to the pool emptied when
// the test ends, or is dropped if the test changed what is in it beyond
// rows.
func PostgresSchema(tb testing.TB) string {
	tb.Helper()
	return dbtemplate.PostgresSchema(tb, PostgresURL(tb), migratePostgres)
}

// PostgresEmptySchema returns a fresh schema name with nothing in it (the
// store creates it), dropped when the test ends: for tests of migrating,
// restoring or starting on an empty database.
func PostgresEmptySchema(tb testing.TB) string {
	tb.Helper()
	url := PostgresURL(tb)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "sbtest_" + hex.EncodeToString(b)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			tb.Logf("dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			tb.Logf("dropping schema %s: %v", schema, err)
		}
	})
	return schema
}

// migratePostgres is the dbtemplate.MigratePostgres of the Postgres driver.
func migratePostgres(ctx context.Context, dbURL, schema string) error {
	s, err := postgres.Open(ctx, postgres.Options{URL: dbURL, Schema: schema})
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.Migrate(ctx)
	return err
}

// Postgres opens a migrated store on a schema of the test's own (from
// PostgresSchema). Several stores opened on one schema (as several
// instances) share it: pass the schema of the first.
func Postgres(tb testing.TB, schema string) store.Store {
	tb.Helper()
	if schema == "" {
		schema = PostgresSchema(tb)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := postgres.Open(ctx, postgres.Options{URL: PostgresURL(tb), Schema: schema, Logger: Logger(tb)})
	if err != nil {
		tb.Fatalf("opening postgres: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	if _, err := s.Migrate(ctx); err != nil {
		tb.Fatalf("migrating postgres: %v", err)
	}
	return s
}

// Each runs f once per driver.
func Each(t *testing.T, f func(t *testing.T, open func(tb testing.TB) store.Store)) {
	t.Run("sqlite", func(t *testing.T) { f(t, SQLite) })
	t.Run("postgres", func(t *testing.T) {
		schema := PostgresSchema(t)
		f(t, func(tb testing.TB) store.Store { return Postgres(tb, schema) })
	})
}

// Buffer is a bytes.Buffer that goroutines may write to while a test reads
// it: a service's log, say.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// Bytes is a copy of what was written so far.
func (l *Buffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

// String is what was written so far.
func (l *Buffer) String() string { return string(l.Bytes()) }

// PostgresMigratedDatabase returns the name of a migrated, empty database
// of the test's own (the store in its default schema), from the pool of
// internal/dbtemplate, as PostgresSchema does a schema.
func PostgresMigratedDatabase(tb testing.TB) string {
	tb.Helper()
	return dbtemplate.PostgresDatabase(tb, PostgresURL(tb), migratePostgres)
}

// PostgresDatabase creates an empty database on the Postgres of
// TEST_DATABASE_URL, dropped (with its connections) when the test ends, and
// returns its name. A database of its own lets a test count what is in it,
// or terminate every connection to it, without touching anyone else's.
func PostgresDatabase(tb testing.TB) string {
	tb.Helper()
	admin := PostgresURL(tb)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "sbtestdb_" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		tb.Fatalf("connecting to TEST_DATABASE_URL: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("creating database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		// DROP DATABASE waits for a checkpoint, which a server busy with
		// the rest of the suite can take tens of seconds to finish: retry
		// for up to two minutes.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		for {
			err := func() error {
				conn, err := pgx.Connect(ctx, admin)
				if err != nil {
					return err
				}
				defer conn.Close(context.Background())
				_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
				return err
			}()
			if err == nil {
				return
			}
			select {
			case <-ctx.Done():
				tb.Logf("dropping database %s: %v", name, err)
				return
			case <-time.After(time.Second):
			}
		}
	})
	return name
}

// PostgresDatabaseURL is TEST_DATABASE_URL pointed at database name.
func PostgresDatabaseURL(tb testing.TB, name string) string {
	tb.Helper()
	u, err := url.Parse(PostgresURL(tb))
	if err != nil {
		tb.Fatalf("TEST_DATABASE_URL is not a URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

// recordVersion is what a newer binary's migration runner leaves in the
// version table: a version, the binary that applied it and its floor.
const (
	recordVersion = `INSERT INTO switchboard_schema_migrations (version, name, applied_at, binary_version, compat_floor)
VALUES ($1, $2, $3, $4, $5)`
	recordVersionSQLite = `INSERT INTO switchboard_schema_migrations (version, name, applied_at, binary_version, compat_floor)
VALUES (?, ?, ?, ?, ?)`
)

// RecordSchemaVersion writes into the version table of the migrated store
// at databaseURL (a DATABASE_URL) what a newer binary, named binary, leaves
// there after applying version with floor: as if a release this binary does
// not know had migrated the store.
func RecordSchemaVersion(tb testing.TB, databaseURL string, version, floor int, binary string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t, err := dial.Parse(databaseURL)
	if err != nil {
		tb.Fatal(err)
	}
	name := fmt.Sprintf("postgres/%04d_from_a_newer_release.sql", version)
	if t.Driver == "sqlite" {
		db, err := sql.Open("sqlite", t.Path+"?_pragma=busy_timeout(10000)")
		if err != nil {
			tb.Fatalf("opening %s: %v", t.Path, err)
		}
		defer db.Close()
		if _, err := db.ExecContext(ctx, recordVersionSQLite, version, strings.Replace(name, "postgres", "sqlite", 1), time.Now().UnixMicro(), binary, floor); err != nil {
			tb.Fatalf("recording schema version %d in %s: %v", version, t.Path, err)
		}
		return
	}
	cfg, err := pgx.ParseConfig(t.URL)
	if err != nil {
		tb.Fatal(err)
	}
	if t.Schema != "" {
		cfg.RuntimeParams["search_path"] = t.Schema
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		tb.Fatalf("connecting to record schema version %d: %v", version, err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, recordVersion, version, name, time.Now(), binary, floor); err != nil {
		tb.Fatalf("recording schema version %d: %v", version, err)
	}
}
