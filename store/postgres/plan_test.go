package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres/internal/dbsqlc"
)

// recorder keeps the last query the pool ran.
type recorder struct {
	mu   sync.Mutex
	sql  string
	args []any
}

func (r *recorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	r.sql, r.args = d.SQL, d.Args
	r.mu.Unlock()
	return ctx
}

func (r *recorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *recorder) last() (string, []any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sql, r.args
}

// planNodes flattens an EXPLAIN (FORMAT JSON) plan into "Node Type on
// relation" strings; the nodes of a subplan (run per row of the node above,
// as the lookup of a listed conversation's platform) start with "subplan ".
func planNodes(tb testing.TB, raw []byte) []string {
	tb.Helper()
	var plans []struct{ Plan json.RawMessage }
	if err := json.Unmarshal(raw, &plans); err != nil {
		tb.Fatalf("reading the plan: %v\n%s", err, raw)
	}
	var out []string
	var walk func(json.RawMessage, string)
	walk = func(m json.RawMessage, prefix string) {
		var n struct {
			Type     string            `json:"Node Type"`
			Relation string            `json:"Relation Name"`
			Index    string            `json:"Index Name"`
			Parent   string            `json:"Parent Relationship"`
			Plans    []json.RawMessage `json:"Plans"`
		}
		if err := json.Unmarshal(m, &n); err != nil {
			tb.Fatal(err)
		}
		if n.Parent == "SubPlan" {
			prefix = "subplan "
		}
		out = append(out, prefix+strings.TrimSpace(n.Type+" "+n.Relation+" "+n.Index))
		for _, c := range n.Plans {
			walk(c, prefix)
		}
	}
	for _, p := range plans {
		walk(p.Plan, "")
	}
	return out
}

// explainLast runs call and returns the JSON plan of the last query it ran.
func explainLast(t *testing.T, rec *recorder, pool *pgxpool.Pool, name string, call func() error) []byte {
	t.Helper()
	if err := call(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	sql, args := rec.last()
	var raw []byte
	if err := pool.QueryRow(context.Background(), "EXPLAIN (FORMAT JSON) "+sql, args...).Scan(&raw); err != nil {
		t.Fatalf("explaining %s: %v\n%s", name, err, sql)
	}
	return raw
}

// indexed runs call and fails t when the plan of the last query it ran
// reads every row of a growing table: a sequential scan, a sort or a bitmap
// heap scan. A sort of the running work items alone (read from
// work_items_running_idx) is allowed: there are never more of them than
// the workers' slots, however old the data.
func indexed(t *testing.T, rec *recorder, pool *pgxpool.Pool, name string, call func() error) {
	t.Helper()
	raw := explainLast(t, rec, pool, name, call)
	nodes := planNodes(t, raw)
	for i, n := range nodes {
		if n == "Sort" && i+1 < len(nodes) && strings.HasSuffix(nodes[i+1], " work_items work_items_running_idx") {
			continue
		}
		if b := strings.TrimPrefix(n, "subplan "); strings.HasPrefix(b, "Seq Scan") || n == "Sort" || strings.HasPrefix(b, "Bitmap Heap Scan") {
			t.Errorf("%s is planned with %q, which reads every row of a growing table; plan: %v", name, n, nodes)
		}
	}
}

// TestReadsUseIndexes: the reads behind the conversation list and the
// /metrics scrape are planned as index scans that stop at their page or
// read only the queue, on tables holding months of data (50,000
// conversations, most bound to a thread, a few archived; 200,000 finished
// work items; vacuumed and analyzed as autovacuum would). A sequential
// scan or a sort of every row makes their time grow with the data
// (measured: the list at 50,000 conversations took 25× its time at 100, a
// scrape 10×). A subplan's sort (the platform of a listed conversation,
// from its few bindings) is per row of the page, and allowed. The list of
// GET /api/conversations is ConversationSearch in its default order;
// `switchboard bench growth` measures it and the scrape through the
// service.
func TestReadsUseIndexes(t *testing.T) {
	rec := &recorder{}
	s := openTestStore(t, func(o *Options) { o.tracer = rec })
	ctx := context.Background()
	pool := s.Pool()
	ws := uuid.New()
	for _, q := range []string{
		`INSERT INTO workspaces (id, name, kind, owner_person_id, created_at) VALUES ('` + ws.String() + `', 'team', 'team', gen_random_uuid(), now())`,
		`INSERT INTO conversations (id, root_id, workspace_id, created_at, updated_at)
		 SELECT g, g, CASE WHEN random() < 0.5 THEN '` + ws.String() + `'::uuid END, now() - (n || ' minutes')::interval, now() - (n || ' minutes')::interval
		 FROM (SELECT gen_random_uuid() AS g, n FROM generate_series(1, 50000) n) x`,
		`INSERT INTO work_items (id, kind, state, payload, run_at, max_attempts, created_at, updated_at, finished_at)
		 SELECT gen_random_uuid(), 'turn', 'done', '{}', now(), 3, now(), now(), now() - (n || ' seconds')::interval FROM generate_series(1, 200000) n`,
		`INSERT INTO work_items (id, kind, state, payload, run_at, max_attempts, created_at, updated_at)
		 SELECT gen_random_uuid(), 'turn', 'available', '{}', now(), 3, now(), now() FROM generate_series(1, 50) n`,
		`INSERT INTO work_items (id, kind, state, payload, run_at, max_attempts, created_at, updated_at, finished_at)
		 SELECT gen_random_uuid(), 'turn', 'failed', '{}', now(), 3, now(), now(), now() FROM generate_series(1, 1000) n`,
		`INSERT INTO bindings (id, conversation_id, platform, workspace, channel, thread, created_at, updated_at)
		 SELECT gen_random_uuid(), id, 'slack', 'T1', 'C1', id::text, created_at, created_at FROM conversations WHERE random() < 0.6`,
		`INSERT INTO conversation_filing (conversation_id, archived_at, updated_at)
		 SELECT id, updated_at, updated_at FROM conversations WHERE random() < 0.05`,
		`VACUUM ANALYZE conversations`, `VACUUM ANALYZE work_items`, `VACUUM ANALYZE bindings`, `VACUUM ANALYZE conversation_filing`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("filling the tables: %v\n%s", err, q)
		}
	}
	explain := func(name string, call func() error) {
		t.Helper()
		indexed(t, rec, pool, name, call)
	}
	now := time.Now()
	explain("the conversation list (operator)", func() error {
		_, err := s.ConversationList(ctx, &store.ConversationListParams{All: true, Limit: 50})
		return err
	})
	explain("the conversation list (a workspace's members)", func() error {
		_, err := s.ConversationList(ctx, &store.ConversationListParams{Workspaces: []uuid.UUID{ws}, Limit: 50})
		return err
	})
	explain("the conversation list's next page", func() error {
		_, err := s.ConversationList(ctx, &store.ConversationListParams{All: true, Limit: 50,
			Before: &store.ConversationCursor{UpdatedAt: now.Add(-time.Hour), ID: uuid.New()}})
		return err
	})
	explain("GET /api/conversations (the operator)", func() error {
		_, err := s.ConversationSearch(ctx, &store.ConversationSearchParams{Visibility: store.Visibility{All: true}, Limit: 51})
		return err
	})
	explain("GET /api/conversations (a workspace's member)", func() error {
		_, err := s.ConversationSearch(ctx, &store.ConversationSearchParams{Visibility: store.Visibility{Workspaces: []uuid.UUID{ws}}, Limit: 51})
		return err
	})
	explain("GET /api/conversations's next page", func() error {
		_, err := s.ConversationSearch(ctx, &store.ConversationSearchParams{Visibility: store.Visibility{All: true}, Offset: 50, Limit: 51})
		return err
	})
	// The retention's sweep walks a workspace's conversations from the
	// oldest, probing each tree (by root) for activity and busy work.
	explain("the retention's expired trees", func() error {
		_, err := s.ConversationExpiredList(ctx, &store.ConversationExpiredListParams{WorkspaceID: ws, Before: now.Add(-60 * 24 * time.Hour), Now: now, Limit: 100})
		return err
	})
	explain("the queue counts of /metrics", func() error {
		_, err := s.WorkCount(ctx)
		return err
	})
}

// rangeScan runs call and fails t unless the plan of the last query it ran
// reads entries only through a range of an index on (conversation_id,
// seq) or (conversation_id, after_seq), and expects at most most rows: an
// index or bitmap scan whose condition bounds the seq, never a scan of the
// conversation's whole log. (A planner may sort the rows of a bitmap scan:
// those of the range, not of the table.)
func rangeScan(t *testing.T, rec *recorder, pool *pgxpool.Pool, name string, most float64, call func() error) {
	t.Helper()
	raw := explainLast(t, rec, pool, name, call)
	var plans []struct{ Plan json.RawMessage }
	if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("reading the plan of %s: %v\n%s", name, err, raw)
	}
	type node struct {
		Type     string            `json:"Node Type"`
		Relation string            `json:"Relation Name"`
		Index    string            `json:"Index Name"`
		Cond     string            `json:"Index Cond"`
		Rows     float64           `json:"Plan Rows"`
		Plans    []json.RawMessage `json:"Plans"`
	}
	var scans int
	var walk func(m json.RawMessage, top bool)
	walk = func(m json.RawMessage, top bool) {
		var n node
		if err := json.Unmarshal(m, &n); err != nil {
			t.Fatal(err)
		}
		if top && n.Rows > most {
			t.Errorf("%s is planned to return %.0f rows; want at most %.0f (a page)\n%s", name, n.Rows, most, raw)
		}
		switch n.Type {
		case "Seq Scan":
			t.Errorf("%s is planned with a sequential scan of %s\n%s", name, n.Relation, raw)
		case "Index Scan", "Index Only Scan", "Bitmap Index Scan":
			scans++
			if !strings.Contains(n.Cond, "seq") {
				t.Errorf("%s scans %s with condition %q, which does not bound the seq\n%s", name, n.Index, n.Cond, raw)
			}
		}
		for _, c := range n.Plans {
			walk(c, false)
		}
	}
	walk(plans[0].Plan, true)
	if scans == 0 {
		t.Errorf("%s is planned with no index scan\n%s", name, raw)
	}
}

// TestLogReadsUseIndexes: the reads of a long log are each a bounded range
// of an index, on a table of 150,000 entries (one conversation of 50,000,
// with 1,000 error entries, analyzed as autovacuum would): the window a
// turn reads before a conversation's first summary (its newest page, a
// page further back), a stream's catch-up page and its error entries, a
// stream's ?tail, and the latest summary's probe.
func TestLogReadsUseIndexes(t *testing.T) {
	rec := &recorder{}
	s := openTestStore(t, func(o *Options) { o.tracer = rec })
	ctx := context.Background()
	pool := s.Pool()
	conv := uuid.New()
	for _, q := range []string{
		`INSERT INTO conversations (id, root_id, last_seq, created_at, updated_at)
		 SELECT g, g, CASE WHEN g = '` + conv.String() + `'::uuid THEN 50000 ELSE 10000 END, now(), now()
		 FROM (SELECT '` + conv.String() + `'::uuid AS g UNION ALL SELECT gen_random_uuid() FROM generate_series(1, 10)) x`,
		`INSERT INTO entries (id, conversation_id, seq, after_seq, kind, author, content, created_at)
		 SELECT gen_random_uuid(), c.id, n, n - 1, CASE WHEN n % 2 = 0 THEN 'assistant' ELSE 'user' END, 'user:u',
		        '{"text": "the harbour gauge read 3.4 m"}', now()
		 FROM conversations c, generate_series(1, c.last_seq) n`,
		`INSERT INTO entries (id, conversation_id, seq, after_seq, kind, author, content, created_at)
		 SELECT gen_random_uuid(), '` + conv.String() + `', NULL, n * 50, 'error', 'system', '{"error": "x"}', now()
		 FROM generate_series(1, 1000) n`,
		`ANALYZE conversations`, `ANALYZE entries`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("filling the tables: %v\n%s", err, q)
		}
	}
	for _, c := range []struct {
		name string
		p    store.EntryListParams
		most float64
	}{
		{"the window's newest page", store.EntryListParams{AfterSeq: 50000 - 87}, 200},
		{"a page of the window further back", store.EntryListParams{AfterSeq: 49000, UpToSeq: 49913}, 2000},
		{"a catch-up page's entries", store.EntryListParams{AfterSeq: 20000, UpToSeq: 21000}, 2000},
		// With errors the last query is the error entries'.
		{"a catch-up page's error entries", store.EntryListParams{AfterSeq: 20000, UpToSeq: 21000, WithErrors: true}, 2000},
		{"a stream's ?tail=100", store.EntryListParams{AfterSeq: 49900, UpToSeq: 50900, WithErrors: true}, 200},
	} {
		p := c.p
		p.ConversationID = conv
		rangeScan(t, rec, pool, c.name, c.most, func() error {
			es, err := s.EntryList(ctx, &p)
			if err == nil && len(es) == 0 {
				err = errors.New("read nothing")
			}
			return err
		})
	}
	indexed(t, rec, pool, "the latest summary's probe", func() error {
		if _, err := s.EntryLatestSummary(ctx, conv); !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("EntryLatestSummary = %v; want ErrNotFound", err)
		}
		return nil
	})
}

// capturedDB is a dbsqlc.DBTX that runs nothing: it keeps the SQL and
// arguments of the query it was given.
type capturedDB struct {
	sql  string
	args []any
}

var errCaptured = errors.New("captured, not run")

func (c *capturedDB) Query(_ context.Context, sql string, args ...any) (pgx.Rows, error) {
	c.sql, c.args = sql, args
	return nil, errCaptured
}

func (c *capturedDB) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) {
	return pgconn.CommandTag{}, errCaptured
}

func (c *capturedDB) QueryRow(context.Context, string, ...any) pgx.Row { return nil }

func (c *capturedDB) SendBatch(context.Context, *pgx.Batch) pgx.BatchResults { return nil }

// TestClaimReadsTheQueueInClaimOrder: with a backlog of 20,000 available
// items that the planner has no statistics of (a table autovacuum has not
// analyzed since the queue grew), the claim, under the settings it runs
// with (claimSettings), reads the available items from
// work_items_available_idx in claim order and stops at its LIMIT. Without
// the sort off, it read all 20,000 through the queue count's index (kind,
// state) and sorted them: 52 ms a claim, growing with the backlog.
func TestClaimReadsTheQueueInClaimOrder(t *testing.T) {
	s := openTestStore(t, nil)
	ctx := context.Background()
	pool := s.Pool()
	if _, err := pool.Exec(ctx, `INSERT INTO work_items (id, kind, state, payload, run_at, max_attempts, created_at, updated_at)
		SELECT gen_random_uuid(), 'turn', 'available', '{}', now() - (20000 - n) * interval '1 ms', 3, now(), now() FROM generate_series(1, 20000) n`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kinds     []string
		available bool
	}{{[]string{"turn"}, false}, {nil, false}, {[]string{"turn"}, true}, {nil, true}} {
		kinds := tc.kinds
		var c capturedDB
		now := time.Now()
		args := &dbsqlc.WorkClaimParams{Worker: "w", Kinds: kinds, MaxItems: 8, Now: now, LeaseExpiresAt: now.Add(time.Minute)}
		var err error
		if tc.available {
			_, err = dbsqlc.New(&c).WorkClaimAvailable(ctx, (*dbsqlc.WorkClaimAvailableParams)(args))
		} else {
			_, err = dbsqlc.New(&c).WorkClaim(ctx, args)
		}
		if !errors.Is(err, errCaptured) {
			t.Fatalf("capturing the claim: %v", err)
		}
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var raw []byte
		if _, err = tx.Exec(ctx, claimSettings); err == nil {
			err = tx.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+c.sql, c.args...).Scan(&raw)
		}
		_ = tx.Rollback(ctx)
		if err != nil {
			t.Fatalf("explaining the claim: %v", err)
		}
		nodes := planNodes(t, raw)
		if !slices.Contains(nodes, "Index Scan work_items work_items_available_idx") {
			t.Errorf("the claim (available only: %v) of kinds %v does not read work_items_available_idx: %v", tc.available, kinds, nodes)
		}
	}
}
