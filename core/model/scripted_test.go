package model

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func newScripted(t *testing.T, yamlText string) (Backend, *sleeps) {
	t.Helper()
	s, err := ParseScript([]byte(yamlText))
	if err != nil {
		t.Fatalf("ParseScript: %v", err)
	}
	sl := &sleeps{}
	return NewScripted(s, Options{Sleep: sl.sleep, Logger: testLogger(t)}), sl
}

func TestScriptedPlaysTurnsInOrder(t *testing.T) {
	b, sl := newScripted(t, `
name: order
chunk_delay: 10ms
turns:
  - text: "first answer here"
    delay: 250ms
  - text: "calling"
    tool_calls:
      - id: call_a
        name: lookup
        input: {q: weather, days: 3, nested: {ok: true}}
  - text: "third"
`)
	var ev events
	r1, err := b.Generate(context.Background(), userText("a"), ev.emit)
	if err != nil {
		t.Fatalf("first call: %v", err)
	}
	if r1.Text() != "first answer here" || ev.count(EventTextDelta) != 3 || ev.textAfterRestart() != "first answer here" {
		t.Errorf("first call: text %q in %d deltas, want \"first answer here\" in 3 word deltas", r1.Text(), ev.count(EventTextDelta))
	}
	if w := sl.waits(); len(w) != 3 || w[0] != 250*time.Millisecond || w[1] != 10*time.Millisecond {
		t.Errorf("waits = %v, want the 250ms delay then 10ms between chunks", w)
	}
	if b.Provider() != ProviderScripted || r1.StopReason != StopEndTurn {
		t.Errorf("provider %q stop %q, want scripted, end_turn", b.Provider(), r1.StopReason)
	}

	ev = nil
	r2, err := b.Generate(context.Background(), userText("b"), ev.emit)
	if err != nil {
		t.Fatalf("second call: %v", err)
	}
	calls := r2.ToolCalls()
	if len(calls) != 1 || calls[0].CallID != "call_a" || calls[0].ToolName != "lookup" || r2.StopReason != StopToolUse {
		t.Fatalf("second call = %+v (stop %q), want lookup call_a, tool_use", r2.Parts, r2.StopReason)
	}
	if !jsonEqual(t, string(calls[0].Input), `{"q":"weather","days":3,"nested":{"ok":true}}`) {
		t.Errorf("input = %s, want the YAML mapping as JSON", calls[0].Input)
	}
	if ev.count(EventToolCallStart) != 1 || ev.count(EventToolCallEnd) != 1 || ev.count(EventToolCallDelta) < 2 {
		t.Errorf("tool events %v, want start, several deltas, end", ev.kinds())
	}

	if r3, err := b.Generate(context.Background(), userText("c"), nil); err != nil || r3.Text() != "third" {
		t.Fatalf("third call = %v, %v; want \"third\"", r3, err)
	}
	_, err = b.Generate(context.Background(), userText("d"), nil)
	var e *Error
	if !errors.Is(err, ErrScriptExhausted) || !errors.As(err, &e) || e.Retryable {
		t.Errorf("fourth call error = %v, want a non-retryable ErrScriptExhausted", err)
	}
}

func TestScriptedFailuresUseTheRetryLoop(t *testing.T) {
	t.Run("429 then text", func(t *testing.T) {
		b, sl := newScripted(t, `
turns:
  - failure: {status: 429, message: slow down, retry_after: 2s}
  - text: recovered
`)
		resp, err := b.Generate(context.Background(), userText("x"), nil)
		if err != nil || resp.Text() != "recovered" {
			t.Fatalf("Generate = %v, %v; want \"recovered\"", resp, err)
		}
		if w := sl.waits(); len(w) != 1 || w[0] != 2*time.Second {
			t.Errorf("waits = %v, want [2s] from retry_after", w)
		}
	})
	t.Run("partial output then a drop restarts", func(t *testing.T) {
		b, _ := newScripted(t, `
turns:
  - text: "half of"
    failure: {status: 0}
  - text: "the whole answer"
`)
		var ev events
		resp, err := b.Generate(context.Background(), userText("x"), ev.emit)
		if err != nil || resp.Text() != "the whole answer" {
			t.Fatalf("Generate = %v, %v", resp, err)
		}
		if ev.count(EventRestart) != 1 || ev.textAfterRestart() != "the whole answer" {
			t.Errorf("events %v, want one restart then the whole answer", ev.kinds())
		}
	})
	t.Run("400 fails at once", func(t *testing.T) {
		b, sl := newScripted(t, `
turns:
  - failure: {status: 400, message: "bad request with key sk-ant-api03-abcdefghijklmnop"}
  - text: never
`)
		_, err := b.Generate(context.Background(), userText("x"), nil)
		var e *Error
		if !errors.As(err, &e) || e.Status != 400 || e.Retryable || len(sl.waits()) != 0 {
			t.Fatalf("error = %v, want a 400 without retry", err)
		}
		if strings.Contains(err.Error(), "abcdefghijklmnop") {
			t.Errorf("error %q leaks the key", err)
		}
	})
	t.Run("three 503s give up", func(t *testing.T) {
		b, sl := newScripted(t, `
turns:
  - failure: {status: 503}
  - failure: {status: 503}
  - failure: {status: 503}
  - text: too late
`)
		_, err := b.Generate(context.Background(), userText("x"), nil)
		var e *Error
		if !errors.As(err, &e) || e.Status != 503 || e.Attempts != 3 || len(sl.waits()) != 2 {
			t.Fatalf("error = %+v with %d waits, want 503 after 3 attempts and 2 waits", e, len(sl.waits()))
		}
	})
}

func TestScriptedConditions(t *testing.T) {
	b, _ := newScripted(t, `
turns:
  - after_tool: ask_user
    text: "You picked {{last_user}}."
  - when_last_user_contains: [chart, graph]
    text: charting
    tool_calls: [{id: c1, name: render_chart, input: {title: t}}]
  - when_last_user_contains: secret
    once: true
    text: only once
  - text: hello
fallback:
  text: "fallback: {{last_user}}"
`)
	ask := func(text string) string {
		t.Helper()
		resp, err := b.Generate(context.Background(), userText(text), nil)
		if err != nil {
			t.Fatalf("Generate(%q): %v", text, err)
		}
		return resp.Text()
	}
	steps := []struct{ say, want string }{
		{"good morning", "hello"},
		{"Show me a CHART please", "charting"},
		{"a graph too", "charting"},
		{"tell me the secret", "only once"},
		{"the secret again", "fallback: the secret again"},
		{"anything", "fallback: anything"},
	}
	for _, s := range steps {
		if got := ask(s.say); got != s.want {
			t.Errorf("after %q the model said %q, want %q", s.say, got, s.want)
		}
	}

	// A tool result answers the call made earlier in the conversation.
	req := &Request{Messages: []Message{
		{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "ask me"}}},
		{Role: RoleAssistant, Parts: []Part{{Kind: PartToolCall, CallID: "q1", ToolName: "ask_user", Input: []byte(`{}`)}}},
		{Role: RoleUser, Parts: []Part{{Kind: PartToolResult, CallID: "q1", Output: "Green"}}},
	}}
	resp, err := b.Generate(context.Background(), req, nil)
	if err != nil || resp.Text() != "You picked Green." {
		t.Errorf("after an ask_user result: %v, %v; want \"You picked Green.\"", resp, err)
	}
}

func TestScriptedConcurrentCalls(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("turns:\n")
	const n = 20
	for i := 0; i < n; i++ {
		sb.WriteString("  - text: turn\n")
	}
	b, _ := newScripted(t, sb.String())
	var wg sync.WaitGroup
	errs := make(chan error, n+1)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := b.Generate(context.Background(), userText("x"), nil)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent call failed: %v", err)
		}
	}
	if _, err := b.Generate(context.Background(), userText("x"), nil); !errors.Is(err, ErrScriptExhausted) {
		t.Errorf("call %d = %v, want ErrScriptExhausted: each turn plays exactly once", n+1, err)
	}
}

func TestParseScriptErrors(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"empty", "name: x\n", "no turns and no fallback"},
		{"unknown field", "turns:\n  - txt: hi\n", "field txt not found"},
		{"empty turn", "turns:\n  - delay: 1s\n", "turns[0]: needs text, tool_calls or failure"},
		{"nameless tool", "turns:\n  - tool_calls: [{input: {}}]\n", "turns[0]: tool_calls[0] has no name"},
		{"bad status", "turns:\n  - failure: {status: 200}\n", "failure status must be 0"},
		{"conditional fallback", "turns: [{text: a}]\nfallback: {text: b, after_tool: x}\n", "fallback: must not have conditions"},
		{"bad duration", "turns:\n  - text: a\n    delay: soon\n", "parsing script"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseScript([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseScript error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestDemoScript walks the conversation `switchboard chat` offers offline.
func TestDemoScript(t *testing.T) {
	b, err := New(Spec{Provider: ProviderScripted, Model: DemoScriptName}, Options{Sleep: (&sleeps{}).sleep})
	if err != nil {
		t.Fatalf("New(scripted:demo): %v", err)
	}
	var conv []Message
	say := func(parts ...Part) *Response {
		t.Helper()
		conv = append(conv, Message{Role: RoleUser, Parts: parts})
		resp, err := b.Generate(context.Background(), &Request{Messages: conv}, nil)
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		conv = append(conv, Message{Role: RoleAssistant, Parts: resp.Parts})
		return resp
	}
	text := func(s string) Part { return Part{Kind: PartText, Text: s} }

	greet := say(text("hi there"))
	if !strings.Contains(greet.Text(), "offline demo model") {
		t.Errorf("greeting %q does not say it is the offline demo model", greet.Text())
	}
	chart := say(text("can you show me a chart?"))
	if calls := chart.ToolCalls(); len(calls) != 1 || calls[0].ToolName != "render_chart" {
		t.Fatalf("chart request made calls %+v, want one render_chart", calls)
	}
	after := say(Part{Kind: PartToolResult, CallID: chart.ToolCalls()[0].CallID, Output: `{"image":"chart.png"}`})
	if len(after.ToolCalls()) != 0 || !strings.Contains(after.Text(), "chart above") {
		t.Errorf("after the chart result the model said %q with %d calls, want a note about the chart and no call", after.Text(), len(after.ToolCalls()))
	}
	q := say(text("ask me a question"))
	if calls := q.ToolCalls(); len(calls) != 1 || calls[0].ToolName != "ask_user" {
		t.Fatalf("question request made calls %+v, want one ask_user", calls)
	}
	answer := say(Part{Kind: PartToolResult, CallID: q.ToolCalls()[0].CallID, Output: "Orange"})
	if !strings.Contains(answer.Text(), "Orange") {
		t.Errorf("after the answer the model said %q, want it to mention Orange", answer.Text())
	}
	other := say(text("what is the capital of France?"))
	if !strings.Contains(other.Text(), "what is the capital of France?") {
		t.Errorf("fallback %q does not echo the message", other.Text())
	}
}

func TestLoadScriptFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte("turns:\n  - text: from file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := New(Spec{Provider: ProviderScripted, Model: path}, Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	resp, err := b.Generate(context.Background(), userText("x"), nil)
	if err != nil || resp.Text() != "from file" || resp.Model != path {
		t.Errorf("Generate = %+v, %v; want \"from file\" from model %s", resp, err, path)
	}
	if _, err := New(Spec{Provider: ProviderScripted, Model: filepath.Join(dir, "missing.yaml")}, Options{}); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("New with a missing file = %v, want an error naming it", err)
	}
}

func TestWordChunks(t *testing.T) {
	for _, s := range []string{"", "one", "two words", "  lead and trail  ", "multi\nline\ttext", "héllo wörld ✓"} {
		chunks := wordChunks(s)
		if strings.Join(chunks, "") != s {
			t.Errorf("wordChunks(%q) = %q, which does not join back", s, chunks)
		}
	}
	if got := byteChunks("é✓abc", 2); strings.Join(got, "") != "é✓abc" {
		t.Errorf("byteChunks does not join back: %q", got)
	}
}
