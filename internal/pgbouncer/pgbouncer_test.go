package pgbouncer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard/internal/pgbouncer"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

// TestStartPoolsTransactions: a PgBouncer started in transaction mode
// passes queries through to the server's database, and is gone after
// Stop.
func TestStartPoolsTransactions(t *testing.T) {
	testenv.RequirePgBouncer(t)
	ctx := context.Background()
	s, err := pgbouncer.Start(ctx, pgbouncer.Options{ServerURL: testenv.PostgresURL(t), Mode: "transaction", PoolSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	through := s.URL("postgres")
	if !strings.HasPrefix(through, "postgres://") || !strings.Contains(through, "127.0.0.1:") {
		t.Fatalf("URL %q: want a loopback postgres URL", through)
	}
	cfg, err := pgx.ParseConfig(through)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connecting through pgbouncer: %v\n%s", err, s.Log())
	}
	var db string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil || db != "postgres" {
		t.Fatalf("through pgbouncer: database %q, %v", db, err)
	}
	conn.Close(ctx)

	s.Stop()
	s.Stop() // a second Stop is harmless
	if conn, err := pgx.ConnectConfig(ctx, cfg); err == nil {
		conn.Close(ctx)
		t.Fatal("connected through a stopped pgbouncer")
	}
}

func TestOptionsNameTheBadField(t *testing.T) {
	for _, c := range []struct {
		opts pgbouncer.Options
		want string
	}{
		{pgbouncer.Options{Mode: "transaction"}, "Options.ServerURL is required"},
		{pgbouncer.Options{ServerURL: "postgres://127.0.0.1/x", Mode: "statement"}, `Options.Mode "statement"`},
		{pgbouncer.Options{ServerURL: "postgres://127.0.0.1/x", Mode: "session", PoolSize: -1}, "Options.PoolSize -1"},
	} {
		_, err := pgbouncer.Start(context.Background(), c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Start(%+v): %v, want an error naming %s", c.opts, err, c.want)
		}
	}
}
