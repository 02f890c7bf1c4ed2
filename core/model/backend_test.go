package model

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/modeltest"
)

// TestGenerateStreams drives each HTTP backend, through its official SDK,
// against the provider's fake for the replies a turn sees.
func TestGenerateStreams(t *testing.T) {
	for _, pc := range httpProviders {
		t.Run(pc.name, func(t *testing.T) {
			t.Run("plain text", func(t *testing.T) {
				b, fake, sl := newBackend(t, pc)
				const text = "Hello there, how can I help you today?"
				fake.Push(modeltest.Reply{Text: text, Usage: &modeltest.Usage{InputTokens: 120, OutputTokens: 9}})
				var ev events
				resp, err := b.Generate(context.Background(), userText("hi"), ev.emit)
				if err != nil {
					t.Fatalf("Generate: %v", err)
				}
				if got := resp.Text(); got != text {
					t.Errorf("response text = %q, want %q", got, text)
				}
				if n := ev.count(EventTextDelta); n < 3 {
					t.Errorf("got %d text deltas, want the text streamed in several (>= 3)", n)
				}
				if got := ev.textAfterRestart(); got != text {
					t.Errorf("streamed text = %q, want %q", got, text)
				}
				if resp.StopReason != StopEndTurn {
					t.Errorf("stop reason = %q, want %q", resp.StopReason, StopEndTurn)
				}
				if resp.Usage.InputTokens != 120 || resp.Usage.OutputTokens != 9 {
					t.Errorf("usage = %+v, want input 120, output 9", resp.Usage)
				}
				if resp.Model != pc.model {
					t.Errorf("model = %q, want %q", resp.Model, pc.model)
				}
				kinds := ev.kinds()
				if len(kinds) < 2 || kinds[len(kinds)-2] != EventUsage || kinds[len(kinds)-1] != EventStop {
					t.Errorf("events end with %v, want ... usage, stop", kinds)
				}
				if len(fake.Requests()) != 1 || len(sl.waits()) != 0 {
					t.Errorf("made %d requests and %d waits, want 1 and 0", len(fake.Requests()), len(sl.waits()))
				}
			})

			t.Run("one tool call streamed in pieces", func(t *testing.T) {
				b, fake, _ := newBackend(t, pc)
				const input = `{"question":"Which colour?","choices":["Blue","Green","Orange"]}`
				fake.Push(modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "call_1", Name: "ask_user", Input: input}}})
				var ev events
				resp, err := b.Generate(context.Background(), userText("ask me"), ev.emit)
				if err != nil {
					t.Fatalf("Generate: %v", err)
				}
				if resp.StopReason != StopToolUse {
					t.Errorf("stop reason = %q, want %q", resp.StopReason, StopToolUse)
				}
				calls := resp.ToolCalls()
				if len(calls) != 1 || calls[0].CallID != "call_1" || calls[0].ToolName != "ask_user" {
					t.Fatalf("tool calls = %+v, want one ask_user call_1", calls)
				}
				if !jsonEqual(t, string(calls[0].Input), input) {
					t.Errorf("input = %s, want %s", calls[0].Input, input)
				}
				var args strings.Builder
				var start, end int
				for _, e := range ev {
					switch e.Kind {
					case EventToolCallStart:
						start++
						if e.CallID != "call_1" || e.ToolName != "ask_user" {
							t.Errorf("start event %+v, want call_1 ask_user", e)
						}
					case EventToolCallDelta:
						if start != 1 || end != 0 {
							t.Errorf("argument delta outside start/end")
						}
						args.WriteString(e.ArgsDelta)
					case EventToolCallEnd:
						end++
						if !jsonEqual(t, string(e.Input), input) {
							t.Errorf("end event input = %s, want %s", e.Input, input)
						}
					}
				}
				if start != 1 || end != 1 || ev.count(EventToolCallDelta) < 3 {
					t.Errorf("got %d starts, %d deltas, %d ends; want 1, >=3, 1", start, ev.count(EventToolCallDelta), end)
				}
				if args.String() != input {
					t.Errorf("argument deltas join to %q, want %q", args.String(), input)
				}
			})

			t.Run("text then several tool calls", func(t *testing.T) {
				b, fake, _ := newBackend(t, pc)
				fake.Push(modeltest.Reply{
					Text: "Let me check both.",
					ToolCalls: []modeltest.ToolCall{
						{ID: "c1", Name: "get_weather", Input: `{"city":"Paris"}`},
						{ID: "c2", Name: "get_weather", Input: `{"city":"Berlin","units":"metric"}`},
						{ID: "c3", Name: "list_events"},
					},
				})
				resp, err := b.Generate(context.Background(), userText("weather?"), nil)
				if err != nil {
					t.Fatalf("Generate: %v", err)
				}
				want := []Part{
					{Kind: PartText, Text: "Let me check both."},
					{Kind: PartToolCall, CallID: "c1", ToolName: "get_weather", Input: []byte(`{"city":"Paris"}`)},
					{Kind: PartToolCall, CallID: "c2", ToolName: "get_weather", Input: []byte(`{"city":"Berlin","units":"metric"}`)},
					{Kind: PartToolCall, CallID: "c3", ToolName: "list_events", Input: []byte(`{}`)},
				}
				if len(resp.Parts) != len(want) {
					t.Fatalf("parts = %+v, want %d parts", resp.Parts, len(want))
				}
				for i, w := range want {
					g := resp.Parts[i]
					if g.Kind != w.Kind || g.Text != w.Text || g.CallID != w.CallID || g.ToolName != w.ToolName {
						t.Errorf("part %d = %+v, want %+v", i, g, w)
					}
					if w.Input != nil && !jsonEqual(t, string(g.Input), string(w.Input)) {
						t.Errorf("part %d input = %s, want %s", i, g.Input, w.Input)
					}
				}
			})

			t.Run("429 with Retry-After is waited out", func(t *testing.T) {
				b, fake, sl := newBackend(t, pc)
				fake.Push(
					modeltest.Reply{Status: 429, RetryAfter: "2", ErrorMessage: "rate limited"},
					modeltest.Reply{Text: "ok now"},
				)
				resp, err := b.Generate(context.Background(), userText("hi"), nil)
				if err != nil {
					t.Fatalf("Generate: %v", err)
				}
				if resp.Text() != "ok now" {
					t.Errorf("text = %q, want %q", resp.Text(), "ok now")
				}
				if n := len(fake.Requests()); n != 2 {
					t.Errorf("made %d requests, want exactly 2", n)
				}
				if w := sl.waits(); len(w) != 1 || w[0] != 2*time.Second {
					t.Errorf("waits = %v, want [2s] from Retry-After", w)
				}
			})

			t.Run("Retry-After beyond the cap is capped", func(t *testing.T) {
				b, fake, sl := newBackend(t, pc, func(o *Options) { o.Retry.MaxRetryAfter = 5 * time.Second })
				fake.Push(modeltest.Reply{Status: 429, RetryAfter: "3600"}, modeltest.Reply{Text: "ok"})
				if _, err := b.Generate(context.Background(), userText("hi"), nil); err != nil {
					t.Fatalf("Generate: %v", err)
				}
				if w := sl.waits(); len(w) != 1 || w[0] != 5*time.Second {
					t.Errorf("waits = %v, want [5s] (Retry-After 3600s capped)", w)
				}
			})

			t.Run("Retry-After as an HTTP date", func(t *testing.T) {
				now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
				b, fake, sl := newBackend(t, pc, func(o *Options) { o.Now = func() time.Time { return now } })
				fake.Push(
					modeltest.Reply{Status: 503, RetryAfter: now.Add(4 * time.Second).Format(httpTimeFormat)},
					modeltest.Reply{Text: "ok"},
				)
				if _, err := b.Generate(context.Background(), userText("hi"), nil); err != nil {
					t.Fatalf("Generate: %v", err)
				}
				if w := sl.waits(); len(w) != 1 || w[0] != 4*time.Second {
					t.Errorf("waits = %v, want [4s] until the Retry-After date", w)
				}
			})

			t.Run("500 then success", func(t *testing.T) {
				b, fake, sl := newBackend(t, pc)
				fake.Push(modeltest.Reply{Status: 500}, modeltest.Reply{Text: "recovered"})
				resp, err := b.Generate(context.Background(), userText("hi"), nil)
				if err != nil {
					t.Fatalf("Generate: %v", err)
				}
				if resp.Text() != "recovered" || len(fake.Requests()) != 2 {
					t.Errorf("text %q after %d requests, want %q after 2", resp.Text(), len(fake.Requests()), "recovered")
				}
				w := sl.waits()
				if len(w) != 1 || w[0] < DefaultBaseDelay/2 || w[0] > DefaultBaseDelay {
					t.Errorf("waits = %v, want one backoff in [%s, %s]", w, DefaultBaseDelay/2, DefaultBaseDelay)
				}
			})

			t.Run("three 500s fail after exactly 3 requests", func(t *testing.T) {
				b, fake, sl := newBackend(t, pc)
				fake.Push(modeltest.Reply{Status: 500}, modeltest.Reply{Status: 502}, modeltest.Reply{Status: 500, ErrorMessage: "still broken"})
				_, err := b.Generate(context.Background(), userText("hi"), nil)
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("error = %v (%T), want *model.Error", err, err)
				}
				if e.Status != 500 || !e.Retryable || e.Attempts != 3 || e.Provider != pc.name {
					t.Errorf("error = %+v, want status 500, retryable, 3 attempts, provider %s", e, pc.name)
				}
				if !strings.Contains(err.Error(), "still broken") {
					t.Errorf("error %q does not carry the provider's message", err)
				}
				if n := len(fake.Requests()); n != 3 {
					t.Errorf("made %d requests, want exactly 3", n)
				}
				w := sl.waits()
				if len(w) != 2 || w[1] < DefaultBaseDelay || w[1] > 2*DefaultBaseDelay {
					t.Errorf("waits = %v, want 2 growing backoffs, the second in [%s, %s]", w, DefaultBaseDelay, 2*DefaultBaseDelay)
				}
			})

			t.Run("stream cut in the middle is retried with a restart", func(t *testing.T) {
				b, fake, _ := newBackend(t, pc)
				const text = "The full answer arrives on the second try."
				fake.Push(modeltest.Reply{Text: "The full answer", CutAfter: 4}, modeltest.Reply{Text: text})
				var ev events
				resp, err := b.Generate(context.Background(), userText("hi"), ev.emit)
				if err != nil {
					t.Fatalf("Generate: %v", err)
				}
				if resp.Text() != text {
					t.Errorf("text = %q, want %q", resp.Text(), text)
				}
				if n := ev.count(EventRestart); n != 1 {
					t.Fatalf("got %d restart events, want 1; events: %v", n, ev.kinds())
				}
				// The restart follows partial output and precedes the retry's.
				first := -1
				for i, e := range ev {
					if e.Kind == EventTextDelta && first < 0 {
						first = i
					}
					if e.Kind == EventRestart && (first < 0 || first > i) {
						t.Errorf("restart at %d before any text (first text at %d)", i, first)
					}
				}
				if got := ev.textAfterRestart(); got != text {
					t.Errorf("text shown after the restart = %q, want %q", got, text)
				}
				if n := len(fake.Requests()); n != 2 {
					t.Errorf("made %d requests, want 2", n)
				}
			})

			t.Run("malformed JSON fails at once", func(t *testing.T) {
				b, fake, sl := newBackend(t, pc)
				fake.Push(modeltest.Reply{Text: "some text here", Malformed: true})
				_, err := b.Generate(context.Background(), userText("hi"), nil)
				var e *Error
				if !errors.As(err, &e) || e.Retryable {
					t.Fatalf("error = %v, want a non-retryable *model.Error", err)
				}
				if n := len(fake.Requests()); n != 1 || len(sl.waits()) != 0 {
					t.Errorf("made %d requests and %d waits, want 1 and 0", n, len(sl.waits()))
				}
			})

			t.Run("400 fails at once", func(t *testing.T) {
				b, fake, _ := newBackend(t, pc)
				fake.Push(modeltest.Reply{Status: 400, ErrorMessage: "messages: bad"})
				_, err := b.Generate(context.Background(), userText("hi"), nil)
				var e *Error
				if !errors.As(err, &e) || e.Status != 400 || e.Retryable || e.Attempts != 1 {
					t.Fatalf("error = %+v, want status 400, not retryable, 1 attempt", e)
				}
				if e.Type != "invalid_request_error" {
					t.Errorf("error type = %q, want invalid_request_error", e.Type)
				}
				if n := len(fake.Requests()); n != 1 {
					t.Errorf("made %d requests, want 1", n)
				}
			})

			t.Run("401 fails at once", func(t *testing.T) {
				b, fake, _ := newBackend(t, pc)
				fake.Push(modeltest.Reply{Status: 401, ErrorMessage: "invalid key"})
				_, err := b.Generate(context.Background(), userText("hi"), nil)
				var e *Error
				if !errors.As(err, &e) || e.Status != 401 || e.Retryable || len(fake.Requests()) != 1 {
					t.Fatalf("error = %v after %d requests, want a 401 after 1", err, len(fake.Requests()))
				}
			})

			t.Run("key echoed in an error body is redacted", func(t *testing.T) {
				const leaked = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
				const leakedAnt = "sk-ant-api03-ZyXwVuTsRqPoNmLkJiHgFeDcBa987654321"
				b, fake, _ := newBackend(t, pc)
				fake.Push(modeltest.Reply{Status: 401, ErrorMessage: "Incorrect API key provided: " + leaked + " (also tried " + leakedAnt + ")"})
				_, err := b.Generate(context.Background(), userText("hi"), nil)
				if err == nil {
					t.Fatal("Generate succeeded, want a 401")
				}
				msg := err.Error()
				if strings.Contains(msg, "AbCdEfGhIjKl") || strings.Contains(msg, "ZyXwVuTsRq") {
					t.Errorf("error message leaks a key: %q", msg)
				}
				if !strings.Contains(msg, "sk-REDACTED") || !strings.Contains(msg, "sk-ant-REDACTED") {
					t.Errorf("error message %q, want the keys shown as sk-REDACTED and sk-ant-REDACTED", msg)
				}
			})

			t.Run("cancel while streaming is not retried", func(t *testing.T) {
				b, fake, sl := newBackend(t, pc)
				hold := make(chan struct{})
				defer close(hold)
				fake.Push(modeltest.Reply{Text: "never finished", Block: hold})
				ctx, cancel := context.WithCancel(context.Background())
				var ev events
				done := make(chan error, 1)
				go func() {
					_, err := b.Generate(ctx, userText("hi"), ev.emit)
					done <- err
				}()
				// Wait until the request reached the fake, then cancel.
				deadline := time.Now().Add(5 * time.Second)
				for len(fake.Requests()) == 0 && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				cancel()
				select {
				case err := <-done:
					if !errors.Is(err, context.Canceled) {
						t.Errorf("error = %v, want one wrapping context.Canceled", err)
					}
					var e *Error
					if errors.As(err, &e) && e.Retryable {
						t.Errorf("cancelled call reported retryable: %+v", e)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("Generate did not return after cancel")
				}
				if n := len(fake.Requests()); n != 1 || len(sl.waits()) != 0 {
					t.Errorf("made %d requests and %d waits, want 1 and 0", n, len(sl.waits()))
				}
			})

			t.Run("connection refused is retried then reported", func(t *testing.T) {
				b, err := New(Spec{Provider: pc.name, Model: pc.model}, Options{
					APIKey: "k", BaseURL: "http://127.0.0.1:1", Sleep: (&sleeps{}).sleep, Logger: testLogger(t),
				})
				if err != nil {
					t.Fatal(err)
				}
				_, err = b.Generate(context.Background(), userText("hi"), nil)
				var e *Error
				if !errors.As(err, &e) || !e.Retryable || e.Attempts != DefaultMaxAttempts {
					t.Fatalf("error = %v, want a retryable *model.Error after %d attempts", err, DefaultMaxAttempts)
				}
			})
		})
	}
}

const httpTimeFormat = "Mon, 02 Jan 2006 15:04:05 GMT"

// TestStreamEndsWithoutMarker checks a stream closed cleanly before the end
// marker counts as dropped: it is retried rather than taken as complete.
func TestStreamEndsWithoutMarker(t *testing.T) {
	if !isDroppedConnection(ErrStreamIncomplete) || !isDroppedConnection(io.ErrUnexpectedEOF) {
		t.Fatal("ErrStreamIncomplete and io.ErrUnexpectedEOF must count as dropped connections")
	}
}
