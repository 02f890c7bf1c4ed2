package model

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/modeltest"
)

// TestStalledStreamIsRetried: a stream that sends one chunk and then goes
// silent fails after the idle timeout as a dropped connection, so the retry
// policy applies and listeners are told to discard the partial text.
func TestStalledStreamIsRetried(t *testing.T) {
	const idle = 200 * time.Millisecond
	// Without the idle timeout a stalled stream would hang until this
	// deadline; with it, each attempt ends after about idle.
	ctx := func(t *testing.T) context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		t.Cleanup(cancel)
		return ctx
	}
	for _, pc := range httpProviders {
		t.Run(pc.name, func(t *testing.T) {
			t.Run("retry succeeds", func(t *testing.T) {
				b, fake, sl := newBackend(t, pc, func(o *Options) { o.IdleTimeout = idle })
				const text = "The answer after a stall."
				fake.Push(modeltest.Reply{Text: "Half an answer that never ends", Stall: true}, modeltest.Reply{Text: text})
				var ev events
				resp, err := b.Generate(ctx(t), userText("hi"), ev.emit)
				if err != nil {
					t.Fatalf("Generate: %v, want the retry to succeed", err)
				}
				if resp.Text() != text || ev.textAfterRestart() != text {
					t.Errorf("response %q, shown %q; want %q", resp.Text(), ev.textAfterRestart(), text)
				}
				if n := ev.count(EventRestart); n != 1 {
					t.Errorf("%d restart events, want 1 (the stalled attempt had streamed text)", n)
				}
				if n := len(fake.Requests()); n != 2 || len(sl.waits()) != 1 {
					t.Errorf("made %d requests and %d waits, want 2 and 1", n, len(sl.waits()))
				}
			})

			t.Run("every attempt stalls", func(t *testing.T) {
				b, fake, _ := newBackend(t, pc, func(o *Options) { o.IdleTimeout = idle })
				stall := modeltest.Reply{Text: "stuck stuck stuck", Stall: true}
				fake.Push(stall, stall, stall)
				_, err := b.Generate(ctx(t), userText("hi"), nil)
				var e *Error
				if !errors.As(err, &e) || !errors.Is(err, ErrStreamStalled) {
					t.Fatalf("Generate error = %v, want an *Error wrapping ErrStreamStalled", err)
				}
				if !e.Retryable || e.Attempts != DefaultMaxAttempts || len(fake.Requests()) != DefaultMaxAttempts {
					t.Errorf("retryable %v after %d attempts and %d requests, want retryable after %d", e.Retryable, e.Attempts, len(fake.Requests()), DefaultMaxAttempts)
				}
				t.Logf("error: %v", err)
				if msg := err.Error(); !strings.Contains(msg, "stalled") || !strings.Contains(msg, idle.String()) {
					t.Errorf("error %q, want it to say the stream stalled for %s", msg, idle)
				}
			})

			t.Run("a slow consumer is not a stall", func(t *testing.T) {
				b, fake, _ := newBackend(t, pc, func(o *Options) { o.IdleTimeout = idle })
				const text = "every word arrives at once but is read slowly"
				fake.Push(modeltest.Reply{Text: text})
				first := true
				slow := func(ev Event) {
					if ev.Kind == EventTextDelta && first {
						// A listener busy for longer than the timeout:
						// the time is spent outside any read from the
						// network, so the idle clock is not running.
						first = false
						<-time.After(2 * idle)
					}
				}
				resp, err := b.Generate(ctx(t), userText("hi"), slow)
				if err != nil || resp.Text() != text {
					t.Fatalf("Generate = %v, %v; want %q with no stall", resp, err, text)
				}
			})
		})
	}
}

func TestIdleTimeoutValidation(t *testing.T) {
	_, err := New(Spec{Provider: ProviderOpenAI, Model: "m"}, Options{APIKey: "k", IdleTimeout: -time.Second})
	if err == nil || !strings.Contains(err.Error(), "IdleTimeout") {
		t.Fatalf("New with a negative IdleTimeout: %v, want an error naming IdleTimeout", err)
	}
}
