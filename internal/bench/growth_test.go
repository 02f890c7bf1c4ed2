package bench_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/internal/bench"
	"github.com/switchboardhq/switchboard/internal/testenv"
)

// eachURL runs f on a fresh SQLite file's URL and on TEST_DATABASE_URL
// (whose fresh schemas the figures make and drop themselves).
func eachURL(t *testing.T, f func(t *testing.T, url string)) {
	t.Run("sqlite", func(t *testing.T) { f(t, "sqlite:"+filepath.Join(t.TempDir(), "sb.db")) })
	t.Run("postgres", func(t *testing.T) { f(t, testenv.PostgresURL(t)) })
}

// TestGrowthFigure: the growth figure fills the big store (at -short,
// 1,000 conversations and 4,000 finished items) and the small one (100 and
// 400), reads a full page of the list and a scrape of each through the
// service, and reports both reads, each against its time on the small
// store.
func TestGrowthFigure(t *testing.T) {
	eachURL(t, func(t *testing.T, url string) {
		res, err := bench.Run(t.Context(), bench.Options{DatabaseURL: url, Short: true, Logger: testenv.Logger(t)}, []string{"growth"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 2 {
			t.Fatalf("%d results, want the list and the scrape", len(res))
		}
		for i, prefix := range []string{"list p50", "scrape p50"} {
			r := res[i]
			if r.Figure != "growth" || !strings.HasPrefix(r.Metric, prefix) || r.Value <= 0 || r.BaselineValue <= 0 || r.Ratio <= 0 {
				t.Errorf("result %d: %+v; want the %s at both sizes and their ratio", i, r, prefix)
			}
			if r.Extra["conversations"] != 1000 || r.Extra["baseline_conversations"] != 100 ||
				r.Extra["finished_work"] != 4000 || r.Extra["baseline_finished_work"] != 400 {
				t.Errorf("result %d sizes: %v", i, r.Extra)
			}
		}
	})
}
