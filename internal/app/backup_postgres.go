package app

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/internal/childenv"
	"github.com/switchboardhq/switchboard/store/dial"
	"github.com/switchboardhq/switchboard/store/postgres"
)

// Postgres backups are pg_dump's custom format (pg_restore reads it, table
// by table, and can list what it holds), without owners or privileges, so
// that it restores as whichever role runs pg_restore. With
// switchboard_schema set, only that schema is dumped; without, the whole
// database. pg_dump reads from a snapshot the store exported, so what is
// printed (schema version, conversations) is what the dump holds.
//
// pg_dump and pg_restore get the connection without its password on their
// command line (where ps shows it to every user of the machine): the
// password goes in PGPASSWORD, and is replaced in every error.

// migrationsTable is the migration runner's table: every store has it, so
// a dump that lacks it is not a Switchboard backup.
const migrationsTable = "switchboard_schema_migrations"

func backupPostgres(ctx context.Context, opts BackupOptions, t dial.Target) (*BackupResult, error) {
	pgDump, err := findProgram(opts.PgDump, "pg_dump", "SWITCHBOARD_PG_DUMP_PATH", "-pg-dump")
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	// The dump is checked with the pg_restore of the same installation.
	pgRestore, err := exec.LookPath(siblingProgram(pgDump, "pg_restore"))
	if err != nil {
		return nil, fmt.Errorf("backup: no pg_restore beside %s (SWITCHBOARD_PG_DUMP_PATH, -pg-dump): backup checks the dump with it; install the PostgreSQL client programs together: %w", pgDump, err)
	}
	conn, err := libpqConn(opts.DatabaseURL, opts.ListenURL)
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	st, err := openPostgres(ctx, t, opts.Logger)
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	defer st.Close()

	tmp, err := tempBeside(opts.Path, "backup")
	if err != nil {
		return nil, err
	}
	done := false
	defer func() {
		if !done {
			_ = os.Remove(tmp)
		}
	}()
	res := &BackupResult{Path: opts.Path, Dialect: "postgres", WholeDatabase: t.Schema == ""}
	err = st.Snapshot(ctx, func(ctx context.Context, snap *postgres.Snapshot) error {
		res.Schema, res.SchemaVersion, res.Conversations = snap.Schema, snap.SchemaVersion, snap.Conversations
		args := []string{"--format=custom", "--no-owner", "--no-privileges", "--snapshot=" + snap.ID, "--file=" + tmp}
		if t.Schema != "" {
			args = append(args, "--schema="+t.Schema)
		}
		args = append(args, "--dbname="+conn.url)
		_, err := runPG(ctx, pgDump, "pg_dump", args, conn, opts.Environ)
		return err
	})
	if errors.Is(err, postgres.ErrNoStore) {
		return nil, fmt.Errorf("backup: DATABASE_URL names a database (or schema) without a switchboard store: %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	// The check: pg_restore reads the archive back, finds the store's
	// tables in the schema, and the schema version in the data.
	toc, err := readTOC(ctx, pgRestore, tmp, conn, opts.Environ)
	if err != nil {
		return nil, fmt.Errorf("backup: checking the dump: %w", err)
	}
	if !toc.hasTable(res.Schema, migrationsTable) || !toc.hasTable(res.Schema, "conversations") {
		return nil, fmt.Errorf("backup: checking the dump: it lacks the store's tables in schema %s", res.Schema)
	}
	v, err := dumpSchemaVersion(ctx, pgRestore, tmp, res.Schema, conn, opts.Environ)
	if err != nil {
		return nil, fmt.Errorf("backup: checking the dump: %w", err)
	}
	if v != res.SchemaVersion {
		return nil, fmt.Errorf("backup: checking the dump: it holds schema version %d, the snapshot read %d", v, res.SchemaVersion)
	}
	if res.Bytes, err = install(tmp, opts.Path, opts.Force); err != nil {
		return nil, err
	}
	done = true
	return res, nil
}

func restorePostgres(ctx context.Context, opts RestoreOptions, t dial.Target) (*RestoreResult, error) {
	pgRestore, err := findProgram(opts.PgRestore, "pg_restore", "SWITCHBOARD_PG_RESTORE_PATH", "-pg-restore")
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	conn, err := libpqConn(opts.DatabaseURL, opts.ListenURL)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	where, _ := storeWhere(opts.DatabaseURL)
	toc, err := readTOC(ctx, pgRestore, opts.Path, conn, opts.Environ)
	if err != nil {
		return nil, fmt.Errorf("restore: reading PATH: %w", err)
	}
	// The dump's objects are qualified with their schema: they go back into
	// the schema they came from, which must be the one DATABASE_URL names.
	want := t.Schema
	if want == "" {
		want = "public"
	}
	if !toc.hasTable(want, migrationsTable) {
		in := toc.schemasWith(migrationsTable)
		if len(in) == 0 {
			return nil, fmt.Errorf("restore: PATH %s holds no switchboard store (no %s table)", opts.Path, migrationsTable)
		}
		return nil, fmt.Errorf("restore: PATH %s holds the store in schema %s, and DATABASE_URL names schema %s: set switchboard_schema=%s in DATABASE_URL (a dump goes back into the schema it came from)",
			opts.Path, in[0], want, in[0])
	}
	version, err := dumpSchemaVersion(ctx, pgRestore, opts.Path, want, conn, opts.Environ)
	if err != nil {
		return nil, fmt.Errorf("restore: reading PATH: %w", err)
	}
	if err := checkBackupVersion(opts.Path, version, "postgres"); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}

	// Opening the store creates switchboard_schema when it is missing, as
	// serve would; the dump's own CREATE SCHEMA is then left out.
	st, err := openPostgres(ctx, t, opts.Logger)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	defer st.Close()
	names, total, err := st.Objects(ctx, t.Schema)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	if total > 0 {
		what := "database " + conn.database
		if t.Schema != "" {
			what = "schema " + t.Schema + " of database " + conn.database
		}
		return nil, fmt.Errorf("restore: the %s is not empty (%d objects: %s%s): restore into an empty one (a new database, or a new switchboard_schema)",
			what, total, strings.Join(names, ", "), more(total, len(names)))
	}
	list, err := writeTemp("switchboard-restore-*.list", toc.listWithout("SCHEMA", t.Schema))
	if err != nil {
		return nil, fmt.Errorf("restore: writing the list for pg_restore: %w", err)
	}
	defer os.Remove(list)
	// One transaction: a failure leaves the target as empty as it was.
	args := []string{"--single-transaction", "--exit-on-error", "--no-owner", "--no-privileges", "--use-list=" + list, "--dbname=" + conn.url, opts.Path}
	if _, err := runPG(ctx, pgRestore, "pg_restore", args, conn, opts.Environ); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	res := &RestoreResult{Where: where, Dialect: "postgres", BackupVersion: version}
	if res.SchemaVersion, err = st.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("restore: migrating the restored store: %w", err)
	}
	sum, err := st.Inspect(ctx)
	if err != nil {
		return nil, fmt.Errorf("restore: reading the restored store: %w", err)
	}
	res.Conversations = sum.Conversations
	return res, nil
}

func more(total int64, shown int) string {
	if total > int64(shown) {
		return fmt.Sprintf(" and %d more", total-int64(shown))
	}
	return ""
}

func openPostgres(ctx context.Context, t dial.Target, log *slog.Logger) (*postgres.Store, error) {
	octx, cancel := context.WithTimeout(ctx, DefaultBackupOpenTimeout)
	defer cancel()
	s, err := postgres.Open(octx, postgres.Options{URL: t.URL, SimpleProtocol: t.SimpleProtocol, Schema: t.Schema, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: opening the store: %w", err)
	}
	return s, nil
}

// findProgram resolves a pg_dump or pg_restore setting to a program.
func findProgram(value, name, setting, flag string) (string, error) {
	p, err := exec.LookPath(value)
	if err != nil {
		return "", fmt.Errorf("%s not found (%s or %s is %q): install the PostgreSQL client programs, of the server's major version or newer, or point %s at %s: %w",
			name, setting, flag, value, setting, name, err)
	}
	return p, nil
}

// siblingProgram is name in the folder of prog (a path, as LookPath
// returns it): the pg_restore of the same installation as a pg_dump.
func siblingProgram(prog, name string) string {
	return filepath.Join(filepath.Dir(prog), name)
}

func writeTemp(pattern string, content []byte) (string, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return "", err
	}
	_, err = f.Write(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// pgConn is how pg_dump and pg_restore reach the server.
type pgConn struct {
	url      string // a libpq URI without the password
	password string // for PGPASSWORD; never on a command line
	database string
	// secrets are replaced in errors: the password, and an sslpassword
	// left in the URL (libpq reads it from nowhere else).
	secrets []string
}

// libpqKeywords are the URI parameters libpq knows (PostgreSQL 17). pgx
// takes others (pool_*, statement_cache_capacity, startup parameters such
// as search_path): libpq refuses unknown ones, and pg_dump sets its own
// session, so they are left out.
var libpqKeywords = []string{
	"host", "hostaddr", "port", "dbname", "user", "passfile", "channel_binding",
	"connect_timeout", "client_encoding", "options", "application_name", "fallback_application_name",
	"keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout",
	"replication", "gssencmode", "sslmode", "requiressl", "sslcompression", "sslcert", "sslkey",
	"sslpassword", "sslcertmode", "sslrootcert", "sslcrl", "sslcrldir", "sslsni", "sslnegotiation",
	"requirepeer", "require_auth", "ssl_min_protocol_version", "ssl_max_protocol_version",
	"krbsrvname", "gsslib", "gssdelegation", "service", "target_session_attrs", "load_balance_hosts",
}

// libpqConn is the connection for pg_dump and pg_restore: listenURL (the
// direct connection) when set, else databaseURL, without the password
// and without what only pgx or Switchboard understands.
func libpqConn(databaseURL, listenURL string) (*pgConn, error) {
	raw, setting := databaseURL, "DATABASE_URL"
	if listenURL != "" {
		raw, setting = listenURL, "DATABASE_LISTEN_URL"
	}
	t, err := dial.Parse(raw)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, fmt.Errorf("%s: not a valid postgres URL", setting)
	}
	c := &pgConn{}
	if u.User != nil {
		c.password, _ = u.User.Password()
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	if p := q.Get("password"); p != "" {
		c.password = p
	}
	c.secrets = append(c.secrets, c.password, q.Get("sslpassword"))
	for k := range q {
		if !slices.Contains(libpqKeywords, k) {
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode()
	c.url = u.String()
	c.database = strings.TrimPrefix(u.Path, "/")
	if c.database == "" {
		c.database = q.Get("dbname")
	}
	return c, nil
}

// redact replaces the secrets of the connection in s.
func (c *pgConn) redact(s string) string {
	for _, secret := range c.secrets {
		if secret == "" {
			continue
		}
		for _, p := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret)} {
			s = strings.ReplaceAll(s, p, "REDACTED")
		}
	}
	return s
}

// pgEnvironment is what pg_dump and pg_restore get: the base every started
// program gets, the PG* variables of environ (PGSSLROOTCERT, PGPASSFILE,
// PGSERVICEFILE and the like), and PGPASSWORD from the URL. Not the rest
// of the service's environment, which holds its keys and tokens.
func pgEnvironment(environ []string, conn *pgConn) []string {
	get := func(k string) string {
		for _, kv := range slices.Backward(environ) {
			if name, v, ok := strings.Cut(kv, "="); ok && name == k {
				return v
			}
		}
		return ""
	}
	env := childenv.From(get, childenv.Base...)
	for _, kv := range environ {
		if strings.HasPrefix(kv, "PG") && !strings.HasPrefix(kv, "PGPASSWORD=") {
			env = append(env, kv)
		}
	}
	if conn.password != "" {
		env = append(env, "PGPASSWORD="+conn.password)
	} else if p := get("PGPASSWORD"); p != "" {
		env = append(env, "PGPASSWORD="+p)
	}
	return env
}

// runPG runs a PostgreSQL client program and returns its standard output;
// its error carries the end of what it printed on standard error, with the
// password replaced.
func runPG(ctx context.Context, prog, name string, args []string, conn *pgConn, environ []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env = pgEnvironment(environ, conn)
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: 8 << 10}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(conn.redact(stderr.String()))
		if msg == "" {
			msg = "(it printed nothing)"
		}
		return nil, fmt.Errorf("%s failed (%s): %s", name, conn.redact(err.Error()), msg)
	}
	return stdout.Bytes(), nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }

// toc is an archive's table of contents (pg_restore --list): one entry a
// line, "ID; TABLEOID OID TYPE SCHEMA NAME OWNER", where TYPE may be two
// words (TABLE DATA) and SCHEMA is "-" for a schema entry itself.
type toc struct{ lines []string }

func readTOC(ctx context.Context, pgRestore, path string, conn *pgConn, environ []string) (*toc, error) {
	out, err := runPG(ctx, pgRestore, "pg_restore", []string{"--list", path}, conn, environ)
	if err != nil {
		return nil, err
	}
	var t toc
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		t.lines = append(t.lines, sc.Text())
	}
	return &t, sc.Err()
}

// entry splits a line into its type's first word, schema and name; ok is
// false for comments.
func tocEntry(line string) (typ, schema, name string, ok bool) {
	if line == "" || strings.HasPrefix(line, ";") {
		return "", "", "", false
	}
	f := strings.Fields(line)
	if len(f) < 7 {
		return "", "", "", false
	}
	if f[3] == "TABLE" && f[4] == "DATA" {
		return "TABLE DATA", f[5], f[6], true
	}
	return f[3], f[4], f[5], true
}

func (t *toc) hasTable(schema, table string) bool {
	for _, l := range t.lines {
		if typ, s, n, ok := tocEntry(l); ok && typ == "TABLE" && s == schema && n == table {
			return true
		}
	}
	return false
}

func (t *toc) schemasWith(table string) []string {
	var out []string
	for _, l := range t.lines {
		if typ, s, n, ok := tocEntry(l); ok && typ == "TABLE" && n == table {
			out = append(out, s)
		}
	}
	return out
}

// listWithout is the list for pg_restore --use-list, with the entry of
// type typ named name commented out.
func (t *toc) listWithout(typ, name string) []byte {
	var b bytes.Buffer
	for _, l := range t.lines {
		if et, _, n, ok := tocEntry(l); ok && et == typ && n == name {
			b.WriteString(";")
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// dumpSchemaVersion reads the highest version in the archive's
// switchboard_schema_migrations: pg_restore prints that table's data as a
// COPY block, without a connection.
func dumpSchemaVersion(ctx context.Context, pgRestore, path, schema string, conn *pgConn, environ []string) (int, error) {
	out, err := runPG(ctx, pgRestore, "pg_restore", []string{"--data-only", "--schema=" + schema, "--table=" + migrationsTable, "--file=-", path}, conn, environ)
	if err != nil {
		return 0, err
	}
	version, in := 0, false
	for line := range strings.SplitSeq(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "COPY ") && strings.HasSuffix(line, "FROM stdin;"):
			in = true
		case in && line == `\.`:
			in = false
		case in:
			v, err := strconv.Atoi(strings.SplitN(line, "\t", 2)[0])
			if err != nil {
				return 0, fmt.Errorf("reading %s from the dump: unexpected line %q", migrationsTable, line)
			}
			version = max(version, v)
		}
	}
	if version == 0 {
		return 0, fmt.Errorf("the dump holds no row of %s in schema %s", migrationsTable, schema)
	}
	return version, nil
}
