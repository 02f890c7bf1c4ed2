package model

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in      string
		want    Spec
		wantErr string
	}{
		{in: "anthropic:claude-sonnet-4-5", want: Spec{Provider: "anthropic", Model: "claude-sonnet-4-5"}},
		{in: "openai:gpt-4.1-mini", want: Spec{Provider: "openai", Model: "gpt-4.1-mini"}},
		{in: " OpenAI : llama3.1:8b ", want: Spec{Provider: "openai", Model: "llama3.1:8b"}},
		{in: "scripted:testdata/demo.yaml", want: Spec{Provider: "scripted", Model: "testdata/demo.yaml"}},
		{in: "scripted:C:/scripts/x.yaml", want: Spec{Provider: "scripted", Model: "C:/scripts/x.yaml"}},
		{in: "", wantErr: "empty"},
		{in: "gpt-4", wantErr: `no provider; write provider:model, e.g. openai:gpt-4`},
		{in: "gemini:pro", wantErr: `unknown provider "gemini" (want one of anthropic, openai, claude-code, codex, scripted)`},
		{in: "anthropic:", wantErr: `no model name after "anthropic:"`},
		{in: "openai:   ", wantErr: "no model name"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSpec(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseSpec(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseSpec(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
			if back, err := ParseSpec(got.String()); err != nil || back != got {
				t.Errorf("ParseSpec(%q.String()) = %+v, %v; want a round trip", got, back, err)
			}
		})
	}
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name    string
		spec    Spec
		opts    Options
		wantErr string
	}{
		{"anthropic without key", Spec{"anthropic", "claude-sonnet-4-5"}, Options{}, "ANTHROPIC_API_KEY"},
		{"anthropic base url without key", Spec{"anthropic", "claude-sonnet-4-5"}, Options{BaseURL: "http://localhost:1"}, "ANTHROPIC_API_KEY"},
		{"openai without key or url", Spec{"openai", "gpt-4.1"}, Options{}, "OPENAI_API_KEY"},
		{"unknown provider", Spec{"gemini", "pro"}, Options{APIKey: "k"}, `unknown provider "gemini"`},
		{"no model", Spec{"openai", ""}, Options{APIKey: "k"}, "no model name"},
		{"bad base url", Spec{"openai", "m"}, Options{BaseURL: "localhost:11434"}, "BaseURL must start with http:// or https://"},
		{"too many attempts", Spec{"openai", "m"}, Options{APIKey: "k", Retry: RetryPolicy{MaxAttempts: 50}}, "Retry.MaxAttempts must be between 1 and 10"},
		{"negative attempts", Spec{"openai", "m"}, Options{APIKey: "k", Retry: RetryPolicy{MaxAttempts: -1}}, "Retry.MaxAttempts"},
		{"delays inverted", Spec{"openai", "m"}, Options{APIKey: "k", Retry: RetryPolicy{BaseDelay: 10 * time.Second, MaxDelay: time.Second}}, "Retry.MaxDelay"},
		{"missing script", Spec{"scripted", "/nonexistent/x.yaml"}, Options{}, "/nonexistent/x.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.spec, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("New error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
	for _, ok := range []struct {
		spec Spec
		opts Options
	}{
		{Spec{"anthropic", "claude-haiku-4-5"}, Options{APIKey: "k"}},
		{Spec{"openai", "gpt-4.1"}, Options{APIKey: "k"}},
		{Spec{"openai", "llama3.1"}, Options{BaseURL: "http://localhost:11434/v1"}},
		{Spec{"scripted", "demo"}, Options{}},
	} {
		b, err := New(ok.spec, ok.opts)
		if err != nil || b.Provider() != ok.spec.Provider {
			t.Errorf("New(%v) = %v, %v; want a %s backend", ok.spec, b, err, ok.spec.Provider)
		}
	}
}

func TestPriceFor(t *testing.T) {
	tests := []struct {
		provider, model string
		wantIn, wantOut float64
		wantOK          bool
	}{
		{"anthropic", "claude-sonnet-4-5", 3, 15, true},
		{"anthropic", "claude-sonnet-4-5-20250929", 3, 15, true},
		{"anthropic", "claude-haiku-4-5", 1, 5, true},
		{"anthropic", "claude-opus-4-1-20250805", 15, 75, true},
		{"anthropic", "claude-3-7-sonnet-latest", 3, 15, true},
		{"openai", "gpt-4.1-mini", 0.40, 1.60, true},
		{"openai", "gpt-4.1-mini-2025-04-14", 0.40, 1.60, true},
		{"openai", "gpt-4o", 2.50, 10, true},
		{"openai", "gpt-4o-audio-preview", 0, 0, false}, // not the gpt-4o price
		{"openai", "llama3.1:8b", 0, 0, false},
		{"anthropic", "gpt-4.1", 0, 0, false},
		{"nope", "x", 0, 0, false},
		{"scripted", "demo", 0, 0, true},
	}
	for _, tt := range tests {
		p, ok := PriceFor(tt.provider, tt.model)
		if ok != tt.wantOK || p.InputPerMTok != tt.wantIn || p.OutputPerMTok != tt.wantOut {
			t.Errorf("PriceFor(%s, %s) = %+v, %v; want in %v out %v, %v", tt.provider, tt.model, p, ok, tt.wantIn, tt.wantOut, tt.wantOK)
		}
	}
	p, _ := PriceFor("anthropic", "claude-sonnet-4-5")
	if p.CachedInputPerMTok != 0.30 || p.CacheWritePerMTok != 3.75 {
		t.Errorf("sonnet cache prices = %+v, want read 0.30, write 3.75", p)
	}
}

func TestCostMicroUSD(t *testing.T) {
	sonnet, _ := PriceFor("anthropic", "claude-sonnet-4-5")
	tests := []struct {
		name string
		u    Usage
		p    Price
		want int64
	}{
		{"nothing", Usage{}, sonnet, 0},
		// 1M input at $3 = $3 = 3,000,000 micro-USD.
		{"a million input", Usage{InputTokens: 1_000_000}, sonnet, 3_000_000},
		// 1000*3 + 500*15 + 10000*0.3 + 2000*3.75 = 3000 + 7500 + 3000 + 7500.
		{"mixed", Usage{InputTokens: 1000, OutputTokens: 500, CachedTokens: 10000, CacheWriteTokens: 2000}, sonnet, 21000},
		{"rounds", Usage{InputTokens: 1}, Price{InputPerMTok: 0.4}, 0},
		{"rounds up", Usage{InputTokens: 3}, Price{InputPerMTok: 0.5}, 2},
		{"reasoning is inside output", Usage{OutputTokens: 100, ReasoningTokens: 80}, Price{OutputPerMTok: 10}, 1000},
	}
	for _, tt := range tests {
		if got := tt.u.CostMicroUSD(tt.p); got != tt.want {
			t.Errorf("%s: CostMicroUSD = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	p := RetryPolicy{}.withDefaults()
	tests := []struct {
		retry    int
		min, max time.Duration
	}{
		{1, 250 * time.Millisecond, 500 * time.Millisecond},
		{2, 500 * time.Millisecond, time.Second},
		{3, time.Second, 2 * time.Second},
		{5, 4 * time.Second, 8 * time.Second},
		{50, 4 * time.Second, 8 * time.Second}, // capped, no overflow
	}
	for _, tt := range tests {
		lo := p.backoff(tt.retry, func() float64 { return 0 })
		hi := p.backoff(tt.retry, func() float64 { return 0.999999 })
		if lo != tt.min || hi > tt.max || hi < tt.max-time.Millisecond {
			t.Errorf("backoff(%d) spans [%s, %s], want [%s, %s]", tt.retry, lo, hi, tt.min, tt.max)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"none", http.Header{}, 0},
		{"seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{"fractional seconds", http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{"milliseconds win", http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{"http date", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{"date in the past", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{"negative", http.Header{"Retry-After": {"-3"}}, 0},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.header, now); got != tt.want {
			t.Errorf("%s: parseRetryAfter = %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestRetryLoopBounds checks the loop never exceeds its attempts, whatever
// the failures, and stops waiting when the caller cancels.
func TestRetryLoopBounds(t *testing.T) {
	for _, attempts := range []int{1, 2, 3, 5} {
		sl := &sleeps{}
		o := Options{Sleep: sl.sleep, Retry: RetryPolicy{MaxAttempts: attempts}}.withDefaults()
		c := newCaller("test", o, nil)
		calls := 0
		_, err := c.do(context.Background(), nil, func(ctx context.Context, emit func(Event)) (*Response, error) {
			calls++
			return nil, &Error{Status: 503, Retryable: true, Err: errors.New("unavailable")}
		})
		if calls != attempts || len(sl.waits()) != attempts-1 {
			t.Errorf("MaxAttempts %d: %d calls and %d waits, want %d and %d", attempts, calls, len(sl.waits()), attempts, attempts-1)
		}
		var e *Error
		if !IsRetryable(err) {
			t.Errorf("IsRetryable(%v) = false, want true", err)
		}
		if !errors.As(err, &e) || e.Attempts != attempts || e.Provider != "test" {
			t.Errorf("MaxAttempts %d: error %+v, want attempts %d from provider test", attempts, e, attempts)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	o := Options{Sleep: func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }}.withDefaults()
	c := newCaller("test", o, nil)
	calls := 0
	_, err := c.do(ctx, nil, func(ctx context.Context, emit func(Event)) (*Response, error) {
		calls++
		return nil, &Error{Status: 429, Retryable: true, Err: errors.New("rate limited")}
	})
	if IsRetryable(err) || IsRetryable(errors.New("plain")) {
		t.Errorf("IsRetryable is true for a cancelled call or a plain error")
	}
	if calls != 1 || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "rate limited") {
		t.Errorf("cancel during the wait: %d calls, error %v; want 1 call and an error with both the cancel and the cause", calls, err)
	}
}
