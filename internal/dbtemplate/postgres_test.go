package dbtemplate

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

// standIn migrates a schema to a table with a sequence and the version
// table, counting its runs.
type standIn struct {
	mu    sync.Mutex
	calls int
}

func (m *standIn) migrate(ctx context.Context, dbURL, schema string) error {
	m.mu.Lock()
	m.calls++
	m.mu.Unlock()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	s := pgx.Identifier{schema}.Sanitize()
	if schema == "" {
		s = "public"
	} else if _, err := conn.Exec(ctx, "CREATE SCHEMA "+s); err != nil {
		return err
	}
	_, err = conn.Exec(ctx, fmt.Sprintf(`CREATE TABLE %[1]s.notes (id bigserial PRIMARY KEY, body text NOT NULL);
CREATE TABLE %[1]s.tags (note bigint REFERENCES %[1]s.notes (id), tag text);
CREATE TABLE %[1]s.switchboard_schema_migrations (version integer PRIMARY KEY, name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now(), binary_version text, compat_floor integer);
INSERT INTO %[1]s.switchboard_schema_migrations (version, name) VALUES (1, 'notes')`, s))
	return err
}

func (m *standIn) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

// isolate gives the test a pool key of its own, and drops what it pooled
// at the end.
func isolate(t *testing.T, url string) {
	t.Helper()
	key := "t" + randomHex()[:11]
	before := poolKey
	poolKey = func() (string, error) { return key, nil }
	t.Cleanup(func() {
		poolKey = before
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close(ctx)
		old, err := deleteEntries(ctx, conn, "key = $1", key)
		if err != nil {
			t.Error(err)
		}
		for _, e := range old {
			if err := dropEntry(ctx, conn, e.kind, e.name); err != nil {
				t.Error(err)
			}
		}
	})
}

func exec(t *testing.T, url, sql string, args ...any) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func queryInt(t *testing.T, url, sql string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// A schema is migrated once, handed out empty with its sequences
// restarted, and never to two tests at once; one whose shape a test
// changed is dropped, not handed out again.
func TestPostgresSchemaPool(t *testing.T) {
	url := PostgresURL(t)
	isolate(t, url)
	m := &standIn{}

	var first string
	t.Run("first", func(t *testing.T) {
		first = PostgresSchema(t, url, m.migrate)
		exec(t, url, fmt.Sprintf(`INSERT INTO %[1]s.notes (body) VALUES ('a'), ('b');
INSERT INTO %[1]s.tags VALUES (1, 'x')`, first))
	})
	t.Run("second", func(t *testing.T) {
		got := PostgresSchema(t, url, m.migrate)
		if got != first {
			t.Fatalf("claimed %s, want the freed %s again", got, first)
		}
		if n := queryInt(t, url, "SELECT count(*) FROM "+got+".notes"); n != 0 {
			t.Fatalf("%d rows left in notes by the test before", n)
		}
		if n := queryInt(t, url, "SELECT count(*) FROM "+got+".switchboard_schema_migrations"); n != 1 {
			t.Fatalf("the version table holds %d rows, want the 1 migration's", n)
		}
		// The sequence restarted: the next note is 1 again.
		if n := queryInt(t, url, "INSERT INTO "+got+".notes (body) VALUES ('c') RETURNING id"); n != 1 {
			t.Fatalf("the first note after emptying is %d, want 1", n)
		}
		// Held: a claim beside this one gets another schema.
		t.Run("beside", func(t *testing.T) {
			if other := PostgresSchema(t, url, m.migrate); other == got {
				t.Fatalf("two holders of %s", got)
			}
		})
		// A new table: the schema is no longer as migrated.
		exec(t, url, "CREATE TABLE "+got+".extra (x int)")
	})
	if n := queryInt(t, url, fmt.Sprintf("SELECT count(*) FROM pg_namespace WHERE nspname = '%s'", first)); n != 0 {
		t.Fatalf("%s, changed by its test, is still there", first)
	}
	t.Run("third", func(t *testing.T) {
		got := PostgresSchema(t, url, m.migrate)
		if got == first {
			t.Fatalf("the changed schema %s was handed out again", got)
		}
		// A newer release's version row changes the shape too.
		exec(t, url, "INSERT INTO "+got+".switchboard_schema_migrations (version, name) VALUES (2, 'newer')")
	})
	// Migrated: first, the one beside the second, the one after the
	// first was dropped; the third (changed) is gone and a fourth claim
	// takes the one from beside.
	if got := m.count(); got != 2 {
		t.Fatalf("migrated %d times, want 2 (first, and the one beside the second; the third reused it)", got)
	}
	t.Run("fourth", func(t *testing.T) {
		PostgresSchema(t, url, m.migrate)
	})
	if got := m.count(); got != 3 {
		t.Fatalf("migrated %d times after the fourth claim, want 3", got)
	}
}

// A pooled database is emptied the same way, in its default schema.
func TestPostgresDatabasePool(t *testing.T) {
	url := PostgresURL(t)
	isolate(t, url)
	m := &standIn{}
	var first string
	t.Run("first", func(t *testing.T) {
		first = PostgresDatabase(t, url, m.migrate)
		u, err := databaseURL(url, first)
		if err != nil {
			t.Fatal(err)
		}
		exec(t, u, "INSERT INTO notes (body) VALUES ('a')")
	})
	t.Run("second", func(t *testing.T) {
		got := PostgresDatabase(t, url, m.migrate)
		if got != first {
			t.Fatalf("claimed %s, want %s again", got, first)
		}
		u, _ := databaseURL(url, got)
		if n := queryInt(t, u, "SELECT count(*) FROM notes"); n != 0 {
			t.Fatalf("%d rows left", n)
		}
	})
	if m.count() != 1 {
		t.Fatalf("migrated %d times, want once", m.count())
	}
}
