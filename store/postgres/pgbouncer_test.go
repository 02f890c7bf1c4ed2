package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres"
	"github.com/switchboardhq/switchboard/store/storetest"
)

// openThrough opens a migrated store on an empty database of its own (a
// schema would need search_path, a startup parameter a transaction pooler
// refuses), reached through a PgBouncer of mode.
func openThrough(tb testing.TB, mode string, mod func(*postgres.Options)) *postgres.Store {
	tb.Helper()
	return openVia(tb, testenv.PgBouncerServer(tb, mode), mode, mod)
}

// openVia is openThrough on a PgBouncer already running (through gives a
// database's URL through it).
func openVia(tb testing.TB, through func(string) string, mode string, mod func(*postgres.Options)) *postgres.Store {
	tb.Helper()
	db := testenv.PostgresMigratedDatabase(tb)
	opts := postgres.Options{URL: through(db), Logger: testenv.Logger(tb), SimpleProtocol: mode == "transaction"}
	if mod != nil {
		mod(&opts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := postgres.Open(ctx, opts)
	if err != nil {
		tb.Fatalf("opening the store through PgBouncer (%s mode): %v", mode, err)
	}
	tb.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(ctx); err != nil {
		tb.Fatalf("migrating through PgBouncer (%s mode): %v", mode, err)
	}
	return s
}

// TestThroughPgBouncer runs a claim, the one statement with settings of its
// own, through PgBouncer as Debian ships it, in both pool modes, with
// nothing configured for Switchboard on the pooler's side: the settings
// travel inside the claim's transaction, never as startup parameters
// (which PgBouncer refuses: "unsupported startup parameter").
func TestThroughPgBouncer(t *testing.T) {
	for _, mode := range []string{"transaction", "session"} {
		t.Run(mode, func(t *testing.T) {
			s := openThrough(t, mode, nil)
			ctx := context.Background()
			now := time.Now()
			for i := range 3 {
				if _, err := s.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "probe", Priority: i, Now: now}); err != nil {
					t.Fatalf("enqueueing: %v", err)
				}
			}
			items, err := s.WorkClaim(ctx, &store.WorkClaimParams{Worker: "w1", Kinds: []string{"probe"}, Limit: 10, LeaseTTL: time.Minute, Now: now})
			if err != nil {
				t.Fatalf("claiming through PgBouncer (%s mode): %v", mode, err)
			}
			if len(items) != 3 {
				t.Fatalf("claimed %d items, want 3", len(items))
			}
			again, err := s.WorkClaim(ctx, &store.WorkClaimParams{Worker: "w2", Kinds: []string{"probe"}, Limit: 10, LeaseTTL: time.Minute, Now: now})
			if err != nil || len(again) != 0 {
				t.Fatalf("a second claim got %d items (%v), want none: each item is claimed once", len(again), err)
			}
			// The claim's settings last for its own transaction only: a
			// session setting would reach whichever client gets the server
			// connection next.
			var syncCommit, bitmap, sort string
			if err := s.Pool().QueryRow(ctx, "SELECT current_setting('synchronous_commit'), current_setting('enable_bitmapscan'), current_setting('enable_sort')").Scan(&syncCommit, &bitmap, &sort); err != nil {
				t.Fatal(err)
			}
			if syncCommit != "on" || bitmap != "on" || sort != "on" {
				t.Errorf("after a claim the pool's sessions have synchronous_commit=%s enable_bitmapscan=%s enable_sort=%s, want all on", syncCommit, bitmap, sort)
			}
		})
	}
}

// TestWakeupsThroughPgBouncer: through a transaction pooler NOTIFY never
// reaches LISTEN, and the store says so (the service then warns, naming
// DATABASE_LISTEN_URL); with the listen URL pointed at the server, wake-ups
// arrive while every other statement still goes through the pooler.
func TestWakeupsThroughPgBouncer(t *testing.T) {
	ctx := context.Background()
	t.Run("transaction mode, no listen URL", func(t *testing.T) {
		s := openThrough(t, "transaction", nil)
		if err := s.CheckWakeups(ctx, 2*time.Second); !errors.Is(err, postgres.ErrWakeupsLost) {
			t.Fatalf("CheckWakeups through a transaction pooler = %v, want ErrWakeupsLost", err)
		}
	})
	t.Run("transaction mode, direct listen URL", func(t *testing.T) {
		var direct string
		s := openThrough(t, "transaction", func(o *postgres.Options) {
			// The same database, reached without the pooler.
			direct = testenv.PostgresDatabaseURL(t, dbName(t, o.URL))
			o.ListenURL = direct
		})
		if err := s.CheckWakeups(ctx, 5*time.Second); err != nil {
			t.Fatalf("CheckWakeups with DATABASE_LISTEN_URL %s: %v", direct, err)
		}
	})
	t.Run("session mode", func(t *testing.T) {
		s := openThrough(t, "session", nil)
		if err := s.CheckWakeups(ctx, 5*time.Second); err != nil {
			t.Fatalf("CheckWakeups through a session pooler: %v", err)
		}
	})
}

func dbName(tb testing.TB, u string) string {
	tb.Helper()
	i := len(u)
	for j := len(u) - 1; j >= 0; j-- {
		if u[j] == '?' {
			i = j
		}
		if u[j] == '/' {
			return u[j+1 : i]
		}
	}
	tb.Fatalf("no database in %s", u)
	return ""
}

// TestConformanceThroughPgBouncer runs the whole store suite through
// PgBouncer in transaction mode with the simple protocol, as teams behind
// Supabase's pooler or a managed PgBouncer run it: every query but the
// wake-ups' LISTEN, which goes to the server directly (DATABASE_LISTEN_URL).
// It is also the suite's simple-protocol run.
func TestConformanceThroughPgBouncer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the suite already ran directly")
	}
	through := testenv.PgBouncerServer(t, "transaction")
	storetest.Run(t, storetest.Harness{
		Name: "postgres",
		New: func(tb testing.TB) store.Store {
			return openVia(tb, through, "transaction", func(o *postgres.Options) {
				o.ListenURL = testenv.PostgresDatabaseURL(tb, dbName(tb, o.URL))
			})
		},
	})
}

// BenchmarkWakeup is the time from an enqueue's commit to a worker holding
// the item: the NOTIFY reaching the LISTEN connection, then the claim.
// "direct" is the baseline; "pgbouncer" runs every statement through
// PgBouncer in transaction mode with the LISTEN on a direct connection
// (DATABASE_LISTEN_URL), as a team behind a managed pooler runs it.
func BenchmarkWakeup(b *testing.B) {
	for _, via := range []string{"direct", "pgbouncer"} {
		b.Run(via, func(b *testing.B) {
			var s *postgres.Store
			if via == "direct" {
				db := testenv.PostgresDatabase(b)
				var err error
				s, err = postgres.Open(context.Background(), postgres.Options{URL: testenv.PostgresDatabaseURL(b, db), Logger: testenv.Logger(b)})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Close() })
				if _, err := s.Migrate(context.Background()); err != nil {
					b.Fatal(err)
				}
			} else {
				s = openThrough(b, "transaction", func(o *postgres.Options) {
					o.ListenURL = testenv.PostgresDatabaseURL(b, dbName(b, o.URL))
				})
			}
			ctx := context.Background()
			ch, err := s.Subscribe(ctx, store.TopicWork)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				now := time.Now()
				if _, err := s.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "wake", Now: now}); err != nil {
					b.Fatal(err)
				}
				select {
				case <-ch:
				case <-time.After(5 * time.Second):
					b.Fatal("no wake-up within 5s")
				}
				items, err := s.WorkClaim(ctx, &store.WorkClaimParams{Worker: "w", Kinds: []string{"wake"}, Limit: 1, LeaseTTL: time.Minute, Now: now})
				if err != nil || len(items) != 1 {
					b.Fatalf("claim after the wake-up: %d items, %v", len(items), err)
				}
			}
		})
	}
}
