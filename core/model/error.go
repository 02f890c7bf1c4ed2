package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/switchboardhq/switchboard/core/redact"
)

// ErrStreamIncomplete means a response stream ended before the provider's
// end-of-message marker: the connection was dropped cleanly in the middle.
// It is retryable.
var ErrStreamIncomplete = errors.New("response stream ended before the message was complete")

// ErrStreamStalled means the provider sent nothing for Options.IdleTimeout
// in the middle of a response. The connection is treated as dropped: the
// attempt is abandoned and retried.
var ErrStreamStalled = errors.New("response stream stalled")

// Error is what a backend returns when a model call fails. Its message has
// been redacted; Err keeps the original chain for errors.Is and errors.As
// (context.Canceled, io.ErrUnexpectedEOF, the SDK's own error type).
type Error struct {
	Provider string
	// Status is the HTTP status of the failure, or the status the provider's
	// in-stream error stands for (Anthropic's overloaded_error is 529); 0 for
	// a dropped connection, a cancelled call or a local failure.
	Status int
	// Retryable says the failure was transient (429, 5xx, 529, a dropped
	// or stalled connection). After Generate returns, the retries are spent; the engine
	// may still reschedule the turn later.
	Retryable bool
	// Err is the redacted cause.
	Err error

	// Type is the provider's error type ("rate_limit_error",
	// "overloaded_error", "invalid_request_error", "server_error"), if any.
	Type string
	// RetryAfter is the wait the provider asked for (Retry-After), if any.
	RetryAfter time.Duration
	// Attempts is how many calls were made before giving up.
	Attempts int
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	b.WriteString(": ")
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("model call failed")
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// detailError gives an SDK error a short, readable message while keeping it
// in the chain.
type detailError struct {
	msg string
	err error
}

func (e *detailError) Error() string { return e.msg }
func (e *detailError) Unwrap() error { return e.err }

// newError builds a redacted *Error. msg, when not empty, replaces the text of
// cause in the message.
func newError(provider string, status int, retryable bool, msg string, cause error) *Error {
	err := cause
	if msg != "" {
		err = &detailError{msg: msg, err: cause}
	}
	if err == nil {
		err = errors.New("model call failed")
	}
	return &Error{Provider: provider, Status: status, Retryable: retryable, Err: redact.Error(err)}
}

// retryableStatus is the HTTP statuses worth another attempt: timeouts, rate
// limits and server-side failures, including Anthropic's 529 (overloaded).
func retryableStatus(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

// statusMessage formats "429 Too Many Requests (rate_limit_error): msg".
func statusMessage(status int, typ, msg string) string {
	var b strings.Builder
	if status > 0 {
		fmt.Fprintf(&b, "%d", status)
		if text := http.StatusText(status); text != "" {
			b.WriteString(" " + text)
		} else if status == 529 {
			b.WriteString(" Overloaded")
		}
	} else {
		b.WriteString("error in stream")
	}
	if typ != "" {
		fmt.Fprintf(&b, " (%s)", typ)
	}
	if msg != "" {
		b.WriteString(": " + msg)
	}
	return b.String()
}

// classifyTransport handles the failures that are not an API error: the
// caller's context, dropped connections, and malformed streams. It returns
// nil when err is none of those.
func classifyTransport(ctx context.Context, provider string, err error) *Error {
	if ctx.Err() != nil {
		// The caller gave up; never retry, and keep context.Canceled in the
		// chain so the engine can tell a cancel from a failure.
		cause := context.Cause(ctx)
		if !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		if cause != nil && !errors.Is(cause, ctx.Err()) {
			err = fmt.Errorf("%w: %w", err, cause)
		}
		return newError(provider, 0, false, "", err)
	}
	if errors.Is(err, ErrStreamStalled) {
		return newError(provider, 0, true, "", err)
	}
	if isDroppedConnection(err) {
		return newError(provider, 0, true, "connection dropped: "+err.Error(), err)
	}
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		// A retry would most likely read the same bytes.
		return newError(provider, 0, false, "malformed JSON in response stream: "+err.Error(), err)
	}
	return nil
}

// isDroppedConnection reports network failures that a fresh request may not
// hit: a stream cut in the middle, a reset, a refused or timed-out dial.
func isDroppedConnection(err error) bool {
	switch {
	case errors.Is(err, ErrStreamIncomplete),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.EPIPE),
		errors.Is(err, net.ErrClosed):
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	// HTTP/2 reports resets and GOAWAYs with unexported types.
	msg := err.Error()
	for _, s := range []string{"connection reset", "broken pipe", "GOAWAY", "stream error", "server closed idle connection", "INTERNAL_ERROR"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// IsRetryable reports whether err is a model failure that a later attempt
// may not hit (rate limit, overload, server error, dropped connection), for
// an engine deciding whether to reschedule a turn once Generate's own
// retries are spent.
func IsRetryable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Retryable
}
