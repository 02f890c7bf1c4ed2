package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/internal/dbtemplate"
	"github.com/switchboardhq/switchboard/migrations"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
	"github.com/switchboardhq/switchboard/store/storetest"
)

// TestMain fails the run if any test leaves a goroutine behind: every Store
// is closed in its test's cleanup, and Close must stop the notifier, the
// listener and the pool.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func freshSchema(tb testing.TB) string {
	tb.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		tb.Fatalf("making a schema name: %v", err)
	}
	return "sbtest_" + hex.EncodeToString(b)
}

// testLogger routes the driver's logs to tb.Log.
func testLogger(tb testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tbWriter{tb}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tbWriter struct{ tb testing.TB }

func (w tbWriter) Write(p []byte) (int, error) {
	w.tb.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// openUnmigrated opens a Store on schema, dropping the schema when the test
// ends. mod adjusts the options.
func openUnmigrated(tb testing.TB, schema string, mod func(*Options)) *Store {
	tb.Helper()
	tb.Cleanup(func() { dropSchema(tb, schema) }) // after the store closes: cleanups run last first
	return openOn(tb, schema, mod)
}

// openOn opens a Store on schema, closed when the test ends. mod adjusts
// the options.
func openOn(tb testing.TB, schema string, mod func(*Options)) *Store {
	tb.Helper()
	opts := Options{URL: dbtemplate.PostgresURL(tb), Schema: schema, MaxConns: 20, Logger: testLogger(tb)}
	if mod != nil {
		mod(&opts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Open(ctx, opts)
	if err != nil {
		tb.Fatalf("opening a store on schema %s: %v", schema, err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("closing the store: %v", err)
		}
	})
	return s
}

func dropSchema(tb testing.TB, schema string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbtemplate.PostgresURL(tb))
	if err != nil {
		tb.Errorf("connecting to drop schema %s: %v", schema, err)
		return
	}
	defer conn.Close(ctx)
	var stmt string
	if err := conn.QueryRow(ctx, schemaDrop, schema).Scan(&stmt); err != nil {
		tb.Errorf("dropping schema %s: %v", schema, err)
		return
	}
	if _, err := conn.Exec(ctx, stmt); err != nil {
		tb.Errorf("dropping schema %s: %v", schema, err)
	}
}

// openTestStore opens a migrated, empty store in a schema of its own, from
// the test pool (internal/dbtemplate): Migrate finds nothing to apply.
// A mod that ships other migrations gets a fresh schema instead.
func openTestStore(tb testing.TB, mod func(*Options)) *Store {
	tb.Helper()
	var opts Options
	if mod != nil {
		mod(&opts)
	}
	var s *Store
	if opts.migrations != nil {
		s = openUnmigrated(tb, freshSchema(tb), mod)
	} else {
		s = openOn(tb, dbtemplate.PostgresSchema(tb, dbtemplate.PostgresURL(tb), migrateSchema), mod)
	}
	if _, err := s.Migrate(context.Background()); err != nil {
		tb.Fatalf("migrating schema %s: %v", s.d.opts.Schema, err)
	}
	return s
}

// migrateSchema is the dbtemplate.MigratePostgres of this driver.
func migrateSchema(ctx context.Context, dbURL, schema string) error {
	s, err := Open(ctx, Options{URL: dbURL, Schema: schema})
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.Migrate(ctx)
	return err
}

func harness(mod func(*Options)) storetest.Harness {
	return storetest.Harness{
		Name: "postgres",
		New:  func(tb testing.TB) store.Store { return openTestStore(tb, mod) },
		NewRawInserter: func(tb testing.TB, st store.Store) func(ctx context.Context) error {
			pool := st.(*Store).Pool()
			if _, err := pool.Exec(context.Background(), rawTableCreate); err != nil {
				tb.Fatalf("creating the raw insert table: %v", err)
			}
			conv := uuid.New()
			var seq int64
			content := `{"text": "` + strings.Repeat("The quarterly numbers are in and look fine. ", 6) + `"}`
			return func(ctx context.Context) error {
				seq++
				_, err := pool.Exec(ctx, rawInsert, uuid.New(), conv, seq, content, time.Now())
				return err
			}
		},
	}
}

func TestConformance(t *testing.T) {
	dbtemplate.PostgresURL(t)
	h := harness(nil)
	h.TransientFault = transientFault
	h.SchemaDatabase = schemaDatabase
	storetest.Run(t, h)
}

// schemaDatabase is a fresh schema; each store opened on it ships ms and
// records binary.
func schemaDatabase(tb testing.TB) func(ms []migrations.Migration, binary string) store.Store {
	schema := freshSchema(tb)
	return func(ms []migrations.Migration, binary string) store.Store {
		return openUnmigrated(tb, schema, func(o *Options) {
			o.migrations, o.BinaryVersion, o.MaxConns = ms, binary, 4
		})
	}
}

// transientFault opens a store of one connection under an application name
// of its own; inject terminates that connection and waits until it is gone,
// so the next statement on it fails. It touches the pool first: pgxpool pings
// a connection idle for over a second, which would find the fault and hide it.
func transientFault(tb testing.TB, retry bool) (store.Store, func() func()) {
	app := freshSchema(tb)
	s := openTestStore(tb, func(o *Options) {
		o.URL = withAppName(tb, dbtemplate.PostgresURL(tb), app)
		o.MaxConns = 1
		if !retry {
			o.RetryFor = -1
		}
	})
	admin := adminConn(tb)
	return s, func() func() {
		ctx := tb.Context()
		if err := s.Ping(ctx); err != nil {
			tb.Fatalf("pinging before the fault: %v", err)
		}
		var n int
		if err := admin.QueryRow(ctx, terminateApp, app, 5000).Scan(&n); err != nil || n == 0 {
			tb.Fatalf("terminating the store's connections (%s): %v (terminated %d)", app, err, n)
		}
		return func() {}
	}
}

// withAppName sets application_name on a connection URL.
func withAppName(tb testing.TB, raw, app string) string {
	tb.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		tb.Fatalf("parsing TEST_DATABASE_URL: %v", err)
	}
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	return u.String()
}

// adminConn is a connection of the test's own, closed when it ends.
func adminConn(tb testing.TB) *pgx.Conn {
	tb.Helper()
	conn, err := pgx.Connect(tb.Context(), dbtemplate.PostgresURL(tb))
	if err != nil {
		tb.Fatalf("connecting: %v", err)
	}
	tb.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func TestScheduleConformance(t *testing.T) {
	dbtemplate.PostgresURL(t)
	storetest.RunSchedule(t, harness(nil))
}

func BenchmarkStore(b *testing.B) {
	dbtemplate.PostgresURL(b)
	storetest.Bench(b, harness(nil))
}

func TestMigrateConcurrent(t *testing.T) {
	t.Parallel()
	schema := freshSchema(t)
	// Several instances starting at once on one empty schema.
	const instances = 4
	stores := make([]*Store, instances)
	for i := range stores {
		stores[i] = openUnmigrated(t, schema, nil)
	}
	ms, err := migrations.Load("postgres")
	if err != nil {
		t.Fatalf("loading migrations: %v", err)
	}
	latest := ms[len(ms)-1].Version

	var wg sync.WaitGroup
	errs := make([]error, instances)
	versions := make([]int, instances)
	start := make(chan struct{})
	for i, s := range stores {
		wg.Go(func() {
			<-start
			versions[i], errs[i] = s.Migrate(t.Context())
		})
	}
	close(start)
	wg.Wait()
	for i := range stores {
		if errs[i] != nil {
			t.Errorf("instance %d: migrating concurrently: %v", i, errs[i])
		}
		if versions[i] != latest {
			t.Errorf("instance %d: Migrate returned version %d, want %d", i, versions[i], latest)
		}
	}
	var rows, distinct int
	if err := stores[0].Pool().QueryRow(t.Context(), versionRows).Scan(&rows, &distinct); err != nil {
		t.Fatalf("counting version rows: %v", err)
	}
	if rows != len(ms) || distinct != len(ms) {
		t.Errorf("version table after %d concurrent migrations: %d rows (%d distinct), want each of the %d versions recorded once",
			instances, rows, distinct, len(ms))
	}
}

func TestMigrateFailureKeepsVersion(t *testing.T) {
	t.Parallel()
	s := openUnmigrated(t, freshSchema(t), nil)
	ctx := t.Context()

	applied, _, err := s.SchemaVersion(ctx)
	if err != nil || applied != 0 {
		t.Fatalf("SchemaVersion of an empty schema: want 0 and no error, got %d, %v", applied, err)
	}

	good1 := migrations.Migration{Version: 1, Name: "postgres/0001_one.sql", SQL: "CREATE TABLE one (id int);"}
	bad2 := migrations.Migration{Version: 2, Name: "postgres/0002_two.sql",
		SQL: "CREATE TABLE two (id int);\nCREATE TABLE broken (id nosuchtype);"}
	_, err = s.d.migrate(ctx, []migrations.Migration{good1, bad2})
	if err == nil {
		t.Fatal("migrating with a broken second migration: want an error, got nil")
	}
	if !strings.Contains(err.Error(), "0002_two.sql") {
		t.Errorf("the error of a failed migration must name its file 0002_two.sql, got %q", err)
	}
	var v int
	if err := s.Pool().QueryRow(ctx, schemaVersion).Scan(&v); err != nil {
		t.Fatalf("reading the version after a failure: %v", err)
	}
	if v != 1 {
		t.Errorf("recorded version after migration 2 failed: want 1 (the last that succeeded), got %d", v)
	}
	for table, want := range map[string]bool{"one": true, "two": false, "broken": false} {
		var exists bool
		if err := s.Pool().QueryRow(ctx, tableExists, table).Scan(&exists); err != nil {
			t.Fatalf("checking table %s: %v", table, err)
		}
		if exists != want {
			t.Errorf("table %s exists = %v after the failed migration, want %v (a failed migration rolls back whole)", table, exists, want)
		}
	}

	// Fixed, it applies, and re-running changes nothing.
	good2 := migrations.Migration{Version: 2, Name: "postgres/0002_two.sql", SQL: "CREATE TABLE two (id int);"}
	for run := range 2 {
		v, err := s.d.migrate(ctx, []migrations.Migration{good1, good2})
		if err != nil || v != 2 {
			t.Fatalf("migrating with the fixed migration (run %d): want version 2, got %d, %v", run+1, v, err)
		}
	}
}

func TestOpenRejectsBadOptions(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-pw"
	cases := []struct {
		name     string
		opts     Options
		mentions string
	}{
		{"empty URL", Options{}, "DATABASE_URL"},
		{"bad port", Options{URL: "postgres://bob:" + secret + "@localhost:notaport/db"}, "DATABASE_URL"},
		{"bad sslmode", Options{URL: "postgres://bob:" + secret + "@localhost:5432/db?sslmode=sometimes"}, "DATABASE_URL"},
		{"broken URL", Options{URL: "postgres://bob:" + secret + "@[::1/db"}, "DATABASE_URL"},
		{"keyword form", Options{URL: "host=localhost password=" + secret + " sslmode=sometimes"}, "DATABASE_URL"},
		{"bad schema", Options{URL: "postgres://localhost/db", Schema: "Bad-Name"}, "Options.Schema"},
		{"negative MaxConns", Options{URL: "postgres://localhost/db", MaxConns: -1}, "Options.MaxConns"},
		{"negative NotifyDebounce", Options{URL: "postgres://localhost/db", NotifyDebounce: -time.Second}, "Options.NotifyDebounce"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(t.Context(), tc.opts)
			if err == nil {
				t.Fatalf("Open(%+v): want an error, got nil", tc.opts)
			}
			if !errors.Is(err, store.ErrInvalid) {
				t.Errorf("Open with %s: want an error matching store.ErrInvalid, got %v", tc.name, err)
			}
			if !strings.Contains(err.Error(), tc.mentions) {
				t.Errorf("Open with %s: the error must mention %s, got %q", tc.name, tc.mentions, err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("Open with %s: the error leaks the password: %q", tc.name, err)
			}
			var pce *pgconn.ParseConfigError
			if errors.As(err, &pce) {
				t.Errorf("Open with %s: the error chain holds a pgconn.ParseConfigError, whose ConnString carries the password", tc.name)
			}
		})
	}
}

func TestNotFoundNeverLeaksPgx(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, nil)
	ctx := t.Context()
	checks := map[string]error{}
	_, checks["ConversationGet"] = s.ConversationGet(ctx, uuid.New())
	_, checks["EntryGet"] = s.EntryGet(ctx, uuid.New())
	_, checks["WorkHeartbeat"] = s.WorkHeartbeat(ctx, &store.WorkLeaseParams{ID: uuid.New(), Worker: "w", LeaseTTL: time.Second})
	_, checks["WorkEnqueue with unknown conversation"] = s.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "k", ConversationID: ptr(uuid.New())})
	_, checks["ScheduleAdvance"] = s.ScheduleAdvance(ctx, &store.ScheduleAdvanceParams{ID: uuid.New(), ExpectNextRunAt: time.Now()})
	for name, err := range checks {
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s of a missing row: want store.ErrNotFound, got %v", name, err)
		}
		if errors.Is(err, pgx.ErrNoRows) {
			t.Errorf("%s: pgx.ErrNoRows escaped the driver: %v", name, err)
		}
	}
}

// TestNotifyOnlyAfterCommit is the deterministic form of the conformance
// suite's timing-based checks: a marker queued on the notifier from inside
// the transaction goes out before the commit; had the append's wake-up been
// queued before the commit, it would arrive no later than the marker.
func TestNotifyOnlyAfterCommit(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, nil)
	ctx := t.Context()
	ch, err := s.Subscribe(ctx, store.TopicEntries)
	if err != nil {
		t.Fatalf("subscribing: %v", err)
	}
	committed, err := s.ConversationCreate(ctx, &store.ConversationCreateParams{})
	if err != nil {
		t.Fatalf("creating a conversation: %v", err)
	}
	rolledBack, err := s.ConversationCreate(ctx, &store.ConversationCreateParams{})
	if err != nil {
		t.Fatalf("creating a conversation: %v", err)
	}

	marker := func(name string) {
		t.Helper()
		s.d.notifier.add(note{topic: store.TopicEntries, payload: name})
		seen := awaitPayload(t, ch, name)
		for _, p := range seen {
			if p == committed.ID.String() || p == rolledBack.ID.String() {
				t.Fatalf("a wake-up for conversation %s arrived before its transaction committed (before marker %s)", p, name)
			}
		}
	}

	errAbort := errors.New("abort")
	err = s.InTx(ctx, func(q store.Queries) error {
		if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: rolledBack.ID, Kind: store.EntryUser}); err != nil {
			return err
		}
		marker("inside-rolled-back")
		return errAbort
	})
	if !errors.Is(err, errAbort) {
		t.Fatalf("InTx returning an error: want that error back, got %v", err)
	}
	marker("after-rollback")

	err = s.InTx(ctx, func(q store.Queries) error {
		if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: committed.ID, Kind: store.EntryUser}); err != nil {
			return err
		}
		marker("inside-committed")
		return nil
	})
	if err != nil {
		t.Fatalf("committing an append: %v", err)
	}
	seen := awaitPayload(t, ch, committed.ID.String())
	for _, p := range seen {
		if p == rolledBack.ID.String() {
			t.Errorf("a wake-up for the rolled-back append arrived")
		}
	}
}

// TestNotifyDebounceDedupes: a burst of appends to one conversation becomes
// far fewer notifications than appends.
func TestNotifyDebounceDedupes(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, func(o *Options) { o.NotifyDebounce = 50 * time.Millisecond })
	ctx := t.Context()
	ch, err := s.Subscribe(ctx, store.TopicEntries)
	if err != nil {
		t.Fatalf("subscribing: %v", err)
	}
	c, err := s.ConversationCreate(ctx, &store.ConversationCreateParams{})
	if err != nil {
		t.Fatalf("creating a conversation: %v", err)
	}
	const appends = 20
	err = s.InTx(ctx, func(q store.Queries) error {
		for range appends {
			if _, err := q.EntryAppend(ctx, &store.EntryAppendParams{ConversationID: c.ID, Kind: store.EntryUser}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("appending: %v", err)
	}
	awaitPayload(t, ch, c.ID.String())
	s.d.notifier.add(note{topic: store.TopicEntries, payload: "marker"})
	seen := awaitPayload(t, ch, "marker")
	for _, p := range seen {
		if p == c.ID.String() {
			t.Errorf("%d appends in one transaction sent more than one wake-up for the conversation", appends)
		}
	}
}

// TestSubscriberReconnect cuts the LISTEN connection: subscribers get an
// empty-payload wake-up once it is back (they may have missed some), and
// notifications flow again.
func TestSubscriberReconnect(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, nil)
	ctx := t.Context()
	ch, err := s.Subscribe(ctx, store.TopicWork)
	if err != nil {
		t.Fatalf("subscribing: %v", err)
	}
	pid := s.d.listener.backendPID()
	if pid == 0 {
		t.Fatal("after Subscribe returned, the listener has no connection")
	}
	var ok bool
	if err := s.Pool().QueryRow(ctx, terminateBackend, int32(pid)).Scan(&ok); err != nil || !ok {
		t.Fatalf("terminating the listener's backend %d: %v (ok=%v)", pid, err, ok)
	}
	awaitPayload(t, ch, "") // the resync wake-up

	if np := s.d.listener.backendPID(); np == pid || np == 0 {
		t.Fatalf("after the resync wake-up the listener's backend is %d, want a new one (old %d)", np, pid)
	}
	kind := "after-reconnect-" + uuid.NewString()[:8]
	if _, err := s.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: kind}); err != nil {
		t.Fatalf("enqueueing: %v", err)
	}
	awaitPayload(t, ch, kind)
}

// TestCloseStopsEverything: no goroutine outlives Close, and subscription
// channels are closed.
func TestCloseStopsEverything(t *testing.T) {
	dbtemplate.PostgresURL(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	schema := freshSchema(t)
	defer dropSchema(t, schema)

	ctx := t.Context()
	s, err := Open(ctx, Options{URL: dbtemplate.PostgresURL(t), Schema: schema, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("opening: %v", err)
	}
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrating: %v", err)
	}
	chs := make([]<-chan store.Notification, 0, 3)
	for _, topic := range []string{store.TopicWork, store.TopicEntries, store.TopicWork} {
		ch, err := s.Subscribe(context.Background(), topic)
		if err != nil {
			t.Fatalf("subscribing to %s: %v", topic, err)
		}
		chs = append(chs, ch)
	}
	if _, err := s.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "k"}); err != nil {
		t.Fatalf("enqueueing: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("closing: %v", err)
	}
	for _, ch := range chs {
		for range ch { // drain what was delivered; the loop ends only if Close closed it
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("closing twice: %v", err)
	}
	if _, err := s.Subscribe(ctx, store.TopicWork); err == nil {
		t.Error("Subscribe on a closed store: want an error, got nil")
	}
}

func TestSchemaIsolation(t *testing.T) {
	t.Parallel()
	a := openTestStore(t, nil)
	b := openTestStore(t, nil)
	ctx := t.Context()
	c, err := a.ConversationCreate(ctx, &store.ConversationCreateParams{Title: "in a"})
	if err != nil {
		t.Fatalf("creating in a: %v", err)
	}
	if _, err := b.ConversationGet(ctx, c.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("getting a's conversation from b (another schema): want ErrNotFound, got %v", err)
	}
	if a.d.channel(store.TopicWork) == b.d.channel(store.TopicWork) {
		t.Errorf("two schemas share the channel %q", a.d.channel(store.TopicWork))
	}
}

func TestJSONRoundTripIsByteExact(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, nil)
	ctx := t.Context()
	meta := json.RawMessage(`{"b": 1,  "a": [1, 2]}`)
	c, err := s.ConversationCreate(ctx, &store.ConversationCreateParams{Metadata: meta})
	if err != nil {
		t.Fatalf("creating: %v", err)
	}
	got, err := s.ConversationGet(ctx, c.ID)
	if err != nil {
		t.Fatalf("getting: %v", err)
	}
	if string(got.Metadata) != string(meta) {
		t.Errorf("metadata read back: want the bytes written %s, got %s", meta, got.Metadata)
	}
	if _, err := s.ConversationCreate(ctx, &store.ConversationCreateParams{Metadata: json.RawMessage(`{nope`)}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("creating with invalid JSON metadata: want ErrInvalid, got %v", err)
	}
}

// awaitPayload reads ch until payload arrives and returns the payloads seen
// before it; it fails the test after 10s.
func awaitPayload(t *testing.T, ch <-chan store.Notification, payload string) []string {
	t.Helper()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	var seen []string
	for {
		select {
		case n, ok := <-ch:
			if !ok {
				t.Fatalf("subscription closed while waiting for %q; saw %v", payload, seen)
			}
			if n.Payload == payload {
				return seen
			}
			seen = append(seen, n.Payload)
		case <-timer.C:
			t.Fatalf("no notification %q within 10s; saw %v", payload, seen)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestSubscribeWhileListenerDown: with the LISTEN server unreachable,
// Subscribe still returns (the caller polls meanwhile) and Close stops the
// reconnect loop.
func TestSubscribeWhileListenerDown(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, func(o *Options) {
		o.ListenURL = "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=2"
	})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	ch, err := s.Subscribe(ctx, store.TopicWork)
	if err != nil {
		t.Fatalf("subscribing with the listener down: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Subscribe waited for its context instead of returning while the listener is down")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("closing: %v", err)
	}
	for range ch { // Close must close it
	}
}

// TestNotifyCommitsAsynchronouslyAndAlone: the wake-ups' own transaction
// commits with synchronous_commit off, and the setting ends with it: the
// pooled connection it ran on (the pool's only one) is back to the
// server's setting for the writes after it.
func TestNotifyCommitsAsynchronouslyAndAlone(t *testing.T) {
	t.Parallel()
	s := openTestStore(t, func(o *Options) { o.MaxConns = 1 })
	ctx := t.Context()
	ch, err := s.Subscribe(ctx, store.TopicEntries)
	if err != nil {
		t.Fatalf("subscribing: %v", err)
	}
	var server string
	if err := s.Pool().QueryRow(ctx, "SHOW synchronous_commit").Scan(&server); err != nil {
		t.Fatal(err)
	}
	if server == "off" {
		t.Skip("the server's synchronous_commit is off already: nothing to tell apart")
	}
	args := []*dbsqlc.NotifyParams{{Channel: s.d.channel(store.TopicEntries), Payload: "marker"}}
	var inBatch string
	err = pgx.BeginFunc(ctx, s.Pool(), func(tx pgx.Tx) error {
		if err := dbsqlc.New(tx).Notify(ctx, args).Close(); err != nil {
			return err
		}
		return tx.QueryRow(ctx, "SHOW synchronous_commit").Scan(&inBatch)
	})
	if err != nil {
		t.Fatalf("notifying in a transaction: %v", err)
	}
	if inBatch != "off" {
		t.Errorf("synchronous_commit in the notifying transaction = %q; want off", inBatch)
	}
	s.d.notifier.add(note{topic: store.TopicEntries, payload: "after"})
	awaitPayload(t, ch, "after")
	var after string
	if err := s.Pool().QueryRow(ctx, "SHOW synchronous_commit").Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != server {
		t.Errorf("synchronous_commit after the notifier's batch = %q; want the server's %q", after, server)
	}
}

// TestVersionTableFromEarlierBinary: a version table made by a binary from
// before the record of who applied a migration and its floor reads as
// unknown (the doctor reads it without migrating), is given the columns by
// the next Migrate, and still takes an earlier binary's rows afterwards.
func TestVersionTableFromEarlierBinary(t *testing.T) {
	t.Parallel()
	ms := []migrations.Migration{
		{Version: 1, Name: "test/0001_probe.sql", SQL: "CREATE TABLE schema_probe_1 (id integer)"},
		{Version: 2, Name: "test/0002_probe.sql", SQL: "CREATE TABLE schema_probe_2 (id integer)", Contract: 2},
	}
	migrations.WithFloors(ms)
	s := openUnmigrated(t, freshSchema(t), func(o *Options) { o.migrations, o.BinaryVersion = ms, "v2.0.0 (commit 2222bbbb2222)" })
	ctx := t.Context()
	if _, err := s.Pool().Exec(ctx, earlierVersionTable); err != nil {
		t.Fatalf("making the earlier version table: %v", err)
	}
	got, err := s.SchemaState(ctx)
	if err != nil {
		t.Fatalf("reading the schema state of an earlier version table: %v", err)
	}
	if want := (store.SchemaState{Applied: 1, Latest: 2, Binary: "v2.0.0 (commit 2222bbbb2222)"}); *got != want {
		t.Fatalf("schema state of an earlier version table: %+v, want %+v", *got, want)
	}
	if v, err := s.Migrate(ctx); err != nil || v != 2 {
		t.Fatalf("migrating over an earlier version table: %d, %v; want 2", v, err)
	}
	if _, err := s.Pool().Exec(ctx, earlierRecord, 3, "test/0003_by_an_earlier_binary.sql"); err != nil {
		t.Fatalf("an earlier binary recording a version in the table this one extended: %v", err)
	}
	got, err = s.SchemaState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (store.SchemaState{Applied: 3, Latest: 2, Floor: 2, FloorBy: "v2.0.0 (commit 2222bbbb2222)", Binary: "v2.0.0 (commit 2222bbbb2222)"}); *got != want {
		t.Fatalf("schema state after the upgrade and an earlier binary's row: %+v, want %+v", *got, want)
	}
}

// countingTracer counts the statements that contain a marker.
type countingTracer struct {
	marker string
	n      atomic.Int64
}

func (c *countingTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, c.marker) {
		c.n.Add(1)
	}
	return ctx
}

func (c *countingTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestMigrateUpToDateTakesNoLock: on a schema its version table lists as
// up to date, Migrate applies nothing and opens no migration transaction
// (each took the migration lock: 33 transactions per instance start), and
// still returns the version.
func TestMigrateUpToDateTakesNoLock(t *testing.T) {
	tr := &countingTracer{marker: "name: MigrationLock"}
	s := openTestStore(t, func(o *Options) { o.tracer = tr })
	tr.n.Store(0)
	v, err := s.Migrate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, latest, _ := s.SchemaVersion(context.Background()); v != latest {
		t.Fatalf("Migrate returned %d, want the latest %d", v, latest)
	}
	if n := tr.n.Load(); n != 0 {
		t.Fatalf("Migrate on an up-to-date schema took the migration lock %d times, want none", n)
	}
	// A schema missing one migration takes the lock for it alone.
	if _, err := s.Pool().Exec(context.Background(), `DELETE FROM switchboard_schema_migrations WHERE version = (SELECT max(version) FROM switchboard_schema_migrations)`); err != nil {
		t.Fatal(err)
	}
	// The migration runs again over its own tables: it fails, or succeeds
	// where it is idempotent; either way it alone ran.
	_, _ = s.Migrate(context.Background())
	if n := tr.n.Load(); n != 1 {
		t.Fatalf("Migrate of one missing version took the migration lock %d times, want once", n)
	}
}
