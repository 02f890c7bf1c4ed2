package model

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/internal/modeltest"
)

// redirect sends every request to a fake while recording the URL the SDK
// meant to reach, so the default endpoints are checked without a network.
type redirect struct {
	to   *url.URL
	mu   sync.Mutex
	seen []string
}

func (r *redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.seen = append(r.seen, req.URL.String())
	r.mu.Unlock()
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host = r.to.Scheme, r.to.Host
	out.Host = r.to.Host
	return http.DefaultTransport.RoundTrip(out)
}

func TestDefaultEndpoints(t *testing.T) {
	tests := []struct {
		pc      providerCase
		wantURL string
		check   func(t *testing.T, fake *modeltest.Fake)
	}{
		{
			pc:      anthropicCase,
			wantURL: "https://api.anthropic.com/v1/messages",
		},
		{
			pc:      openaiCase,
			wantURL: "https://api.openai.com/v1/chat/completions",
			check: func(t *testing.T, fake *modeltest.Fake) {
				// OpenAI itself gets max_completion_tokens, which its
				// reasoning models require.
				body := decodeOpenAI(t, fake, 0)
				if body.MaxCompletionTokens == nil || *body.MaxCompletionTokens != DefaultMaxTokens || body.MaxTokens != nil {
					t.Errorf("max_completion_tokens=%v max_tokens=%v, want %d and unset", body.MaxCompletionTokens, body.MaxTokens, DefaultMaxTokens)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.pc.name, func(t *testing.T) {
			fake := tt.pc.newFake(t)
			fake.Push(modeltest.Reply{Text: "ok"})
			u, err := url.Parse(fake.URL)
			if err != nil {
				t.Fatal(err)
			}
			rd := &redirect{to: u}
			b, err := New(Spec{Provider: tt.pc.name, Model: tt.pc.model}, Options{
				APIKey: "k", HTTPClient: &http.Client{Transport: rd}, Logger: testLogger(t),
			})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if _, err := b.Generate(context.Background(), userText("hi"), nil); err != nil {
				t.Fatalf("Generate: %v", err)
			}
			rd.mu.Lock()
			seen := rd.seen
			rd.mu.Unlock()
			if len(seen) != 1 || seen[0] != tt.wantURL {
				t.Errorf("requested %v, want [%s]", seen, tt.wantURL)
			}
			if tt.check != nil {
				tt.check(t, fake)
			}
		})
	}
}
