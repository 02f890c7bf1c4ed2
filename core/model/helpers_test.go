package model

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/internal/modeltest"
)

// sleeps records the waits a backend asks for and returns at once, so retry
// tests observe backoff without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// events records what a backend emits.
type events []Event

func (e *events) emit(ev Event) { *e = append(*e, ev) }

func (e events) kinds() []EventKind {
	out := make([]EventKind, len(e))
	for i, ev := range e {
		out[i] = ev.Kind
	}
	return out
}

func (e events) count(k EventKind) int {
	n := 0
	for _, ev := range e {
		if ev.Kind == k {
			n++
		}
	}
	return n
}

// textAfterRestart is the text a listener shows: the deltas since the last
// EventRestart.
func (e events) textAfterRestart() string {
	var b strings.Builder
	for _, ev := range e {
		switch ev.Kind {
		case EventRestart:
			b.Reset()
		case EventTextDelta:
			b.WriteString(ev.Text)
		}
	}
	return b.String()
}

// testLogger sends backend logs to t.Log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// providerCase is one provider under test, with its fake.
type providerCase struct {
	name    string
	model   string
	newFake func(t testing.TB) *modeltest.Fake
}

var httpProviders = []providerCase{
	{name: ProviderAnthropic, model: "claude-sonnet-4-5", newFake: modeltest.NewAnthropic},
	{name: ProviderOpenAI, model: "gpt-4.1-mini", newFake: modeltest.NewOpenAI},
}

// newBackend starts a fake for pc and a backend pointed at it.
func newBackend(t *testing.T, pc providerCase, mutate ...func(*Options)) (Backend, *modeltest.Fake, *sleeps) {
	t.Helper()
	fake := pc.newFake(t)
	sl := &sleeps{}
	opts := Options{
		APIKey:  "test-key-123",
		BaseURL: fake.URL,
		Logger:  testLogger(t),
		Sleep:   sl.sleep,
	}
	for _, m := range mutate {
		m(&opts)
	}
	b, err := New(Spec{Provider: pc.name, Model: pc.model}, opts)
	if err != nil {
		t.Fatalf("New(%s): %v", pc.name, err)
	}
	return b, fake, sl
}

func userText(s string) *Request {
	return &Request{Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: s}}}}}
}

// jsonEqual compares two JSON documents by value.
func jsonEqual(t *testing.T, got, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Errorf("invalid JSON %q: %v", got, err)
		return false
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("invalid expected JSON %q: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return string(gb) == string(wb)
}
