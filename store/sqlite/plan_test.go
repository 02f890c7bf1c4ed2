package sqlite

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// generatedSQL is the text of the query constant name in the generated
// file internal/dbsqlc/file: exactly what the store prepares.
func generatedSQL(tb testing.TB, file, name string) string {
	tb.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "internal/dbsqlc/"+file, nil, 0)
	if err != nil {
		tb.Fatal(err)
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			if len(v.Names) == 1 && v.Names[0].Name == name && len(v.Values) == 1 {
				lit, ok := v.Values[0].(*ast.BasicLit)
				if !ok {
					tb.Fatalf("%s in %s is not a literal", name, file)
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					tb.Fatal(err)
				}
				return s
			}
		}
	}
	tb.Fatalf("no constant %s in internal/dbsqlc/%s", name, file)
	return ""
}

// queryPlan is EXPLAIN QUERY PLAN of query, its parameters unbound: with
// no statistics (the service never runs ANALYZE), SQLite plans without
// looking at their values. Each step is "parent detail"; a parent of 0 is
// a step of the statement itself, not of a subquery.
func queryPlan(tb testing.TB, s *Store, query string) []string {
	tb.Helper()
	n := 0
	for _, m := range regexp.MustCompile(`\?(\d+)`).FindAllStringSubmatch(query, -1) {
		i, _ := strconv.Atoi(m[1])
		n = max(n, i)
	}
	rows, err := s.DB().QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, make([]any, n)...)
	if err != nil {
		tb.Fatalf("explaining: %v\n%s", err, query)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			tb.Fatal(err)
		}
		out = append(out, strconv.Itoa(parent)+" "+detail)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestReadsUseIndexes: the reads behind the conversation list (its default
// order) and the /metrics scrape are planned on indexes that stop at their
// page or read only the queue. The list walks conversations_updated_idx
// and sorts nothing: before it had a query of its own, its sort keys were
// computed columns, so every conversation was read, its platform looked
// up, and sorted (measured: 352 ms at 50,000 conversations, 165× its time
// at 100).
func TestReadsUseIndexes(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	ctx := context.Background()
	for _, q := range []string{
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
		 INSERT INTO conversations (id, root_id, created_at, updated_at) SELECT printf('c%d', i), printf('c%d', i), i, i FROM n`,
		`INSERT INTO bindings (id, conversation_id, platform, channel, created_at, updated_at)
		 SELECT 'b' || id, id, 'slack', id, created_at, created_at FROM conversations WHERE created_at % 3 > 0`,
		`INSERT INTO conversation_filing (conversation_id, archived_at, updated_at)
		 SELECT id, created_at, created_at FROM conversations WHERE created_at % 20 = 0`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
		 INSERT INTO work (id, kind, run_at, state, created_at, updated_at, finished_at)
		 SELECT printf('w%d', i), 'turn', i, CASE WHEN i % 200 = 0 THEN 'failed' ELSE 'done' END, i, i, i FROM n`,
	} {
		if _, err := s.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("filling the tables: %v\n%s", err, q)
		}
	}
	for _, c := range []struct {
		name, file, query string
		want              string   // a step the plan must have
		never             []string // steps it must not have
	}{
		{"the conversation list", "history.sql.go", "conversationSearch",
			"0 SCAN c USING INDEX conversations_updated_idx", []string{"0 USE TEMP B-TREE FOR ORDER BY", "0 SCAN c\x00"}},
		{"the queue counts of /metrics", "stats.sql.go", "workCount",
			"work_queue_count_idx", []string{"0 SCAN work\x00"}},
		{"the pending approvals of /metrics", "stats.sql.go", "approvalCount",
			"USING", []string{"0 SCAN approvals\x00"}},
	} {
		plan := queryPlan(t, s, generatedSQL(t, c.file, c.query))
		joined := strings.Join(plan, "\x00") + "\x00"
		if !strings.Contains(joined, c.want) {
			t.Errorf("%s is not planned with %q: %q", c.name, c.want, plan)
		}
		for _, n := range c.never {
			if strings.Contains(joined, n) {
				t.Errorf("%s is planned with %q, which reads or sorts every row of a growing table: %q", c.name, strings.TrimSuffix(n, "\x00"), plan)
			}
		}
	}
}
