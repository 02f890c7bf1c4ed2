package model

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// DefaultIdleTimeout is how long a response may send nothing before the
// attempt fails as a dropped connection (Options.IdleTimeout). Both
// providers send keep-alive events ("ping", SSE comments) well inside it
// while a model thinks.
const DefaultIdleTimeout = 60 * time.Second

// idleClient returns a copy of c whose response bodies fail with
// ErrStreamStalled when no byte arrives for timeout. Without it, a stream
// that goes silent mid-answer holds the turn until the server or the
// caller's deadline gives up, on every attempt.
//
// The clock runs only while a Read waits for the network, so a slow
// consumer of the stream never counts as a stall. Waiting for the response
// headers is bounded by the transport (responseHeaderTimeout), not here.
func idleClient(c *http.Client, timeout time.Duration) *http.Client {
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	cp := *c
	cp.Transport = &idleTransport{next: next, timeout: timeout}
	return &cp
}

type idleTransport struct {
	next    http.RoundTripper
	timeout time.Duration
}

func (t *idleTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// Cancelling this request's own context is what interrupts a Read
	// blocked on a silent connection; the caller's context is untouched.
	ctx, cancel := context.WithCancel(req.Context())
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	b := &idleBody{body: resp.Body, timeout: t.timeout, cancel: cancel}
	b.timer = time.AfterFunc(t.timeout, b.expire)
	b.timer.Stop()
	resp.Body = b
	return resp, nil
}

// idleBody is a response body whose Reads fail once one of them has waited
// timeout for data.
type idleBody struct {
	body    io.ReadCloser
	timeout time.Duration
	cancel  context.CancelFunc
	timer   *time.Timer
	stalled atomic.Bool
}

func (b *idleBody) expire() {
	b.stalled.Store(true)
	b.cancel()
}

func (b *idleBody) Read(p []byte) (int, error) {
	if b.stalled.Load() {
		return 0, b.stallError()
	}
	b.timer.Reset(b.timeout)
	n, err := b.body.Read(p)
	b.timer.Stop()
	if b.stalled.Load() {
		// Whatever the cancelled read reported, the cause is the silence.
		return n, b.stallError()
	}
	return n, err
}

func (b *idleBody) stallError() error {
	return fmt.Errorf("%w: nothing received for %s", ErrStreamStalled, b.timeout)
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	err := b.body.Close()
	b.cancel()
	return err
}
