package postgres

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard/store"
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
		if err := call(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sql, args := rec.last()
		var raw []byte
		if err := pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+sql, args...).Scan(&raw); err != nil {
			t.Fatalf("explaining %s: %v\n%s", name, err, sql)
		}
		nodes := planNodes(t, raw)
		for _, n := range nodes {
			if b := strings.TrimPrefix(n, "subplan "); strings.HasPrefix(b, "Seq Scan") || n == "Sort" || strings.HasPrefix(b, "Bitmap Heap Scan") {
				t.Errorf("%s is planned with %q, which reads every row of a growing table; plan: %v", name, n, nodes)
			}
		}
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
	explain("the queue counts of /metrics", func() error {
		_, err := s.WorkCount(ctx)
		return err
	})
}
