package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/dial"
	"github.com/switchboardhq/switchboard/store/postgres"
)

// The prune figure: whether the sweep keeps the work table bounded while
// work finishes at a team's peak rate, for as long as it is asked to.

// KindPrune is the work kind of the prune figure's items.
const KindPrune = "bench_prune"

type pruneArgs struct{}

func (pruneArgs) Kind() string { return KindPrune }

// PruneRate is the rate the prune figure finishes work at, items/s.
const PruneRate = 500

// pruneTimes are the prune figure's retention, sweep period and sampling
// period for a run of d: the scheduler's sweep period (1 minute) and as
// short a retention as that, so that a 10-minute run sees ten sweeps; a
// shorter run scales both down to a tenth of itself.
func pruneTimes(d time.Duration) (retention, period, sample time.Duration) {
	retention = min(time.Minute, d/10)
	return retention, retention, max(d/200, 20*time.Millisecond)
}

// pruneSample is one count of the work table's rows.
type pruneSample struct {
	at   time.Duration // since the producer started
	rows int64
}

// runPrune finishes PruneRate work items a second for Options.Duration
// through the store's queue as the service does: a producer enqueues them
// (core.Enqueue in a transaction, a few at a time, on a schedule) and a
// core.Worker claims them, runs a no-op handler and completes them in its
// batches. Meanwhile the store's Sweep runs every sweep period, as the
// scheduler's sweep job does, with a work retention short enough to matter
// within the run (see pruneTimes). The service's setting cannot go under an
// hour (store.MinWorkRetention); the figure calls Sweep with that minimum
// and a Now moved forward by the difference, so its cutoff is retention
// before the real time. A sampler counts the table's rows (every state)
// all along.
//
// The value is the most rows counted in the run's last half; the baseline
// is the steady state a sweep that keeps up gives: the rate times the
// retention plus one sweep period (the rows finished since the last sweep).
// Extra has the last half's growth: the slope of a line fitted to its
// samples, and the difference of the maxima of its two quarters.
func runPrune(ctx context.Context, e *env) (*Result, error) {
	d := e.opts.Duration
	retention, period, every := pruneTimes(d)
	count, closeCount, err := workRowCounter(e)
	if err != nil {
		return nil, err
	}
	defer closeCount()

	var finished atomic.Int64
	handlers := core.NewHandlers()
	core.AddHandler(handlers, func(context.Context, *store.WorkItem, pruneArgs) error {
		finished.Add(1)
		return nil
	})
	w, err := core.NewWorker(core.WorkerOptions{
		Store: e.st, WorkerID: "bench-prune-" + randomSuffix(), Handlers: handlers,
		Concurrency: e.opts.Workers, LeaseTTL: time.Minute, Logger: e.opts.Logger,
	})
	if err != nil {
		return nil, err
	}
	if err := w.Start(ctx); err != nil {
		return nil, fmt.Errorf("starting the prune worker: %w", err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = w.Stop(context.WithoutCancel(ctx))
		}
	}()

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		samples  []pruneSample
		sweeps   []time.Duration
		swept    int64
		enqueued int64
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
			cancel()
		}
	}
	// The producer: every tick, the items due by now at PruneRate.
	wg.Go(func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-tick.C:
			}
			elapsed := time.Since(start)
			if elapsed > d {
				elapsed = d
			}
			due := int64(elapsed.Seconds()*PruneRate) - enqueued
			if due > 0 {
				err := e.st.InTx(runCtx, func(q store.Queries) error {
					for range due {
						if _, err := core.Enqueue(runCtx, q, pruneArgs{}, nil); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					if runCtx.Err() == nil {
						fail(fmt.Errorf("enqueueing: %w", err))
					}
					return
				}
				enqueued += due
			}
			if elapsed == d {
				return
			}
		}
	})
	// The sweep, on its schedule.
	wg.Go(func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-tick.C:
			}
			t := time.Now()
			res, err := e.st.Sweep(runCtx, &store.SweepParams{Now: t.Add(store.MinWorkRetention - retention), WorkRetention: store.MinWorkRetention})
			if err != nil {
				if runCtx.Err() == nil {
					fail(fmt.Errorf("sweeping: %w", err))
				}
				return
			}
			mu.Lock()
			sweeps, swept = append(sweeps, time.Since(t)), swept+int64(res.Work)
			mu.Unlock()
		}
	})
	// The sampler.
	wg.Go(func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			n, err := count(runCtx)
			if err != nil {
				if runCtx.Err() == nil {
					fail(fmt.Errorf("counting the work table: %w", err))
				}
				return
			}
			mu.Lock()
			samples = append(samples, pruneSample{at: time.Since(start), rows: n})
			mu.Unlock()
			select {
			case <-runCtx.Done():
				return
			case <-tick.C:
			}
		}
	})
	select {
	case <-ctx.Done():
	case <-runCtx.Done():
	case <-time.After(d):
	}
	cancel()
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	elapsed := time.Since(start)
	stopped = true
	if err := w.Stop(ctx); err != nil {
		return nil, fmt.Errorf("stopping the prune worker: %w", err)
	}
	backlog, err := waitingWork(ctx, e.st)
	if err != nil {
		return nil, err
	}
	return pruneResult(samples, d, retention, period, pruneRun{
		enqueued: enqueued, finished: finished.Load(), elapsed: elapsed, backlog: backlog, sweeps: sweeps, swept: swept,
	})
}

// pruneRun is what the prune figure counted besides its samples.
type pruneRun struct {
	enqueued, finished, backlog, swept int64
	elapsed                            time.Duration
	sweeps                             []time.Duration
}

// pruneResult turns the samples of a run of d into the figure. The table
// saws: it grows by a sweep period's items, then the sweep takes them.
// Growth is measured on the teeth: the most rows of each sweep period in
// the last half, a line fitted to them (rows a minute) and the last tooth
// less the first.
func pruneResult(samples []pruneSample, d, retention, period time.Duration, run pruneRun) (*Result, error) {
	var half, first []pruneSample
	var peaks []pruneSample // the highest sample of each period of the last half
	for _, s := range samples {
		if s.at < d/2 {
			first = append(first, s)
			continue
		}
		half = append(half, s)
		at := s.at.Truncate(period) // the period it is in
		if n := len(peaks); n > 0 && peaks[n-1].at == at {
			peaks[n-1].rows = max(peaks[n-1].rows, s.rows)
		} else if at+period <= d { // a whole period
			peaks = append(peaks, pruneSample{at: at, rows: s.rows})
		}
	}
	if len(peaks) < 2 {
		return nil, fmt.Errorf("the work table was sampled %d times, in %d whole sweep periods of the run's last half; want 2 at least", len(samples), len(peaks))
	}
	maxRows := func(ss []pruneSample) int64 {
		m := int64(0)
		for _, s := range ss {
			m = max(m, s.rows)
		}
		return m
	}
	expected := PruneRate * (retention + period).Seconds()
	sweepMax := time.Duration(0)
	for _, s := range run.sweeps {
		sweepMax = max(sweepMax, s)
	}
	return &Result{
		Metric: "most rows, last half", Value: float64(maxRows(half)), Unit: "rows",
		Baseline: "rate x (retention + sweep period)", BaselineValue: expected,
		Extra: map[string]float64{
			"last_half_peaks":              float64(len(peaks)),
			"last_half_peak_slope_per_min": slope(peaks) * 60,
			"last_half_growth_rows":        float64(peaks[len(peaks)-1].rows - peaks[0].rows),
			"first_half_max_rows":          float64(maxRows(first)),
			"finished_per_s":               float64(run.finished) / run.elapsed.Seconds(),
			"enqueued":                     float64(run.enqueued),
			"backlog_at_end":               float64(run.backlog),
			"sweeps":                       float64(len(run.sweeps)),
			"sweep_max_ms":                 ms(sweepMax),
			"swept":                        float64(run.swept),
			"retention_s":                  retention.Seconds(),
			"sweep_period_s":               period.Seconds(),
			"duration_s":                   d.Seconds(),
			"samples":                      float64(len(samples)),
		},
	}, nil
}

// slope is the least-squares slope of rows over time, in rows/s.
func slope(ss []pruneSample) float64 {
	if len(ss) < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for _, s := range ss {
		x, y := s.at.Seconds(), float64(s.rows)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	n := float64(len(ss))
	den := n*sxx - sx*sx
	if den == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / den
}

// waitingWork counts the items available or running.
func waitingWork(ctx context.Context, st store.Store) (int64, error) {
	counts, err := st.WorkCount(ctx)
	if err != nil {
		return 0, err
	}
	n := int64(0)
	for _, c := range counts {
		if c.State == store.WorkAvailable || c.State == store.WorkRunning {
			n += c.Count
		}
	}
	return n, nil
}

// workRowCounter returns a func counting every row of e's work table, on a
// connection of its own: Postgres's pool, or a read-only connection to the
// SQLite file, so the count never waits behind the store's one writer.
func workRowCounter(e *env) (func(context.Context) (int64, error), func(), error) {
	switch s := e.st.(type) {
	case *postgres.Store:
		return func(ctx context.Context) (int64, error) {
			var n int64
			err := s.Pool().QueryRow(ctx, "SELECT count(*) FROM work_items").Scan(&n)
			return n, err
		}, func() {}, nil
	}
	t, err := dial.Parse(e.url)
	if err != nil {
		return nil, nil, err
	}
	if t.Driver != "sqlite" {
		return nil, nil, errors.New("no row count for this store")
	}
	db, err := sql.Open("sqlite", "file:"+t.Path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, nil, fmt.Errorf("opening %s to count its work: %w", t.Path, err)
	}
	db.SetMaxOpenConns(1)
	return func(ctx context.Context) (int64, error) {
		var n int64
		err := db.QueryRowContext(ctx, "SELECT count(*) FROM work").Scan(&n)
		return n, err
	}, func() { db.Close() }, nil
}
