package model

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy bounds the retries of one model call. The zero value means
// the defaults: 3 attempts, 500ms base delay, 8s cap, Retry-After honoured
// up to 30s.
type RetryPolicy struct {
	// MaxAttempts is the number of calls in total, the first included.
	MaxAttempts int
	// BaseDelay is the wait before the first retry; it doubles for each
	// further retry, up to MaxDelay, with jitter.
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// MaxRetryAfter caps the wait a provider asks for with Retry-After, so a
	// turn does not hang for minutes on a rate limit.
	MaxRetryAfter time.Duration
}

// Retry policy defaults and limits.
const (
	DefaultMaxAttempts   = 3
	DefaultBaseDelay     = 500 * time.Millisecond
	DefaultMaxDelay      = 8 * time.Second
	DefaultMaxRetryAfter = 30 * time.Second
	// maxAttemptsLimit keeps a misconfigured policy from retrying for ever.
	maxAttemptsLimit = 10
)

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts == 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.BaseDelay == 0 {
		p.BaseDelay = DefaultBaseDelay
	}
	if p.MaxDelay == 0 {
		p.MaxDelay = DefaultMaxDelay
	}
	if p.MaxRetryAfter == 0 {
		p.MaxRetryAfter = DefaultMaxRetryAfter
	}
	return p
}

func (p RetryPolicy) validate() error {
	switch {
	case p.MaxAttempts < 1 || p.MaxAttempts > maxAttemptsLimit:
		return fmt.Errorf("Retry.MaxAttempts must be between 1 and %d, got %d", maxAttemptsLimit, p.MaxAttempts)
	case p.BaseDelay < 0:
		return fmt.Errorf("Retry.BaseDelay must not be negative, got %s", p.BaseDelay)
	case p.MaxDelay < p.BaseDelay:
		return fmt.Errorf("Retry.MaxDelay (%s) must not be less than Retry.BaseDelay (%s)", p.MaxDelay, p.BaseDelay)
	case p.MaxRetryAfter < 0:
		return fmt.Errorf("Retry.MaxRetryAfter must not be negative, got %s", p.MaxRetryAfter)
	}
	return nil
}

// backoff is the wait before retry number n (1 for the first retry):
// BaseDelay doubled n-1 times, capped at MaxDelay, then "equal jitter": a
// random point in its upper half, so concurrent callers spread out but none
// retries at once.
func (p RetryPolicy) backoff(n int, rnd func() float64) time.Duration {
	d := p.BaseDelay
	for i := 1; i < n && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	half := d / 2
	return half + time.Duration(rnd()*float64(d-half))
}

// delay picks the wait before retry n after failure e: the provider's
// Retry-After when it gave one (capped), else the jittered backoff.
func (p RetryPolicy) delay(n int, e *Error, rnd func() float64) time.Duration {
	if e.RetryAfter > 0 {
		return min(e.RetryAfter, p.MaxRetryAfter)
	}
	return p.backoff(n, rnd)
}

// parseRetryAfter reads the wait a response asks for: retry-after-ms (sent
// by both providers), else Retry-After in seconds or as an HTTP date.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// sleepContext waits for d or until ctx is done.
func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// caller runs one model call through the retry policy. Every backend uses
// it, so retries, restarts, logging and redaction behave the same whatever
// the provider.
type caller struct {
	provider string
	policy   RetryPolicy
	log      *slog.Logger
	sleep    func(ctx context.Context, d time.Duration) error
	rnd      func() float64
	// classify turns a failed attempt into an *Error. It is only called with
	// a non-nil error.
	classify func(ctx context.Context, err error) *Error
}

func newCaller(provider string, o Options, classify func(context.Context, error) *Error) caller {
	return caller{
		provider: provider,
		policy:   o.Retry,
		log:      o.Logger,
		sleep:    o.Sleep,
		rnd:      rand.Float64,
		classify: classify,
	}
}

// attemptFunc makes one call, streaming through emit.
type attemptFunc func(ctx context.Context, emit func(Event)) (*Response, error)

// do calls attempt until it succeeds, fails for good, or the policy's
// attempts are spent. emit may be nil.
func (c *caller) do(ctx context.Context, emit func(Event), attempt attemptFunc) (*Response, error) {
	if emit == nil {
		emit = func(Event) {}
	}
	for n := 1; ; n++ {
		streamed := false
		counting := func(ev Event) {
			streamed = true
			emit(ev)
		}
		resp, err := attempt(ctx, counting)
		if err == nil {
			return resp, nil
		}
		e := c.toError(ctx, err)
		if !e.Retryable || n >= c.policy.MaxAttempts || ctx.Err() != nil {
			e.Attempts = n
			level := slog.LevelWarn
			if ctx.Err() != nil {
				level = slog.LevelDebug // the caller gave up; nothing failed
			}
			c.log.Log(ctx, level, "model call failed",
				"provider", c.provider, "attempts", n, "status", e.Status,
				"retryable", e.Retryable, "error", e.Error())
			return nil, e
		}
		wait := c.policy.delay(n, e, c.rnd)
		c.log.WarnContext(ctx, "model call failed, retrying",
			"provider", c.provider, "attempt", n, "max_attempts", c.policy.MaxAttempts,
			"status", e.Status, "retry_after", e.RetryAfter, "wait", wait,
			"partial_output", streamed, "error", e.Error())
		if streamed {
			emit(Event{Kind: EventRestart})
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			// Keep the provider failure readable, and the cancellation in
			// the chain for errors.Is.
			return nil, &Error{
				Provider: c.provider,
				Status:   e.Status,
				Err:      fmt.Errorf("waiting to retry after %w: %w", e.Err, serr),
				Type:     e.Type,
				Attempts: n,
			}
		}
	}
}

func (c *caller) toError(ctx context.Context, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		cp := *e
		if cp.Provider == "" {
			cp.Provider = c.provider
		}
		return &cp
	}
	if c.classify != nil {
		if e := c.classify(ctx, err); e != nil {
			return e
		}
	}
	return newError(c.provider, 0, false, "", err)
}
