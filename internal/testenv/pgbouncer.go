package testenv

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PgBouncer starts a PgBouncer (the Debian package's binary) in pool mode
// mode ("transaction" or "session") in front of the Postgres of
// TEST_DATABASE_URL, stopped when the test ends, and returns the URL of
// database through it. It is configured as a team's would be, with nothing
// for Switchboard: no ignore_startup_parameters, trust authentication for
// the URL's user. Without the program the test skips, unless CI or
// SWITCHBOARD_REQUIRE_POSTGRES makes that a failure.
func PgBouncer(tb testing.TB, mode, database string) string {
	tb.Helper()
	return PgBouncerServer(tb, mode)(database)
}

// PgBouncerServer starts one PgBouncer as PgBouncer does and returns a
// func giving the URL of a database through it: for a test that opens many
// stores, each on a database of its own, behind one pooler.
func PgBouncerServer(tb testing.TB, mode string) func(database string) string {
	tb.Helper()
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		for _, p := range []string{"/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"} {
			if _, statErr := os.Stat(p); statErr == nil {
				bin, err = p, nil
				break
			}
		}
	}
	if err != nil {
		if os.Getenv("CI") == "true" || os.Getenv("SWITCHBOARD_REQUIRE_POSTGRES") == "1" {
			tb.Fatal("pgbouncer is not installed (apt-get install pgbouncer; .ci/run installs it)")
		}
		tb.Skip("pgbouncer is not installed")
	}
	server, err := url.Parse(PostgresURL(tb))
	if err != nil {
		tb.Fatalf("TEST_DATABASE_URL: %v", err)
	}
	user := server.User.Username()
	if user == "" {
		user = "postgres"
	}
	host, port := server.Hostname(), server.Port()
	if port == "" {
		port = "5432"
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	listenPort := l.Addr().(*net.TCPAddr).Port
	l.Close()

	// PgBouncer refuses to run as root; as root it is told to become the
	// postgres user, who must then read its files.
	dir, err := os.MkdirTemp("", "pgbouncer-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	ini := fmt.Sprintf(`[databases]
* = host=%s port=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = %s
max_client_conn = 500
default_pool_size = 40
server_reset_query = DISCARD ALL
logfile = %s
`, host, port, listenPort, filepath.Join(dir, "users.txt"), mode, filepath.Join(dir, "pgbouncer.log"))
	for name, body := range map[string]string{
		"pgbouncer.ini": ini,
		"users.txt":     strconv.Quote(user) + ` ""` + "\n",
		"pgbouncer.log": "",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o666); err != nil {
			tb.Fatal(err)
		}
		_ = os.Chmod(filepath.Join(dir, name), 0o666)
	}
	args := []string{filepath.Join(dir, "pgbouncer.ini")}
	if os.Geteuid() == 0 {
		args = append([]string{"-u", "postgres"}, args...)
	}
	cmd := exec.Command(bin, args...)
	out := &Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		tb.Fatalf("starting pgbouncer: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if tb.Failed() {
			logText, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
			tb.Logf("pgbouncer (%s mode) output:\n%s%s", mode, out.String(), logText)
		}
	})

	urlOf := func(database string) string {
		u := url.URL{Scheme: "postgres", User: url.User(user), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(listenPort)),
			Path: "/" + database, RawQuery: "sslmode=disable"}
		return u.String()
	}
	// Any database name passes through (the "*" entry); postgres is there.
	through := urlOf("postgres")
	// Ready when a query passes through it.
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case err := <-exited:
			logText, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
			tb.Fatalf("pgbouncer exited: %v\n%s%s", err, out.String(), logText)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		cfg, _ := pgx.ParseConfig(through)
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err == nil {
			_, err = conn.Exec(ctx, "SELECT 1")
			conn.Close(ctx)
		}
		cancel()
		if err == nil {
			return urlOf
		}
		if time.Now().After(deadline) {
			tb.Fatalf("pgbouncer did not answer on port %d in 15s: %v\n%s", listenPort, err, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
