package app

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

// DefaultStoreTimeout is how long the start waits for the store to answer
// (Config.StoreTimeout).
const DefaultStoreTimeout = 15 * time.Second

// storeWhere says where the store of databaseURL is, for the start-up log
// and errors: the SQLite file as an absolute path (a typo in sqlite:PATH
// shows as a new file somewhere unexpected), or the Postgres host,
// database and schema. Never the user or the password.
func storeWhere(databaseURL string) (desc string, attrs []any) {
	t, err := dial.Parse(databaseURL)
	if err != nil {
		return "an unreadable DATABASE_URL", nil
	}
	if t.Driver == "sqlite" {
		path := t.Path
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		return "sqlite " + path, []any{"dialect", "sqlite", "path", path}
	}
	u, err := url.Parse(t.URL)
	if err != nil {
		return "postgres", []any{"dialect", "postgres"}
	}
	host := u.Host
	if host == "" {
		host = u.Query().Get("host")
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" {
		db = u.Query().Get("dbname")
	}
	desc = "postgres " + host + "/" + db
	attrs = []any{"dialect", "postgres", "host", host, "database", db}
	if t.Schema != "" {
		desc += " schema " + t.Schema
		attrs = append(attrs, "schema", t.Schema)
	}
	return desc, attrs
}

// openStore opens the store of cfg.DatabaseURL, logging where it is first,
// and checks that it answers within cfg.StoreTimeout.
func openStore(ctx context.Context, cfg Config) (store.Store, error) {
	desc, attrs := storeWhere(cfg.DatabaseURL)
	cfg.Logger.InfoContext(ctx, "opening the store", attrs...)
	octx, cancel := context.WithTimeout(ctx, cfg.StoreTimeout)
	defer cancel()
	st, err := dial.Open(octx, dial.Options{DatabaseURL: cfg.DatabaseURL, ListenURL: cfg.DatabaseListenURL, Logger: cfg.Logger, BinaryVersion: cfg.BinaryVersion})
	if err == nil {
		if err = st.Ping(octx); err != nil {
			_ = st.Close()
		}
	}
	switch {
	case err == nil:
		return st, nil
	case ctx.Err() == nil && (errors.Is(octx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded)):
		return nil, fmt.Errorf("DATABASE_URL: the store (%s) did not answer within %s: %w", desc, cfg.StoreTimeout, err)
	default:
		return nil, fmt.Errorf("DATABASE_URL: opening the store (%s): %w", desc, err)
	}
}
