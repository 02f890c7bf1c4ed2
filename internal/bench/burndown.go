// Package bench holds the measurements `switchboard bench` runs against the
// configured store, outside `go test`: each is a plain function returning
// its figures, so the command and the benchmarks share one implementation.
package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// KindBurnDown is the work kind of the burn-down's items.
const KindBurnDown = "bench_burndown"

// burnDownArgs marks an item with its run, so a run counts only its own
// items (one left by an interrupted run is drained but not counted).
type burnDownArgs struct {
	Run uuid.UUID `json:"run"`
}

func (burnDownArgs) Kind() string { return KindBurnDown }

// BurnDownOptions configures QueueBurnDown.
type BurnDownOptions struct {
	Store store.Store
	// Items is how many items are enqueued before the clock starts
	// (default 10,000).
	Items int
	// Workers is the worker's concurrency: items handled at once (default
	// 100, River's benchmark setting for MaxWorkers).
	Workers int
	// Logger receives the worker's warnings. Default: discard.
	Logger *slog.Logger
}

func (o *BurnDownOptions) validate() error {
	switch {
	case o.Store == nil:
		return errors.New("bench: BurnDownOptions.Store is required")
	case o.Items < 1:
		return fmt.Errorf("bench: BurnDownOptions.Items %d must be at least 1", o.Items)
	case o.Workers < 1:
		return fmt.Errorf("bench: BurnDownOptions.Workers %d must be at least 1", o.Workers)
	}
	return nil
}

// BurnDownResult is what a burn-down measured.
type BurnDownResult struct {
	Items   int
	Workers int
	// Elapsed runs from the worker's start to the commit of the last
	// completion.
	Elapsed time.Duration
}

// PerSecond is the throughput: items completed per second.
func (r *BurnDownResult) PerSecond() float64 { return float64(r.Items) / r.Elapsed.Seconds() }

// QueueBurnDown is the queue's burn-down, measured as River's is: Items
// items with an empty handler are enqueued first, then a core.Worker with
// Workers slots is started and timed until every item was claimed, run and
// its completion committed. It is the real worker (batch claims, the batch
// completer, wake-ups and polling), so the figure is what the queue itself
// costs per item, with nothing of a turn in it.
func QueueBurnDown(ctx context.Context, opts BurnDownOptions) (*BurnDownResult, error) {
	if opts.Items == 0 {
		opts.Items = 10_000
	}
	if opts.Workers == 0 {
		opts.Workers = 100
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	run := uuid.New()
	const batch = 1000
	for start := 0; start < opts.Items; start += batch {
		err := opts.Store.InTx(ctx, func(q store.Queries) error {
			for range min(batch, opts.Items-start) {
				if _, err := core.Enqueue(ctx, q, burnDownArgs{Run: run}, nil); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("enqueueing the burn-down's items: %w", err)
		}
	}

	var ran atomic.Int64
	all := make(chan struct{})
	handlers := core.NewHandlers()
	core.AddHandler(handlers, func(_ context.Context, _ *store.WorkItem, a burnDownArgs) error {
		if a.Run == run && ran.Add(1) == int64(opts.Items) {
			close(all)
		}
		return nil
	})
	w, err := core.NewWorker(core.WorkerOptions{
		Store: opts.Store, WorkerID: "bench-" + run.String(), Handlers: handlers,
		Concurrency: opts.Workers, LeaseTTL: time.Minute, Logger: opts.Logger,
	})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := w.Start(ctx); err != nil {
		return nil, fmt.Errorf("starting the burn-down's worker: %w", err)
	}
	select {
	case <-all:
	case <-ctx.Done():
		_ = w.Stop(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("burning down %d items: %d ran before: %w", opts.Items, ran.Load(), context.Cause(ctx))
	}
	// Stop returns once every handler returned and its completion
	// committed: the last item is done when it returns.
	if err := w.Stop(ctx); err != nil {
		return nil, fmt.Errorf("stopping the burn-down's worker: %w", err)
	}
	return &BurnDownResult{Items: opts.Items, Workers: opts.Workers, Elapsed: time.Since(start)}, nil
}
