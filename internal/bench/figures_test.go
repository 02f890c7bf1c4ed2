package bench_test

import (
	"cmp"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboardhq/switchboard/internal/bench"
)

// BenchmarkFigure runs one figure of `switchboard bench` (BENCH_FIGURE,
// default catchup) in this process, on SQLite, or on Postgres when
// TEST_DATABASE_URL is set: a way to profile it with -cpuprofile. The
// figures that start the binary (rss, start) need `switchboard bench`.
func BenchmarkFigure(b *testing.B) {
	name := cmp.Or(os.Getenv("BENCH_FIGURE"), "catchup")
	url := cmp.Or(os.Getenv("TEST_DATABASE_URL"), "sqlite:"+filepath.Join(b.TempDir(), "sb.db"))
	for b.Loop() {
		res, err := bench.Run(b.Context(), bench.Options{DatabaseURL: url}, []string{name})
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			b.ReportMetric(r.Value, r.Unit)
			b.ReportMetric(r.BaselineValue, "baseline_"+r.Unit)
			b.ReportMetric(r.Ratio, "ratio")
		}
	}
}
