// Package retry runs a store operation again after a transient fault, with
// bounded exponential backoff and jitter. Both drivers use it at their
// boundary, so a fault shorter than the budget never reaches a caller.
package retry

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"
)

// DefaultFor is the default budget: faults shorter than this (a failover, a
// server restart, connections killed by an operator) are invisible.
const DefaultFor = 30 * time.Second

const (
	firstWait = 10 * time.Millisecond
	maxWait   = time.Second
)

// Policy says how long to keep trying and where to log.
type Policy struct {
	// For is the total time to keep retrying, measured from the first
	// failure; 0 or less means never retry.
	For    time.Duration
	Logger *slog.Logger
}

// Do runs fn until it succeeds, fails with an error retryable rejects, the
// budget runs out or ctx ends; it returns fn's last error. op names the
// operation in the log. Waits double from 10ms up to 1s, each a random
// point in its upper half, so clients that failed together do not return
// together.
func Do(ctx context.Context, p Policy, op string, retryable func(error) bool, fn func() error) error {
	err := fn()
	if err == nil || p.For <= 0 || !retryable(err) {
		return err
	}
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	deadline := time.Now().Add(p.For)
	wait := firstWait
	for attempt := 1; ; attempt++ {
		if ctx.Err() != nil {
			return err
		}
		d := wait/2 + rand.N(wait/2+1)
		if time.Now().Add(d).After(deadline) {
			p.Logger.WarnContext(ctx, "store: giving up retrying after a transient fault",
				"op", op, "attempts", attempt, "retry_for", p.For, "err", err)
			return err
		}
		level := slog.LevelDebug
		if attempt == 1 {
			level = slog.LevelWarn
		}
		p.Logger.Log(ctx, level, "store: transient fault, retrying",
			"op", op, "attempt", attempt, "wait", d, "err", err)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, maxWait)
		err = fn()
		if err == nil || !retryable(err) {
			return err
		}
	}
}
