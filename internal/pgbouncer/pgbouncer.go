// Package pgbouncer starts a PgBouncer (the Debian package's binary) in
// front of a Postgres server, configured as a team's would be and with
// nothing for Switchboard: no ignore_startup_parameters, trust
// authentication for the server URL's user. The tests behind a pooler
// (internal/testenv) and `switchboard bench soak` share it.
package pgbouncer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNotInstalled is Find's error when there is no pgbouncer program.
var ErrNotInstalled = errors.New("pgbouncer is not installed (apt-get install pgbouncer)")

// Find returns the path of the pgbouncer program: on PATH, or where the
// Debian package puts it (/usr/sbin, not on a user's PATH).
func Find() (string, error) {
	if bin, err := exec.LookPath("pgbouncer"); err == nil {
		return bin, nil
	}
	for _, p := range []string{"/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", ErrNotInstalled
}

// Options configures Start.
type Options struct {
	// ServerURL is a postgres:// URL of the server to pool; its user is the
	// one PgBouncer lets in (default postgres).
	ServerURL string
	// Mode is the pool mode: "transaction" or "session".
	Mode string
	// PoolSize is default_pool_size: server connections per database and
	// user (default 40).
	PoolSize int
	// MaxClientConn is max_client_conn (default 500).
	MaxClientConn int
}

func (o *Options) defaults() {
	if o.PoolSize == 0 {
		o.PoolSize = 40
	}
	if o.MaxClientConn == 0 {
		o.MaxClientConn = 500
	}
}

func (o *Options) validate() error {
	switch {
	case o.ServerURL == "":
		return errors.New("pgbouncer: Options.ServerURL is required")
	case o.Mode != "transaction" && o.Mode != "session":
		return fmt.Errorf("pgbouncer: Options.Mode %q must be transaction or session", o.Mode)
	case o.PoolSize < 1:
		return fmt.Errorf("pgbouncer: Options.PoolSize %d must be at least 1", o.PoolSize)
	case o.MaxClientConn < 1:
		return fmt.Errorf("pgbouncer: Options.MaxClientConn %d must be at least 1", o.MaxClientConn)
	}
	return nil
}

// Server is a running PgBouncer.
type Server struct {
	user   string
	port   int
	dir    string
	cmd    *exec.Cmd
	out    *buffer
	exited chan struct{}
	err    error // the process's end, once exited is closed
	once   sync.Once
}

// Start starts PgBouncer on a free loopback port and waits until a query
// passes through it (at most 15 s). Stop ends it. Without the program the
// error is ErrNotInstalled.
func Start(ctx context.Context, opts Options) (*Server, error) {
	opts.defaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	bin, err := Find()
	if err != nil {
		return nil, err
	}
	server, err := url.Parse(opts.ServerURL)
	if err != nil {
		return nil, fmt.Errorf("pgbouncer: Options.ServerURL: %w", err)
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
		return nil, fmt.Errorf("pgbouncer: finding a free port: %w", err)
	}
	listenPort := l.Addr().(*net.TCPAddr).Port
	l.Close()

	// PgBouncer refuses to run as root; as root it is told to become the
	// postgres user, who must then read its files.
	dir, err := os.MkdirTemp("", "pgbouncer-")
	if err != nil {
		return nil, err
	}
	s := &Server{user: user, port: listenPort, dir: dir, out: &buffer{}, exited: make(chan struct{})}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, err
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
max_client_conn = %d
default_pool_size = %d
server_reset_query = DISCARD ALL
logfile = %s
`, host, port, listenPort, filepath.Join(dir, "users.txt"), opts.Mode, opts.MaxClientConn, opts.PoolSize, filepath.Join(dir, "pgbouncer.log"))
	for name, body := range map[string]string{
		"pgbouncer.ini": ini,
		"users.txt":     strconv.Quote(user) + ` ""` + "\n",
		"pgbouncer.log": "",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o666); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		_ = os.Chmod(filepath.Join(dir, name), 0o666)
	}
	args := []string{filepath.Join(dir, "pgbouncer.ini")}
	if os.Geteuid() == 0 {
		args = append([]string{"-u", "postgres"}, args...)
	}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting pgbouncer: %w", err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.exited)
	}()

	// Ready when a query passes through it; any database name passes
	// through (the "*" entry), and postgres is there.
	through := s.URL("postgres")
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case <-s.exited:
			log := s.Log()
			s.Stop()
			return nil, fmt.Errorf("pgbouncer exited: %v\n%s", s.err, log)
		default:
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		cfg, _ := pgx.ParseConfig(through)
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		conn, err := pgx.ConnectConfig(cctx, cfg)
		if err == nil {
			_, err = conn.Exec(cctx, "SELECT 1")
			conn.Close(cctx)
		}
		cancel()
		if err == nil {
			return s, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			log := s.Log()
			s.Stop()
			return nil, fmt.Errorf("pgbouncer did not answer on port %d in 15s: %v\n%s", listenPort, err, log)
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// URL is the URL of database through the pooler.
func (s *Server) URL(database string) string {
	u := url.URL{Scheme: "postgres", User: url.User(s.user), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)),
		Path: "/" + database, RawQuery: "sslmode=disable"}
	return u.String()
}

// Log is what PgBouncer printed and logged so far.
func (s *Server) Log() string {
	logText, _ := os.ReadFile(filepath.Join(s.dir, "pgbouncer.log"))
	return s.out.String() + string(logText)
}

// Stop ends PgBouncer (SIGINT, then SIGKILL after 5 s) and removes its
// folder. It may be called more than once.
func (s *Server) Stop() {
	s.once.Do(func() {
		_ = s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
		os.RemoveAll(s.dir)
	})
}

// buffer is a process's output, read while it may still write.
type buffer struct {
	mu sync.Mutex
	b  []byte
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b = append(b.b, p...)
	return len(p), nil
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.b)
}
