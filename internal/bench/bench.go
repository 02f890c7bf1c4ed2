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
	// Binary is the switchboard binary the rss, start and soak figures
	// start as `serve` and `migrate` (default: this process's own
	// executable).
	Binary string
	// Duration is how long the prune figure finishes work (default 10m;
	// 5s when Short).
	Duration time.Duration
	// SoakEntries and SoakConversations are the soak's fill (default
	// 1,000,000 entries over 100,000 conversations; 4,000 over 400 when
	// Short), SoakDuration its traffic (default 5m; 3s when Short).
	SoakEntries, SoakConversations int
	SoakDuration                   time.Duration
}

func (o *Options) defaults() {
	if o.Workers == 0 {
		o.Workers = 8
	}
	if o.Duration == 0 {
		o.Duration = time.Duration(o.size(int(10*time.Minute), int(5*time.Second)))
	}
	if o.SoakEntries == 0 {
		o.SoakEntries = o.size(1_000_000, 4_000)
	}
	if o.SoakConversations == 0 {
		o.SoakConversations = o.size(100_000, 400)
	}
	if o.SoakDuration == 0 {
		o.SoakDuration = time.Duration(o.size(int(5*time.Minute), int(3*time.Second)))
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

func (o *Options) validate() error {
	switch {
	case o.Workers < 1 || o.Workers > 256:
		return fmt.Errorf("bench: -workers %d must be from 1 to 256", o.Workers)
	case o.Duration < time.Second:
		return fmt.Errorf("bench: -duration %s must be at least 1s", o.Duration)
	case o.SoakDuration < time.Second:
		return fmt.Errorf("bench: -soak-duration %s must be at least 1s", o.SoakDuration)
	case o.SoakConversations < 10:
		return fmt.Errorf("bench: -soak-conversations %d must be at least 10", o.SoakConversations)
	case o.SoakEntries < o.SoakConversations:
		return fmt.Errorf("bench: -soak-entries %d must be at least -soak-conversations (%d)", o.SoakEntries, o.SoakConversations)
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
	// Limit, when set, is the bare limit the figure's goal is set against,
	// measured in the same run (a bare SKIP LOCKED loop, a bare
	// select-to-SSE), in Unit; LimitRatio is Value over LimitValue.
	Limit      string  `json:"limit,omitempty"`
	LimitValue float64 `json:"limit_value,omitempty"`
	LimitRatio float64 `json:"limit_ratio,omitempty"`
	// Extra holds further figures of the same run (p99s, the drain rate).
	Extra map[string]float64 `json:"extra,omitempty"`
	// Skipped says why the figure measured nothing on this store (the
	// soak on SQLite, or without pgbouncer).
	Skipped string `json:"skipped,omitempty"`
}

func (r *Result) ratio() {
	if r.BaselineValue > 0 && r.Skipped == "" {
		r.Ratio = r.Value / r.BaselineValue
	}
	if r.LimitValue > 0 && r.Skipped == "" {
		r.LimitRatio = r.Value / r.LimitValue
	}
}

// figure measures one thing on a fresh store, in one result or several.
type figure struct {
	name string
	what string
	run  func(ctx context.Context, env *env) ([]*Result, error)
	// long figures take minutes at full size: they run only when named,
	// -short or not.
	long bool
}

// one adapts a figure of one result.
func one(f func(ctx context.Context, env *env) (*Result, error)) func(ctx context.Context, env *env) ([]*Result, error) {
	return func(ctx context.Context, e *env) ([]*Result, error) {
		r, err := f(ctx, e)
		if err != nil {
			return nil, err
		}
		return []*Result{r}, nil
	}
}

// Figures are the figures in the order a full run takes them. Idle RSS goes
// first, before the others grow the heap.
var figures = []figure{
	{name: "rss", what: "idle RSS of `switchboard serve` as its own process vs the peak RSS of `switchboard migrate`", run: one(runRSS)},
	{name: "append", what: "entry append vs a raw single-row INSERT (p50)", run: one(runAppend)},
	{name: "queue", what: "queue burn-down in items/s (no-op handler) vs raw single-row INSERTs/s at the same concurrency, and vs a bare SKIP LOCKED loop", run: one(runQueue)},
	{name: "turn", what: "turn overhead with a zero-latency model vs the writes a turn cannot avoid (p50)", run: one(runTurn)},
	{name: "ack", what: "Slack ack latency under a burst of signed mentions vs a bare handler (p99)", run: one(runAck)},
	{name: "catchup", what: "SSE stream catch-up of 10,000 entries vs one store read of them, and vs a bare select-to-SSE", run: one(runCatchup)},
	{name: "tail", what: "SSE stream ?tail=100 of a conversation of 50,000 entries vs of one of 100 (median)", run: one(runTail)},
	{name: "first", what: "first turn of a conversation of 50,000 entries with no summary yet vs a turn of one of 10 (p50)", run: one(runFirstTurn)},
	{name: "start", what: "start-to-ready of `switchboard serve` as its own process (/readyz 200) vs a no-op `switchboard migrate`", run: one(runStart)},
	{name: "growth", what: "the conversation list (limit=50) and a /metrics scrape at 50,000 conversations and 200,000 finished work items vs at 100 (p50)", run: runGrowth},
	{name: "voice", what: "end of speech to the first audio of the answer, offline engines and a zero-latency model, vs pocketsphinx + espeak-ng alone (p50; only when named: needs the engines)", run: one(runVoice), long: true},
	{name: "prune", what: "work table rows under 500 finished items/s for -duration, the sweep pruning, vs rate x (retention + sweep period) (long)", run: one(runPrune), long: true},
	{name: "soak", what: "two `serve` processes behind PgBouncer on -soak-entries entries, -soak-duration of traffic: end vs start (long; Postgres)", run: runSoak, long: true},
}

// Names lists the figures, for usage text.
func Names() []string {
	out := make([]string, len(figures))
	for i, f := range figures {
		out[i] = f.name
	}
	return out
}

// DefaultNames lists the figures a run with none named measures: all but
// the long ones (prune, soak) and voice, which needs the offline engines.
func DefaultNames() []string {
	var out []string
	for _, f := range figures {
		if !f.long {
			out = append(out, f.name)
		}
	}
	return out
}

// Describe writes one line per figure.
func Describe(w io.Writer) {
	for _, f := range figures {
		fmt.Fprintf(w, "  %-8s %s\n", f.name, f.what)
	}
}

// Run measures the named figures, in the order of Figures, and returns
// their results. With no name it runs DefaultNames: the long figures
// (prune, soak) run only when named.
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
		if len(names) == 0 && f.long {
			continue
		}
		e, err := newEnv(ctx, &opts)
		if err != nil {
			return out, fmt.Errorf("bench %s: %w", f.name, err)
		}
		rs, err := f.run(ctx, e)
		if cerr := e.close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			return out, fmt.Errorf("bench %s: %w", f.name, err)
		}
		for _, r := range rs {
			r.Figure, r.Dialect = f.name, e.dialect
			r.ratio()
			out = append(out, r)
		}
	}
	return out, nil
}

// Print writes results as a table.
func Print(w io.Writer, results []*Result) {
	const row = "%-8s %-8s %-34s %-44s %.2fx\n"
	fmt.Fprintf(w, "%-8s %-8s %-34s %-44s %s\n", "figure", "store", "value", "baseline (same run)", "ratio")
	for _, r := range results {
		if r.Skipped != "" {
			fmt.Fprintf(w, "%-8s %-8s skipped: %s\n", r.Figure, r.Dialect, r.Skipped)
			continue
		}
		fmt.Fprintf(w, row, r.Figure, r.Dialect,
			fmt.Sprintf("%s %s %s", r.Metric, num(r.Value), r.Unit),
			fmt.Sprintf("%s %s %s", r.Baseline, num(r.BaselineValue), r.Unit), r.Ratio)
		if r.Limit != "" {
			fmt.Fprintf(w, row, "", "", "  the bare limit:",
				fmt.Sprintf("%s %s %s", r.Limit, num(r.LimitValue), r.Unit), r.LimitRatio)
		}
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
