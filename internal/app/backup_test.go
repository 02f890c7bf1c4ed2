package app

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/sqlite"
)

// pg_dump gets the password in PGPASSWORD, never on its command line
// (where ps shows it), and never sees the rest of the service's
// environment; what it prints comes back with the password replaced.
func TestPgDumpGetsThePasswordOutOfItsArguments(t *testing.T) {
	t.Parallel()
	schema := testenv.PostgresSchema(t)
	testenv.Postgres(t, schema) // a migrated store to back up
	const password = "hunter2-not-on-argv"
	u, err := url.Parse(testenv.PostgresURL(t)) // trust: the password is ignored
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), password)
	q := u.Query()
	q.Set("switchboard_schema", schema)
	q.Set("pool_max_conns", "4") // pgx's, which libpq refuses
	u.RawQuery = q.Encode()

	// A pg_dump that writes down what it got and fails, quoting the password.
	dir := t.TempDir()
	script := "#!/bin/sh\n" +
		"printf '%s\\n' \"$@\" > " + dir + "/argv\n" +
		"env > " + dir + "/env\n" +
		"echo \"pg_dump: error: connection failed: password $PGPASSWORD rejected\" >&2\n" +
		"exit 1\n"
	for _, name := range []string{"pg_dump", "pg_restore"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "pg.backup")
	_, err = Backup(t.Context(), BackupOptions{
		DatabaseURL: u.String(), Path: path, PgDump: filepath.Join(dir, "pg_dump"),
		Environ: []string{"PATH=/usr/bin:/bin", "PGSSLMODE=disable", "ANTHROPIC_API_KEY=sk-ant-keep-me-out", "PGPASSWORD=not-this-one"},
	})
	if err == nil {
		t.Fatal("Backup succeeded with a pg_dump that fails")
	}
	if strings.Contains(err.Error(), password) || !strings.Contains(err.Error(), "password REDACTED rejected") || !strings.Contains(err.Error(), "pg_dump failed") {
		t.Errorf("error = %q; want pg_dump's message with the password replaced", err)
	}
	argv, _ := os.ReadFile(filepath.Join(dir, "argv"))
	env, _ := os.ReadFile(filepath.Join(dir, "env"))
	if strings.Contains(string(argv), password) {
		t.Errorf("pg_dump's arguments hold the password:\n%s", argv)
	}
	for _, want := range []string{"--format=custom", "--no-owner", "--no-privileges", "--schema=" + schema, "--snapshot="} {
		if !strings.Contains(string(argv), want) {
			t.Errorf("pg_dump's arguments lack %s:\n%s", want, argv)
		}
	}
	if strings.Contains(string(argv), "pool_max_conns") || strings.Contains(string(argv), "switchboard_schema") {
		t.Errorf("pg_dump's connection carries parameters libpq does not know:\n%s", argv)
	}
	if !strings.Contains(string(env), "PGPASSWORD="+password+"\n") || !strings.Contains(string(env), "PGSSLMODE=disable\n") {
		t.Errorf("pg_dump's environment lacks PGPASSWORD from DATABASE_URL or the PG* settings:\n%s", env)
	}
	if strings.Contains(string(env), "ANTHROPIC_API_KEY") || strings.Contains(string(env), "not-this-one") {
		t.Errorf("pg_dump's environment holds the service's keys, or a PGPASSWORD other than DATABASE_URL's:\n%s", env)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the failed backup left PATH behind: %v", err)
	}
}

func TestLibpqConn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		db, listen     string
		url, password  string
		database, fail string
	}{
		{db: "postgres://sb:pw@db.internal:5432/app?sslmode=require&switchboard_schema=t1&pool_max_conns=9&search_path=x",
			url: "postgres://sb@db.internal:5432/app?sslmode=require", password: "pw", database: "app"},
		{db: "postgres://sb@127.0.0.1/app?password=qpw&application_name=x",
			url: "postgres://sb@127.0.0.1/app?application_name=x", password: "qpw", database: "app"},
		// Behind a transaction pooler: the direct connection.
		{db: "postgres://sb:pooled@pooler:6432/app?switchboard_simple_protocol=1", listen: "postgres://sb:direct@primary:5432/app",
			url: "postgres://sb@primary:5432/app", password: "direct", database: "app"},
	}
	for _, tt := range tests {
		c, err := libpqConn(tt.db, tt.listen)
		if err != nil {
			t.Fatalf("libpqConn(%q): %v", tt.db, err)
		}
		if c.url != tt.url || c.password != tt.password || c.database != tt.database {
			t.Errorf("libpqConn(%q, %q) = %q, %q, %q; want %q, %q, %q", tt.db, tt.listen, c.url, c.password, c.database, tt.url, tt.password, tt.database)
		}
		if got := c.redact("x " + tt.password + " y"); got != "x REDACTED y" {
			t.Errorf("redact = %q", got)
		}
	}
}

// The table of contents as pg_restore --list prints it.
const sampleTOC = `;
; Archive created at 2026-12-06 11:31:13 UTC
;     dbname: bk
;
; Selected TOC Entries:
;
6; 2615 16388 SCHEMA - s1 postgres
217; 1259 16395 TABLE s1 switchboard_schema_migrations postgres
216; 1259 16392 TABLE public u postgres
3349; 0 16395 TABLE DATA s1 switchboard_schema_migrations postgres
`

func TestTOC(t *testing.T) {
	t.Parallel()
	toc := &toc{lines: strings.Split(sampleTOC, "\n")}
	if !toc.hasTable("s1", migrationsTable) || toc.hasTable("public", migrationsTable) {
		t.Errorf("hasTable: want the migrations table in s1 only")
	}
	if got := toc.schemasWith(migrationsTable); len(got) != 1 || got[0] != "s1" {
		t.Errorf("schemasWith = %v, want [s1]", got)
	}
	list := string(toc.listWithout("SCHEMA", "s1"))
	if !strings.Contains(list, "\n;6; 2615 16388 SCHEMA - s1 postgres\n") || !strings.Contains(list, "\n217; 1259 16395 TABLE s1") {
		t.Errorf("listWithout(SCHEMA, s1) =\n%s\nwant only the schema's entry commented out", list)
	}
}

// restore -force replaces a file whose live instance lease belongs to a
// process that is gone, and refuses one whose holder runs or cannot be
// told (another host).
func TestRestoreForceAndInstanceLeases(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	backupPath := filepath.Join(dir, "b.backup")
	src := filepath.Join(dir, "src.db")
	seed := func(path string, lease bool) {
		t.Helper()
		s, err := sqlite.Open(t.Context(), sqlite.Options{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ConversationCreate(t.Context(), &store.ConversationCreateParams{Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if lease {
			if _, err := s.InstanceLeaseAcquire(t.Context(), &store.InstanceLeaseAcquireParams{
				InstanceID: "other", Holder: "h", Host: "elsewhere", PID: 4242, TTL: time.Hour, Now: time.Now(),
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	seed(src, false)
	if _, err := Backup(t.Context(), BackupOptions{DatabaseURL: "sqlite:" + src, Path: backupPath}); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "target.db")
	seed(target, true)
	restore := func(v verdict) error {
		_, err := Restore(context.Background(), RestoreOptions{
			DatabaseURL: "sqlite:" + target, Path: backupPath, Force: true,
			verdict: func(*store.InstanceLease) verdict { return v },
		})
		return err
	}
	for _, v := range []verdict{alive, unknown} {
		if err := restore(v); err == nil || !strings.Contains(err.Error(), `instance "other" holds it, pid 4242 on host elsewhere`) {
			t.Errorf("restore -force with a holder that is %v: %v; want a refusal naming the holder", v, err)
		}
	}
	if err := restore(dead); err != nil {
		t.Fatalf("restore -force with a holder that is gone: %v", err)
	}
	s, err := sqlite.Open(t.Context(), sqlite.Options{Path: target})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	leases, err := s.InstanceLeases(t.Context())
	if err != nil || len(leases) != 0 {
		t.Fatalf("the restored target's leases = %v, %v; want the backup's (none), not the old file's", leases, err)
	}
}

// The dump is checked with the pg_restore of pg_dump's installation; one
// without it is named before anything runs.
func TestBackupNeedsPgRestoreBesidePgDump(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pgDump := filepath.Join(dir, "pg_dump")
	if err := os.WriteFile(pgDump, []byte("#!/bin/sh\nexit 0\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := Backup(t.Context(), BackupOptions{DatabaseURL: "postgres://sb@127.0.0.1:5432/app", Path: filepath.Join(dir, "out"), PgDump: pgDump})
	if err == nil || !strings.Contains(err.Error(), "no pg_restore beside "+pgDump) || !strings.Contains(err.Error(), "SWITCHBOARD_PG_DUMP_PATH") {
		t.Fatalf("Backup with a lone pg_dump: %v; want an error naming the missing pg_restore and the setting", err)
	}
}
