package migrations_test

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, as the store uses

	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/migrations"
)

// The expand/contract rule, checked on real databases: each migration is
// applied in turn, and what the schema offered before it (tables, views,
// columns with their types, NOT NULL and defaults, functions, triggers) is
// compared with what it offers after. Whatever a migration takes away or
// changes under an earlier release's queries needs a contract line in its
// header; a migration that only adds passes as it is.

// schema is what a release's queries can rely on.
type schema struct {
	relations map[string]bool   // tables and views
	broken    map[string]bool   // views that no longer resolve
	columns   map[string]column // "relation.column"
	functions map[string]bool   // "name(argument types)"
	triggers  map[string]bool   // "name on relation"
}

type column struct {
	typ        string
	notNull    bool
	hasDefault bool
}

func newSchema() schema {
	return schema{relations: map[string]bool{}, broken: map[string]bool{}, columns: map[string]column{}, functions: map[string]bool{}, triggers: map[string]bool{}}
}

// takenAway says what after no longer offers that before did, each in a
// line a contributor can act on.
func takenAway(before, after schema) []string {
	var out []string
	for r := range before.relations {
		switch {
		case !after.relations[r]:
			out = append(out, fmt.Sprintf("table or view %s is dropped or renamed", r))
		case after.broken[r] && !before.broken[r]:
			out = append(out, fmt.Sprintf("view %s no longer resolves (what it reads is gone)", r))
		}
	}
	for k, was := range before.columns {
		rel, _, _ := strings.Cut(k, ".")
		if !after.relations[rel] || after.broken[rel] {
			continue // said once for the relation
		}
		now, ok := after.columns[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("column %s is dropped or renamed", k))
		case now.typ != was.typ:
			out = append(out, fmt.Sprintf("column %s changes type from %s to %s", k, was.typ, now.typ))
		case now.notNull && !was.notNull:
			out = append(out, fmt.Sprintf("column %s becomes NOT NULL", k))
		case now.notNull && was.hasDefault && !now.hasDefault:
			out = append(out, fmt.Sprintf("column %s (NOT NULL) loses its default, which an earlier release's inserts rely on", k))
		}
	}
	for k, now := range after.columns {
		rel, _, _ := strings.Cut(k, ".")
		if _, existed := before.columns[k]; existed || !before.relations[rel] {
			continue
		}
		if now.notNull && !now.hasDefault {
			out = append(out, fmt.Sprintf("column %s is added NOT NULL without a default: an earlier release's inserts leave it out", k))
		}
	}
	for f := range before.functions {
		if !after.functions[f] {
			out = append(out, fmt.Sprintf("function %s is dropped or renamed", f))
		}
	}
	for tr := range before.triggers {
		if !after.triggers[tr] {
			out = append(out, fmt.Sprintf("trigger %s is dropped or renamed", tr))
		}
	}
	slices.Sort(out)
	return out
}

// dialect applies migrations to a fresh database and reads its schema.
type dialect struct {
	name string
	// open returns a fresh, empty database: apply runs one migration's SQL
	// on it, snapshot reads its schema.
	open func(t *testing.T) (apply func(sql string) error, snapshot func() (schema, error))
}

var dialects = []dialect{{"sqlite", openSQLite}, {"postgres", openPostgres}}

func openSQLite(t *testing.T) (func(string) error, func() (schema, error)) {
	path := filepath.Join(t.TempDir(), "contract.db")
	db, err := sql.Open("sqlite", path+"?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	ctx := t.Context()
	apply := func(q string) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, q); err != nil {
			_ = tx.Rollback()
			return err
		}
		return tx.Commit()
	}
	snapshot := func() (schema, error) {
		s := newSchema()
		type object struct{ typ, name, table, sql string }
		var objs []object
		rows, err := db.QueryContext(ctx, `SELECT type, name, tbl_name, COALESCE(sql, '') FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'`)
		if err != nil {
			return s, err
		}
		for rows.Next() {
			var o object
			if err := rows.Scan(&o.typ, &o.name, &o.table, &o.sql); err != nil {
				rows.Close()
				return s, err
			}
			objs = append(objs, o)
		}
		rows.Close()
		// An FTS5 table's shadow tables (notes_fts_data, ...) are its own
		// business, not what a release reads.
		var virtual []string
		for _, o := range objs {
			if o.typ == "table" && strings.HasPrefix(strings.ToUpper(o.sql), "CREATE VIRTUAL TABLE") {
				virtual = append(virtual, o.name+"_")
			}
		}
		for _, o := range objs {
			switch o.typ {
			case "trigger":
				s.triggers[o.name+" on "+o.table] = true
			case "table", "view":
				if slices.ContainsFunc(virtual, func(p string) bool { return strings.HasPrefix(o.name, p) }) {
					continue
				}
				s.relations[o.name] = true
				cols, err := db.QueryContext(ctx, `SELECT name, type, "notnull", dflt_value IS NOT NULL FROM pragma_table_info(?)`, o.name)
				if err != nil {
					s.broken[o.name] = true // a view over something gone
					continue
				}
				for cols.Next() {
					var name string
					var c column
					if err := cols.Scan(&name, &c.typ, &c.notNull, &c.hasDefault); err != nil {
						cols.Close()
						return s, err
					}
					c.typ = strings.ToUpper(c.typ)
					s.columns[o.name+"."+name] = c
				}
				if err := cols.Err(); err != nil {
					s.broken[o.name] = true
				}
				cols.Close()
			}
		}
		return s, nil
	}
	return apply, snapshot
}

const (
	pgRelations = `SELECT c.relname FROM pg_class c
WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f')`
	pgColumns = `SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, a.atthasdef
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND a.attnum > 0 AND NOT a.attisdropped`
	pgFunctions = `SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' FROM pg_proc p
WHERE p.pronamespace = current_schema()::regnamespace`
	pgTriggers = `SELECT t.tgname || ' on ' || c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal`
)

func openPostgres(t *testing.T) (func(string) error, func() (schema, error)) {
	url, name := testenv.PostgresURL(t), testenv.PostgresEmptySchema(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connecting to TEST_DATABASE_URL: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SET search_path TO "+name); err != nil {
		t.Fatal(err)
	}
	apply := func(q string) error {
		tx, err := conn.Begin(t.Context())
		if err != nil {
			return err
		}
		if _, err := tx.Exec(t.Context(), q); err != nil {
			_ = tx.Rollback(t.Context())
			return err
		}
		return tx.Commit(t.Context())
	}
	names := func(q string, into map[string]bool) error {
		rows, err := conn.Query(t.Context(), q)
		if err != nil {
			return err
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		for _, n := range got {
			into[n] = true
		}
		return err
	}
	snapshot := func() (schema, error) {
		s := newSchema()
		for q, into := range map[string]map[string]bool{pgRelations: s.relations, pgFunctions: s.functions, pgTriggers: s.triggers} {
			if err := names(q, into); err != nil {
				return s, err
			}
		}
		rows, err := conn.Query(t.Context(), pgColumns)
		if err != nil {
			return s, err
		}
		defer rows.Close()
		for rows.Next() {
			var rel, name string
			var c column
			if err := rows.Scan(&rel, &name, &c.typ, &c.notNull, &c.hasDefault); err != nil {
				return s, err
			}
			s.columns[rel+"."+name] = c
		}
		return s, rows.Err()
	}
	return apply, snapshot
}

// violation is a migration that takes something away without a contract.
type violation struct {
	file string
	what []string
}

// check applies ms in order on a fresh database of d and returns the
// migrations that take away what the schema before them offered without
// declaring a floor.
func check(t *testing.T, d dialect, ms []migrations.Migration) []violation {
	t.Helper()
	apply, snapshot := d.open(t)
	before, err := snapshot()
	if err != nil {
		t.Fatalf("reading the empty %s schema: %v", d.name, err)
	}
	var out []violation
	for _, m := range ms {
		if err := apply(m.SQL); err != nil {
			t.Fatalf("applying %s: %v", m.Name, err)
		}
		after, err := snapshot()
		if err != nil {
			t.Fatalf("reading the %s schema after %s: %v", d.name, m.Name, err)
		}
		if gone := takenAway(before, after); len(gone) > 0 && m.Contract == 0 {
			out = append(out, violation{file: m.Name, what: gone})
		}
		before = after
	}
	return out
}

// TestExpandContract holds the shipped migrations to the rule: one that
// drops, renames or narrows what an earlier release reads or writes
// declares which binaries it leaves behind.
func TestExpandContract(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			ms, err := migrations.Load(d.name)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range check(t, d, ms) {
				m := ms[slices.IndexFunc(ms, func(m migrations.Migration) bool { return m.Name == v.file })]
				t.Errorf("%s takes away what an earlier release reads, without declaring a floor:\n\t%s\n"+
					"Keep it for one more release (expand now, contract later), or add the header line\n"+
					"\t-- contract: binaries before schema %d stop working\n"+
					"with the lowest schema whose binaries no longer read it (at most %d); see docs/production.md#upgrades",
					v.file, strings.Join(v.what, "\n\t"), m.Version, m.Version)
			}
		})
	}
}

// TestExpandContractCatches shows the check at work: each change takes away
// something an earlier release reads and is named, unless its header
// declares a floor; additions pass.
func TestExpandContractCatches(t *testing.T) {
	type change struct {
		base, sql string
		want      string // in the violation; "" for an expand change
	}
	cases := map[string][]change{
		"postgres": {
			{sql: `DROP TABLE t CASCADE`, want: "table or view t is dropped"},
			{sql: `ALTER TABLE t RENAME TO t2`, want: "table or view t is dropped or renamed"},
			{sql: `ALTER TABLE t DROP COLUMN b`, want: "column t.b is dropped"},
			{sql: `ALTER TABLE t RENAME COLUMN b TO c`, want: "column t.b is dropped or renamed"},
			{sql: `ALTER TABLE t ALTER COLUMN b TYPE bigint`, want: "column t.b changes type from integer to bigint"},
			{sql: `ALTER TABLE t ALTER COLUMN a SET NOT NULL`, want: "column t.a becomes NOT NULL"},
			{sql: `ALTER TABLE t ALTER COLUMN b DROP DEFAULT`, want: "column t.b (NOT NULL) loses its default"},
			{sql: `ALTER TABLE t ADD COLUMN c text NOT NULL`, want: "column t.c is added NOT NULL without a default"},
			{sql: `DROP VIEW v`, want: "table or view v is dropped"},
			{sql: `DROP TRIGGER tr ON t; DROP FUNCTION f()`, want: "function f() is dropped"},
			{sql: `DROP TRIGGER tr ON t`, want: "trigger tr on t is dropped"},
			{sql: `ALTER TABLE t ADD COLUMN c text`},
			{sql: `ALTER TABLE t ADD COLUMN c integer NOT NULL DEFAULT 1`},
			{sql: `CREATE TABLE u (x integer NOT NULL); CREATE INDEX t_a ON t (a)`},
			{sql: `CREATE OR REPLACE VIEW v AS SELECT id, a, b FROM t`},
			{sql: `ALTER TABLE t ALTER COLUMN b SET DEFAULT 7; ALTER TABLE t ALTER COLUMN b DROP NOT NULL`},
		},
		"sqlite": {
			{sql: `DROP VIEW v; DROP TABLE t`, want: "table or view t is dropped"},
			{sql: `DROP TABLE t`, want: "view v no longer resolves"},
			{sql: `ALTER TABLE t RENAME TO t2`, want: "table or view t is dropped or renamed"},
			{sql: `ALTER TABLE t DROP COLUMN b`, want: "column t.b is dropped"},
			{sql: `ALTER TABLE t RENAME COLUMN b TO c`, want: "column t.b is dropped or renamed"},
			{base: `CREATE TABLE t (id INTEGER PRIMARY KEY, b INTEGER NOT NULL DEFAULT 0)`,
				sql:  `CREATE TABLE t_new (id INTEGER PRIMARY KEY, b TEXT NOT NULL DEFAULT 0); INSERT INTO t_new SELECT * FROM t; DROP TABLE t; ALTER TABLE t_new RENAME TO t`,
				want: "column t.b changes type from INTEGER to TEXT"},
			{base: `CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT)`,
				sql:  `CREATE TABLE t_new (id INTEGER PRIMARY KEY, a TEXT NOT NULL DEFAULT ''); INSERT INTO t_new SELECT * FROM t; DROP TABLE t; ALTER TABLE t_new RENAME TO t`,
				want: "column t.a becomes NOT NULL"},
			{base: `CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT)`,
				sql:  `CREATE TABLE t_new (id INTEGER PRIMARY KEY, a TEXT, c TEXT NOT NULL); INSERT INTO t_new (id, a, c) SELECT id, a, '' FROM t; DROP TABLE t; ALTER TABLE t_new RENAME TO t`,
				want: "column t.c is added NOT NULL without a default"},
			{sql: `DROP VIEW v`, want: "table or view v is dropped"},
			{sql: `DROP TRIGGER tr`, want: "trigger tr on t is dropped"},
			// The rebuild SQLite needs to change a CHECK keeps every column: compatible.
			{base: `CREATE TABLE t (id INTEGER PRIMARY KEY, state TEXT NOT NULL CHECK (state IN ('a')))`,
				sql: `CREATE TABLE t_new (id INTEGER PRIMARY KEY, state TEXT NOT NULL CHECK (state IN ('a', 'b'))); INSERT INTO t_new SELECT * FROM t; DROP TABLE t; ALTER TABLE t_new RENAME TO t`},
			{sql: `ALTER TABLE t ADD COLUMN c TEXT`},
			{sql: `ALTER TABLE t ADD COLUMN c INTEGER NOT NULL DEFAULT 1; CREATE INDEX t_a ON t (a)`},
		},
	}
	bases := map[string]string{
		"postgres": `CREATE TABLE t (id integer PRIMARY KEY, a text, b integer NOT NULL DEFAULT 0);
CREATE VIEW v AS SELECT id, a FROM t;
CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION f();`,
		"sqlite": `CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT, b INTEGER NOT NULL DEFAULT 0);
CREATE VIEW v AS SELECT id, a FROM t;
CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END;`,
	}
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			for i, c := range cases[d.name] {
				base := cmp.Or(c.base, bases[d.name])
				for _, contract := range []bool{false, true} {
					ms := []migrations.Migration{
						{Version: 1, Name: "0001_base.sql", SQL: base},
						{Version: 2, Name: fmt.Sprintf("0002_change_%d.sql", i), SQL: c.sql},
					}
					if contract {
						ms[1].Contract = 2
					}
					got := check(t, d, ms)
					switch {
					case c.want == "" && len(got) > 0:
						t.Errorf("%q only adds, yet the check names it: %v", c.sql, got)
					case c.want != "" && contract && len(got) > 0:
						t.Errorf("%q declares a floor, yet the check names it: %v", c.sql, got)
					case c.want != "" && !contract && (len(got) != 1 || got[0].file != ms[1].Name || !slices.ContainsFunc(got[0].what, func(s string) bool { return strings.Contains(s, c.want) })):
						t.Errorf("%q without a floor: the check found %v; want %s named with %q", c.sql, got, ms[1].Name, c.want)
					}
				}
			}
		})
	}
}
