// Package dial opens the store named by a DATABASE_URL: postgres:// (or
// postgresql://) for Postgres, empty or sqlite:PATH for the embedded SQLite
// file.
package dial

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres"
	"github.com/switchboardhq/switchboard/store/sqlite"
)

// DefaultSQLitePath is where the embedded store lives when DATABASE_URL is empty.
const DefaultSQLitePath = "./data/switchboard.db"

// Target is a parsed DATABASE_URL.
type Target struct {
	Driver string // "postgres" or "sqlite"
	URL    string // the Postgres URL
	Path   string // the SQLite file
	// SimpleProtocol is set by the query parameter switchboard_simple_protocol=1
	// (for PgBouncer in transaction mode); the parameter is removed from URL.
	SimpleProtocol bool
	// Schema is set by switchboard_schema=NAME: the store lives in that
	// schema (created when missing), so several deployments or test runs can
	// share a database.
	Schema string
}

// Parse reads a DATABASE_URL. Errors name the variable and what is wrong,
// without echoing a password.
func Parse(raw string) (Target, error) {
	raw = strings.TrimSpace(raw)
	switch {
	case raw == "":
		return Target{Driver: "sqlite", Path: DefaultSQLitePath}, nil
	case strings.HasPrefix(raw, "sqlite:"):
		p := strings.TrimPrefix(raw, "sqlite:")
		p = strings.TrimPrefix(p, "//")
		if p == "" {
			return Target{}, fmt.Errorf("DATABASE_URL: sqlite: needs a file path, as in sqlite:./data/switchboard.db")
		}
		return Target{Driver: "sqlite", Path: p}, nil
	case strings.HasPrefix(raw, "postgres://"), strings.HasPrefix(raw, "postgresql://"):
		u, err := url.Parse(raw)
		if err != nil {
			return Target{}, fmt.Errorf("DATABASE_URL: not a valid postgres URL (%s)", describeURLError(err))
		}
		if u.Host == "" {
			return Target{}, fmt.Errorf("DATABASE_URL: postgres URL has no host, as in postgres://user@127.0.0.1:5432/dbname")
		}
		t := Target{Driver: "postgres"}
		q := u.Query()
		if v := q.Get("switchboard_simple_protocol"); v != "" {
			t.SimpleProtocol = v == "1" || v == "true"
			q.Del("switchboard_simple_protocol")
		}
		if v := q.Get("switchboard_schema"); v != "" {
			t.Schema = v
			q.Del("switchboard_schema")
		}
		u.RawQuery = q.Encode()
		t.URL = u.String()
		return t, nil
	default:
		scheme, _, _ := strings.Cut(raw, ":")
		if len(scheme) > 20 || strings.ContainsAny(scheme, "/@ ") {
			scheme = "(none)"
		}
		return Target{}, fmt.Errorf("DATABASE_URL: unsupported scheme %q: use postgres://..., sqlite:PATH, or leave it empty for %s", scheme, DefaultSQLitePath)
	}
}

// describeURLError keeps url.Error's reason but drops the URL, which may hold
// a password.
func describeURLError(err error) string {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err.Error()
	}
	return "malformed"
}

// Options for Open.
type Options struct {
	DatabaseURL string
	// ListenURL (DATABASE_LISTEN_URL) is a direct connection to the same
	// Postgres server for the LISTEN of the wake-ups, when DatabaseURL goes
	// through a transaction pooler. Empty: DatabaseURL.
	ListenURL string
	Logger    *slog.Logger
	// BinaryVersion is this binary's release and commit, recorded with
	// each migration the store applies (the drivers' BinaryVersion).
	BinaryVersion string
}

// CheckListenURL checks DATABASE_LISTEN_URL against DATABASE_URL: a
// postgres:// URL, and only beside a Postgres DATABASE_URL.
func CheckListenURL(databaseURL, listenURL string) error {
	if listenURL == "" {
		return nil
	}
	t, err := Parse(databaseURL)
	if err != nil {
		return err
	}
	if t.Driver != "postgres" {
		return fmt.Errorf("DATABASE_LISTEN_URL is set, but DATABASE_URL is not a Postgres URL: the listen URL is for Postgres behind a transaction pooler")
	}
	l, err := Parse(listenURL)
	if err != nil {
		return fmt.Errorf("DATABASE_LISTEN_URL: %s", strings.TrimPrefix(err.Error(), "DATABASE_URL: "))
	}
	if l.Driver != "postgres" {
		return fmt.Errorf("DATABASE_LISTEN_URL: want a postgres:// URL of the same server as DATABASE_URL, reached directly")
	}
	return nil
}

// Open parses the URL and opens the store. It does not migrate.
func Open(ctx context.Context, opts Options) (store.Store, error) {
	t, err := Parse(opts.DatabaseURL)
	if err != nil {
		return nil, err
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	switch t.Driver {
	case "postgres":
		if err := CheckListenURL(opts.DatabaseURL, opts.ListenURL); err != nil {
			return nil, err
		}
		var listen string
		if opts.ListenURL != "" {
			l, _ := Parse(opts.ListenURL)
			listen = l.URL
		}
		s, err := postgres.Open(ctx, postgres.Options{URL: t.URL, SimpleProtocol: t.SimpleProtocol, Schema: t.Schema, ListenURL: listen, Logger: logger, BinaryVersion: opts.BinaryVersion})
		if err != nil {
			return nil, fmt.Errorf("opening postgres store: %w", err)
		}
		return s, nil
	default:
		s, err := sqlite.Open(ctx, sqlite.Options{Path: t.Path, Logger: logger, BinaryVersion: opts.BinaryVersion})
		if err != nil {
			return nil, fmt.Errorf("opening sqlite store at %s: %w", t.Path, err)
		}
		return s, nil
	}
}
