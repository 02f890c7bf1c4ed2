package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard/internal/bench"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

// TestBench runs every figure of `switchboard bench -short -json` on SQLite
// and Postgres and checks that each measured itself and its baseline, and
// that the store it used is gone afterwards.
func TestBench(t *testing.T) {
	// The rss and start figures start this test binary as switchboard
	// (TestMain).
	t.Parallel()
	for _, d := range []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "sb.db") }},
		// A database of its own, so that the schemas counted below are this
		// run's alone, not those of another package's bench test beside it.
		{"postgres", func(t *testing.T) string { return testenv.PostgresDatabaseURL(t, testenv.PostgresDatabase(t)) }},
	} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			db := d.url(t)
			var out, errOut bytes.Buffer
			if err := run(context.Background(), []string{"bench", "-short", "-json"}, env(map[string]string{"DATABASE_URL": db}), nil, &out, &errOut); err != nil {
				t.Fatalf("bench: %v\n%s", err, errOut.String())
			}
			var results []bench.Result
			if err := json.Unmarshal(out.Bytes(), &results); err != nil {
				t.Fatalf("bench -json printed %q: %v", out.String(), err)
			}
			var figures []string
			for _, r := range results {
				figures = append(figures, r.Figure)
				if r.Dialect != d.name {
					t.Errorf("%s ran on %q, want %s", r.Figure, r.Dialect, d.name)
				}
				if r.Value <= 0 || r.BaselineValue <= 0 {
					t.Errorf("%s: value %v (%s), baseline %v (%s); want both measured", r.Figure, r.Value, r.Metric, r.BaselineValue, r.Baseline)
				}
				if want := r.Value / r.BaselineValue; math.Abs(r.Ratio-want) > 1e-9*want {
					t.Errorf("%s: ratio %v, want value/baseline %v", r.Figure, r.Ratio, want)
				}
				// The figures whose goals are set against a bare limit
				// measure it in the same run.
				if r.Figure == "queue" || r.Figure == "catchup" {
					if r.Limit == "" || r.LimitValue <= 0 {
						t.Errorf("%s: limit %q %v; want the bare limit measured", r.Figure, r.Limit, r.LimitValue)
					} else if want := r.Value / r.LimitValue; math.Abs(r.LimitRatio-want) > 1e-9*want {
						t.Errorf("%s: limit ratio %v, want value/limit %v", r.Figure, r.LimitRatio, want)
					}
				}
			}
			// A figure may give several results (growth: the list and the
			// scrape), one after the other.
			if got, want := strings.Join(slices.Compact(figures), ","), strings.Join(bench.DefaultNames(), ","); got != want {
				t.Errorf("bench ran %s, want every figure: %s", got, want)
			}
			if d.name == "postgres" {
				conn, err := pgx.Connect(context.Background(), db)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close(context.Background())
				var left int
				if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM information_schema.schemata WHERE schema_name LIKE 'switchboard_bench_%'`).Scan(&left); err != nil {
					t.Fatal(err)
				}
				if left != 0 {
					t.Errorf("%d bench schemas left behind", left)
				}
			}
		})
	}
}

// TestBenchQueuePrintsItemsPerSecond: `switchboard bench queue` prints the
// burn-down in items/s beside its baseline, and runs nothing else.
func TestBenchQueuePrintsItemsPerSecond(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "sb.db")
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"bench", "-short", "-workers", "4", "queue"}, env(map[string]string{"DATABASE_URL": db}), nil, &out, &errOut); err != nil {
		t.Fatalf("bench queue: %v\n%s", err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[1], "queue ") || !strings.Contains(lines[1], "burn-down") ||
		strings.Count(lines[1], "items/s") != 2 || !strings.Contains(lines[1], "raw INSERTs, 4 writers") {
		t.Fatalf("bench queue printed:\n%s\nwant a queue line with the burn-down and its baseline in items/s", out.String())
	}
	if len(lines) < 3 || !strings.Contains(lines[2], "the bare limit:") || !strings.Contains(lines[2], "bare claim-and-finish loop, batches of 4") {
		t.Errorf("bench queue printed:\n%s\nwant the bare loop's rate on the line after the figure", out.String())
	}
	for _, l := range lines[2:] {
		if !strings.HasPrefix(l, " ") {
			t.Errorf("bench queue ran another figure: %q", l)
		}
	}
}

// TestBenchSoak runs `switchboard bench -short soak` on Postgres: two
// instances (this test binary as switchboard serve) behind PgBouncer in
// transaction mode, on a database of the soak's own, filled, a few seconds
// of traffic, every figure measured at the start and the end, and the
// database dropped afterwards.
func TestBenchSoak(t *testing.T) {
	t.Parallel()
	testenv.RequirePgBouncer(t)
	db := testenv.PostgresDatabaseURL(t, testenv.PostgresDatabase(t))
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	countDBs := func() int {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_database WHERE datname LIKE 'switchboard_bench_%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := countDBs()
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"bench", "-short", "-json", "soak"}, env(map[string]string{"DATABASE_URL": db}), nil, &out, &errOut); err != nil {
		t.Fatalf("bench soak: %v\n%s", err, errOut.String())
	}
	var results []bench.Result
	if err := json.Unmarshal(out.Bytes(), &results); err != nil {
		t.Fatalf("bench -json printed %q: %v", out.String(), err)
	}
	var metrics []string
	for _, r := range results {
		metrics = append(metrics, r.Metric)
		if r.Figure != "soak" || r.Skipped != "" || r.Value <= 0 || r.BaselineValue <= 0 || r.Ratio <= 0 {
			t.Errorf("%+v: want a figure at the end and at the start", r)
		}
	}
	want := "turn p50, end,list p50, end,scrape p50, end,catch-up of 1007, end,RSS instance 1, end,RSS instance 2, end"
	if got := strings.Join(metrics, ","); got != want {
		t.Errorf("the soak measured %s, want %s", got, want)
	}
	if x := results[0].Extra; x["traffic_turns"] < 1 || x["entries"] != 4000 || x["conversations"] != 400 {
		t.Errorf("the soak's traffic and fill: %v", x)
	}
	if after := countDBs(); after != before {
		t.Errorf("%d soak databases before, %d after: want the soak's dropped", before, after)
	}
}

// TestBenchSoakSkipsOnSQLite: the soak needs one Postgres for its two
// instances; on SQLite it says so and measures nothing.
func TestBenchSoakSkipsOnSQLite(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"bench", "-short", "soak"}, env(map[string]string{"DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "sb.db")}), nil, &out, &errOut); err != nil {
		t.Fatalf("bench soak: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "soak     sqlite   skipped: two instances share one Postgres") {
		t.Fatalf("bench soak on SQLite printed:\n%s", out.String())
	}
}
