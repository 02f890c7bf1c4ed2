package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
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
	// The rss and start figures start this test binary as switchboard.
	t.Setenv(bench.TestBinaryEnv, "1")
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
			}
			if got, want := strings.Join(figures, ","), strings.Join(bench.Names(), ","); got != want {
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
	for _, l := range lines[2:] {
		if !strings.HasPrefix(l, " ") {
			t.Errorf("bench queue ran another figure: %q", l)
		}
	}
}
