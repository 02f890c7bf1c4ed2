// Package bench measures the service's main figures on a real store, each
// against a baseline measured in the same run, so that the ratio means the
// same on a laptop and on a server: `switchboard bench` runs it, and the
// Go benchmarks of core and internal/app share its parts (the zero-latency
// turn service, the burst sender, quantiles).
//
// Every figure gets a fresh store of its own: a new SQLite file beside the
// configured one, or a new schema of the configured Postgres database that
// is dropped afterwards. Nothing touches the service's own tables.
package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
)

// Options configures a run.
type Options struct {
	// DatabaseURL names the store to measure, as DATABASE_URL does (empty:
	// SQLite beside dial.DefaultSQLitePath).
	DatabaseURL string
	// Short runs every figure at a small size: a check that it works, not
	// a measurement.
	Short bool
	// Workers is the queue burn-down's worker concurrency (default 8).
	Workers int
	Logger  *slog.Logger
	// Binary is the switchboard binary the rss and start figures start as
	// `serve` and `migrate` (default: this process's own executable).
	Binary string
}

func (o *Options) defaults() {
	if o.Workers == 0 {
		o.Workers = 8
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

func (o *Options) validate() error {
	if o.Workers < 1 || o.Workers > 256 {
		return fmt.Errorf("bench: -workers %d must be from 1 to 256", o.Workers)
	}
	_, err := dial.Parse(o.DatabaseURL)
	return err
}

// size picks the full or the short size of a figure.
func (o *Options) size(full, short int) int {
	if o.Short {
		return short
	}
	return full
}

// Result is one figure and its baseline.
type Result struct {
	Figure        string  `json:"figure"`
	Dialect       string  `json:"dialect"`
	Metric        string  `json:"metric"` // what Value is: "append p50", "items/s"
	Value         float64 `json:"value"`
	Unit          string  `json:"unit"`
	Baseline      string  `json:"baseline"` // what the baseline is
	BaselineValue float64 `json:"baseline_value"`
	// Ratio is Value over BaselineValue: for times, how many times slower
	// than the baseline; for rates, the share of the baseline's rate.
	Ratio float64 `json:"ratio"`
	// Extra holds further figures of the same run (p99s, the drain rate).
	Extra map[string]float64 `json:"extra,omitempty"`
}

func (r *Result) ratio() {
	if r.BaselineValue > 0 {
		r.Ratio = r.Value / r.BaselineValue
	}
}

// figure measures one thing on a fresh store.
type figure struct {
	name string
	what string
	run  func(ctx context.Context, env *env) (*Result, error)
}

// Figures are the figures in the order a full run takes them. Idle RSS goes
// first, before the others grow the heap.
var figures = []figure{
	{"rss", "idle RSS of `switchboard serve` as its own process vs the peak RSS of `switchboard migrate`", runRSS},
	{"append", "entry append vs a raw single-row INSERT (p50)", runAppend},
	{"queue", "queue burn-down in items/s (no-op handler) vs raw single-row INSERTs/s at the same concurrency", runQueue},
	{"turn", "turn overhead with a zero-latency model vs the writes a turn cannot avoid (p50)", runTurn},
	{"ack", "Slack ack latency under a burst of signed mentions vs a bare handler (p99)", runAck},
	{"catchup", "SSE stream catch-up of 10,000 entries vs one store read of them", runCatchup},
	{"tail", "SSE stream ?tail=100 of a conversation of 50,000 entries vs of one of 100 (median)", runTail},
	{"first", "first turn of a conversation of 50,000 entries with no summary yet vs a turn of one of 10 (p50)", runFirstTurn},
	{"start", "start-to-ready of `switchboard serve` as its own process (/readyz 200) vs a no-op `switchboard migrate`", runStart},
}

// Names lists the figures, for usage text.
func Names() []string {
	out := make([]string, len(figures))
	for i, f := range figures {
		out[i] = f.name
	}
	return out
}

// Describe writes one line per figure.
func Describe(w io.Writer) {
	for _, f := range figures {
		fmt.Fprintf(w, "  %-8s %s\n", f.name, f.what)
	}
}

// Run measures the named figures (all when names is empty), in the order
// of Figures, and returns their results.
func Run(ctx context.Context, opts Options, names []string) ([]*Result, error) {
	opts.defaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	for _, n := range names {
		if !slices.Contains(Names(), n) {
			return nil, fmt.Errorf("bench: unknown figure %q: want one of %s", n, strings.Join(Names(), ", "))
		}
	}
	var out []*Result
	for _, f := range figures {
		if len(names) > 0 && !slices.Contains(names, f.name) {
			continue
		}
		e, err := newEnv(ctx, &opts)
		if err != nil {
			return out, fmt.Errorf("bench %s: %w", f.name, err)
		}
		r, err := f.run(ctx, e)
		if cerr := e.close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			return out, fmt.Errorf("bench %s: %w", f.name, err)
		}
		r.Figure, r.Dialect = f.name, e.dialect
		r.ratio()
		out = append(out, r)
	}
	return out, nil
}

// Print writes results as a table.
func Print(w io.Writer, results []*Result) {
	fmt.Fprintf(w, "%-8s %-8s %-34s %-44s %s\n", "figure", "store", "value", "baseline (same run)", "ratio")
	for _, r := range results {
		fmt.Fprintf(w, "%-8s %-8s %-34s %-44s %.2fx\n", r.Figure, r.Dialect,
			fmt.Sprintf("%s %s %s", r.Metric, num(r.Value), r.Unit),
			fmt.Sprintf("%s %s %s", r.Baseline, num(r.BaselineValue), r.Unit), r.Ratio)
		keys := make([]string, 0, len(r.Extra))
		for k := range r.Extra {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "%-8s %-8s   %s %s\n", "", "", k, num(r.Extra[k]))
		}
	}
}

func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

// env is one figure's fresh store and where it lives.
type env struct {
	opts    *Options
	url     string // a DATABASE_URL for the fresh store
	dialect string
	dir     string // a scratch folder (SQLite's file lives there)
	st      store.Store
	drop    func() error
}

func newEnv(ctx context.Context, opts *Options) (*env, error) {
	t, err := dial.Parse(opts.DatabaseURL)
	if err != nil {
		return nil, err
	}
	e := &env{opts: opts, dialect: t.Driver, drop: func() error { return nil }}
	suffix := randomSuffix()
	if t.Driver == "sqlite" {
		// Beside the configured file: the same disk, so the same fsync.
		parent := filepath.Dir(t.Path)
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, fmt.Errorf("making %s: %w", parent, err)
		}
		if e.dir, err = os.MkdirTemp(parent, "switchboard-bench-"); err != nil {
			return nil, fmt.Errorf("making a scratch folder in %s: %w", parent, err)
		}
		e.url = "sqlite:" + filepath.Join(e.dir, "bench.db")
		e.drop = func() error { return os.RemoveAll(e.dir) }
	} else {
		if e.dir, err = os.MkdirTemp("", "switchboard-bench-"); err != nil {
			return nil, err
		}
		schema := "switchboard_bench_" + suffix
		sep := "?"
		if strings.Contains(opts.DatabaseURL, "?") {
			sep = "&"
		}
		e.url = opts.DatabaseURL + sep + "switchboard_schema=" + schema
		base := t.URL
		e.drop = func() error {
			defer os.RemoveAll(e.dir)
			cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			conn, err := pgx.Connect(cctx, base)
			if err != nil {
				return fmt.Errorf("dropping the bench schema %s: %w", schema, err)
			}
			defer conn.Close(cctx)
			if _, err := conn.Exec(cctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
				return fmt.Errorf("dropping the bench schema %s: %w", schema, err)
			}
			return nil
		}
	}
	e.st, err = dial.Open(ctx, dial.Options{DatabaseURL: e.url, Logger: opts.Logger})
	if err != nil {
		_ = e.drop()
		return nil, err
	}
	if _, err := e.st.Migrate(ctx); err != nil {
		_ = e.close()
		return nil, fmt.Errorf("migrating the bench store: %w", err)
	}
	return e, nil
}

func (e *env) close() error {
	var errs []error
	if e.st != nil {
		errs = append(errs, e.st.Close())
	}
	errs = append(errs, e.drop())
	return errors.Join(errs...)
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Quantile is the q-quantile of latencies (sorted or not).
func Quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s)-1)*q+0.5))]
}

// ms is a duration in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
