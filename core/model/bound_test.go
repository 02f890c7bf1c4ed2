package model

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/modeltest"
)

// A stream that keeps sending, never idle, is stopped at Options.Timeout on
// every backend: the call fails with ErrTimeout, is not retried, and the
// error says how long the model was given.
func TestTimeoutBoundsASteadyStream(t *testing.T) {
	check := func(t *testing.T, b Backend, requests func() int) {
		t.Helper()
		start := time.Now()
		_, err := b.Generate(context.Background(), userText("take your time"), nil)
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("Generate = %v; want ErrTimeout", err)
		}
		var e *Error
		if !errors.As(err, &e) || e.Retryable {
			t.Fatalf("error %#v; want a *Error that is not retryable", err)
		}
		if !strings.Contains(err.Error(), "longer than 300ms") {
			t.Fatalf("error %q; want the limit named", err)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Fatalf("the call took %s; want it stopped near its 300ms deadline", took)
		}
		if requests != nil {
			if n := requests(); n != 1 {
				t.Fatalf("%d requests; a call stopped at its deadline is not retried", n)
			}
		}
	}
	for _, pc := range httpProviders {
		t.Run(pc.name, func(t *testing.T) {
			b, fake, _ := newBackend(t, pc, func(o *Options) {
				o.Timeout = 300 * time.Millisecond
				o.IdleTimeout = 5 * time.Second
			})
			// A word every 10ms for a minute: never idle, never done.
			fake.Push(modeltest.Reply{Text: strings.Repeat("drip ", 6000), Delay: 10 * time.Millisecond})
			check(t, b, func() int { return len(fake.Requests()) })
		})
	}
	t.Run(ProviderScripted, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "slow.yaml")
		if err := os.WriteFile(path, []byte("chunk_delay: 10ms\nturns:\n  - text: \""+strings.Repeat("drip ", 6000)+"\"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := New(Spec{Provider: ProviderScripted, Model: path}, Options{Timeout: 300 * time.Millisecond, Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		check(t, b, nil)
	})
}

// The caller's own cancellation is not a timeout.
func TestTimeoutLeavesTheCallersCancel(t *testing.T) {
	b, fake, _ := newBackend(t, httpProviders[0], func(o *Options) { o.Timeout = time.Minute })
	block := make(chan struct{})
	defer close(block)
	fake.Push(modeltest.Reply{Text: "half of it", Block: block})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := b.Generate(ctx, userText("hi"), nil)
		done <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); len(fake.Requests()) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the request never reached the fake")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	err := <-done
	if errors.Is(err, ErrTimeout) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Generate = %v; want context.Canceled, not a timeout", err)
	}
}

// A huge answer stops at Options.MaxReplyBytes on both providers: the call
// is cancelled (the fake never sends it all), listeners get the text up to
// the cap and then the note, and the response is that text.
func TestMaxReplyBytesCutsTheReply(t *testing.T) {
	const limit = 8 << 10
	for _, pc := range httpProviders {
		t.Run(pc.name, func(t *testing.T) {
			b, fake, _ := newBackend(t, pc, func(o *Options) { o.MaxReplyBytes = limit })
			delta := strings.Repeat("é", 511) + "\n"                  // 1 KB, two-byte characters
			fake.Push(modeltest.Reply{Text: delta, Repeat: 50 << 10}) // 50 MB
			var whole atomic.Bool
			fake.OnStreamEnd(func() { whole.Store(true) })
			var ev events
			resp, err := b.Generate(context.Background(), userText("write a lot"), ev.emit)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			note := ReplyCutNote(limit)
			if note != "\n\n… [reply cut: longer than 8 KB]" {
				t.Fatalf("note %q", note)
			}
			got := resp.Text()
			if !strings.HasSuffix(got, note) || len(got) > limit+len(note) || len(got) < limit-4+len(note) {
				t.Fatalf("reply of %d bytes ending %q; want the first %d bytes and the note", len(got), tail(got, 40), limit)
			}
			if !strings.HasPrefix(got, delta) || strings.Contains(got, "\uFFFD") {
				t.Fatal("the reply does not start with the model's text, or a character was split")
			}
			if shown := ev.textAfterRestart(); shown != got {
				t.Fatalf("listeners saw %d bytes; want the reply's %d", len(shown), len(got))
			}
			if n := strings.Count(ev.textAfterRestart(), "[reply cut"); n != 1 {
				t.Fatalf("the note was streamed %d times", n)
			}
			if resp.StopReason != StopReplyCut || len(resp.ToolCalls()) != 0 {
				t.Fatalf("stop reason %q with %d tool calls; want %q and none", resp.StopReason, len(resp.ToolCalls()), StopReplyCut)
			}
			if whole.Load() {
				t.Fatal("the whole answer was streamed; want the call cancelled at the cap")
			}
			// What the fake wrote ahead into the connection's buffers
			// counts too; the whole would be 50 MB.
			if sent := fake.TextSent(); sent > 10<<20 {
				t.Fatalf("the fake wrote %d bytes before the call was cancelled", sent)
			}
			if n := len(fake.Requests()); n != 1 {
				t.Fatalf("%d requests; a cut reply is not retried", n)
			}
		})
	}
}

func TestBoundsOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"negative timeout", Options{Timeout: -time.Second}, "Timeout"},
		{"negative reply cap", Options{MaxReplyBytes: -1}, "MaxReplyBytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(Spec{Provider: ProviderScripted, Model: DemoScriptName}, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v; want an error naming %s", err, tc.want)
			}
		})
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
