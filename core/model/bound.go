package model

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds of one model call, whatever the backend (Options.Timeout,
// Options.MaxReplyBytes).
const (
	// DefaultTimeout is the longest one model call may take, its retries
	// included. The idle timeout alone does not bound a call: a stream
	// that sends a byte a second is never idle.
	DefaultTimeout = 10 * time.Minute
	// DefaultMaxReplyBytes is the most one reply may stream (text, thinking
	// and tool call arguments together) before the call is cancelled and
	// the reply cut.
	DefaultMaxReplyBytes = 256 << 10
)

// ErrTimeout means a model call ran past Options.Timeout and was stopped.
// It is not retried: the next attempt would get no more time.
var ErrTimeout = errors.New("model call ran past its deadline")

// TimeoutError is the cause of a call stopped at Options.Timeout; it is
// ErrTimeout for errors.Is.
type TimeoutError struct {
	Limit time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("the model took longer than %s to answer", e.Limit)
}

// Is makes a TimeoutError match ErrTimeout.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// errReplyCut cancels a call whose reply passed Options.MaxReplyBytes.
var errReplyCut = errors.New("reply longer than its limit")

// StopReplyCut is the stop reason of a reply cut at Options.MaxReplyBytes.
const StopReplyCut = "reply_cut"

// ReplyCutNote is what ends a reply cut at limit bytes.
func ReplyCutNote(limit int) string {
	return "\n\n… [reply cut: longer than " + byteSize(limit) + "]"
}

// byteSize writes n as people read it: 256 KB, 1 MB, 1500 bytes.
func byteSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// bounded holds every backend to Options.Timeout and
// Options.MaxReplyBytes, so the bounds do not depend on each provider's
// client or program.
type bounded struct {
	Backend
	timeout  time.Duration
	maxBytes int
}

func bound(b Backend, o Options) Backend {
	return &bounded{Backend: b, timeout: o.Timeout, maxBytes: o.MaxReplyBytes}
}

// Generate runs the call under its deadline and watches the size of what
// it streams. Past the cap the call is cancelled at once (nothing more is
// read, so memory stays within the cap) and the reply is what came until
// then, cut at the cap, with ReplyCutNote: a cut reply is an answer, not a
// failure, and its tool calls, unfinished, are dropped.
func (b *bounded) Generate(ctx context.Context, req *Request, emit func(Event)) (*Response, error) {
	parent := ctx
	ctx, cancelTimeout := context.WithTimeoutCause(ctx, b.timeout, &TimeoutError{Limit: b.timeout})
	defer cancelTimeout()
	ctx, cut := context.WithCancelCause(ctx)
	defer cut(nil)
	if emit == nil {
		emit = func(Event) {}
	}
	var (
		size   int             // bytes streamed by this attempt
		text   strings.Builder // text streamed by this attempt, at most maxBytes
		cutOff bool
	)
	resp, err := b.Backend.Generate(ctx, req, func(ev Event) {
		if cutOff {
			return
		}
		switch ev.Kind {
		case EventRestart:
			size = 0
			text.Reset()
		case EventTextDelta, EventThinkingDelta, EventToolCallDelta:
			n := len(ev.Text) + len(ev.ArgsDelta)
			if size+n <= b.maxBytes {
				size += n
				if ev.Kind == EventTextDelta {
					text.WriteString(ev.Text)
				}
				break
			}
			cutOff = true
			cut(errReplyCut)
			if ev.Kind == EventTextDelta {
				keep := ev.Text[:runeStart(ev.Text, b.maxBytes-size)]
				text.WriteString(keep)
				if keep != "" {
					emit(Event{Kind: EventTextDelta, Text: keep})
				}
			}
			note := ReplyCutNote(b.maxBytes)
			text.WriteString(note)
			emit(Event{Kind: EventTextDelta, Text: note})
			return
		}
		emit(ev)
	})
	if cutOff && parent.Err() == nil {
		return &Response{
			Parts:      []Part{{Kind: PartText, Text: text.String()}},
			StopReason: StopReplyCut,
			Model:      req.Model,
		}, nil
	}
	if err != nil && parent.Err() == nil {
		var te *TimeoutError
		if errors.As(context.Cause(ctx), &te) {
			attempts := 1
			var e *Error
			if errors.As(err, &e) && e.Attempts > 0 {
				attempts = e.Attempts
			}
			out := newError(b.Provider(), 0, false, "", te)
			out.Attempts = attempts
			return nil, out
		}
	}
	return resp, err
}

// runeStart is the largest i <= n at which s can be cut without splitting
// a character.
func runeStart(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	if n <= 0 {
		return 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}
