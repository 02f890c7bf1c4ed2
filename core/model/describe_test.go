package model

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Each kind of model failure reads as its own sentence, with none of the
// library's or the provider's words.
func TestDescribe(t *testing.T) {
	syntax := &json.SyntaxError{Offset: 3}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"deadline", newError(ProviderAnthropic, 0, false, "", &TimeoutError{Limit: 10 * time.Minute}), "The model took longer than 10m0s to answer; stopped."},
		{"scanner", newError(ProviderAnthropic, 0, false, "", fmt.Errorf("reading: %w", bufio.ErrTooLong)), "answer was too large"},
		{"stalled", newError(ProviderOpenAI, 0, true, "", fmt.Errorf("%w: nothing received for 1m0s", ErrStreamStalled)), "stopped answering"},
		{"key", newError(ProviderOpenAI, 401, false, "401 Unauthorized: Incorrect API key provided", nil), "refused the key (401)"},
		{"forbidden", newError(ProviderOpenAI, 403, false, "403 Forbidden", nil), "refused the request (403)"},
		{"model", newError(ProviderAnthropic, 404, false, "404 Not Found: model: claude-x", nil), "does not know this model (404)"},
		{"rate", newError(ProviderAnthropic, 429, true, "429 Too Many Requests", nil), "rate-limiting this key (429)"},
		{"overloaded", newError(ProviderAnthropic, 529, true, "529 Overloaded (overloaded_error)", nil), "provider is unavailable (529)"},
		{"bad request", newError(ProviderAnthropic, 400, false, "400 Bad Request: messages.1: oops", nil), "rejected the request (400)"},
		{"dropped", newError(ProviderOpenAI, 0, true, "connection dropped: read tcp: connection reset by peer", nil), "unavailable (the connection dropped)"},
		{"malformed", newError(ProviderOpenAI, 0, false, "malformed JSON in response stream: invalid character", syntax), "could not be read"},
		{"cli crashed", newError(ProviderClaudeCode, 0, true, "claude-code exited before it finished: panic", ErrStreamIncomplete), "The claude-code CLI stopped before it finished"},
		{"cli limit", newError(ProviderCodex, 0, false, "codex ran longer than its 30m limit", context.DeadlineExceeded), "The codex CLI ran past its time limit"},
		{"cli login", func() error {
			e := newError(ProviderClaudeCode, 401, false, "x", nil)
			e.Type = ErrorTypeNeedsAuth
			return e
		}(), "not logged in: run `claude auth login`"},
		{"other", newError(ProviderOpenAI, 0, false, "", errors.New("tool \"x\": bad schema")), "failed to answer; the details are in the service log"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Describe(fmt.Errorf("calling the model: %w", tt.err))
			if !ok || !strings.Contains(got, tt.want) {
				t.Fatalf("Describe = %q, %v; want it to say %q", got, ok, tt.want)
			}
			for _, bad := range []string{"Incorrect", "bufio", "Overloaded", "overloaded_error", "reset by peer", "invalid character", "panic", "messages.1", "schema"} {
				if strings.Contains(got, bad) {
					t.Fatalf("Describe = %q, which carries %q", got, bad)
				}
			}
		})
	}
	if _, ok := Describe(errors.New("store: disk full")); ok {
		t.Fatal("Describe classified an error that is not a model failure")
	}
}
