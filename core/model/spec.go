package model

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Provider names.
const (
	ProviderAnthropic = "anthropic"
	ProviderOpenAI    = "openai"
	ProviderScripted  = "scripted"
	// ProviderClaudeCode runs the Claude Code CLI (claude -p); its model is
	// what --model takes ("sonnet", "claude-sonnet-4-5"), or "default" for
	// the CLI's own choice.
	ProviderClaudeCode = "claude-code"
	// ProviderCodex runs the Codex CLI (codex exec --json); its model is
	// what -m takes, or "default".
	ProviderCodex = "codex"
)

var providers = []string{ProviderAnthropic, ProviderOpenAI, ProviderClaudeCode, ProviderCodex, ProviderScripted}

// IsCLI reports whether provider runs a local coding CLI rather than
// calling an HTTP API.
func IsCLI(provider string) bool { return provider == ProviderClaudeCode || provider == ProviderCodex }

// Spec names a backend and its model: "anthropic:claude-sonnet-4-5",
// "openai:gpt-4.1-mini", "scripted:path/to/script.yaml" (or "scripted:demo"
// for the built-in demo script).
type Spec struct {
	Provider string
	Model    string
}

func (s Spec) String() string { return s.Provider + ":" + s.Model }

// ParseSpec parses "provider:model". The provider is case-insensitive; the
// model is kept as written (a scripted model is a file path).
func ParseSpec(s string) (Spec, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Spec{}, errors.New("parsing model spec: empty; write provider:model, e.g. anthropic:claude-sonnet-4-5")
	}
	provider, name, ok := strings.Cut(s, ":")
	if !ok {
		return Spec{}, fmt.Errorf("parsing model spec %q: no provider; write provider:model, e.g. openai:%s", s, s)
	}
	provider = strings.ToLower(strings.TrimSpace(provider))
	name = strings.TrimSpace(name)
	known := false
	for _, p := range providers {
		known = known || p == provider
	}
	if !known {
		return Spec{}, fmt.Errorf("parsing model spec %q: unknown provider %q (want one of %s)", s, provider, strings.Join(providers, ", "))
	}
	if name == "" {
		return Spec{}, fmt.Errorf("parsing model spec %q: no model name after %q", s, provider+":")
	}
	return Spec{Provider: provider, Model: name}, nil
}

// Options configure a backend. The zero value is usable for the scripted
// backend; the HTTP backends need an API key (or, for OpenAI-compatible
// servers, a BaseURL).
type Options struct {
	// APIKey is the provider's key (ANTHROPIC_API_KEY, OPENAI_API_KEY).
	APIKey string
	// BaseURL overrides the provider's endpoint (ANTHROPIC_BASE_URL,
	// OPENAI_BASE_URL). For OpenAI it includes the version path, e.g.
	// http://localhost:11434/v1 for Ollama.
	BaseURL string
	// HTTPClient makes the requests; nil uses a client whose only limit is
	// a response-header timeout, so long streams are not cut.
	HTTPClient *http.Client
	// Logger receives retries and failures (redacted); nil discards.
	Logger *slog.Logger
	// Retry bounds retries; zero fields take the defaults.
	Retry RetryPolicy
	// Sleep waits between retries and for scripted delays; nil uses a timer.
	// Tests inject one to observe waits without waiting.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock used to read Retry-After dates; nil uses time.Now.
	Now func() time.Time
	// IdleTimeout fails an attempt whose response sends nothing for this
	// long, as a dropped connection, so the retry policy applies (0:
	// DefaultIdleTimeout). Only the HTTP backends use it; the CLI backends
	// have CLI.IdleTimeout.
	IdleTimeout time.Duration
	// Timeout bounds one call as a whole, its retries included, on every
	// backend (0: DefaultTimeout). A call stopped at it fails with
	// ErrTimeout and is not retried.
	Timeout time.Duration
	// MaxReplyBytes caps what one call may stream, on every backend (0:
	// DefaultMaxReplyBytes): past it the call is cancelled and the reply
	// ends with ReplyCutNote.
	MaxReplyBytes int
	// CLI configures the claude-code and codex backends.
	CLI CLIOptions
}

// responseHeaderTimeout bounds the wait for a provider to start answering.
// It does not limit the stream itself, which the caller's ctx bounds.
const responseHeaderTimeout = 5 * time.Minute

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Sleep == nil {
		o.Sleep = sleepContext
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
		if tr, ok := http.DefaultTransport.(*http.Transport); ok {
			tr = tr.Clone()
			tr.ResponseHeaderTimeout = responseHeaderTimeout
			o.HTTPClient.Transport = tr
		}
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxReplyBytes == 0 {
		o.MaxReplyBytes = DefaultMaxReplyBytes
	}
	o.Retry = o.Retry.withDefaults()
	o.CLI = o.CLI.withDefaults()
	return o
}

func (o Options) validate() error {
	if err := o.Retry.validate(); err != nil {
		return err
	}
	if o.IdleTimeout < 0 {
		return fmt.Errorf("IdleTimeout must not be negative, got %s", o.IdleTimeout)
	}
	if o.Timeout < 0 {
		return fmt.Errorf("Timeout must not be negative, got %s", o.Timeout)
	}
	if o.MaxReplyBytes < 0 {
		return fmt.Errorf("MaxReplyBytes must not be negative, got %d", o.MaxReplyBytes)
	}
	if err := o.CLI.validate(); err != nil {
		return err
	}
	if o.BaseURL != "" && !strings.HasPrefix(o.BaseURL, "http://") && !strings.HasPrefix(o.BaseURL, "https://") {
		return fmt.Errorf("BaseURL must start with http:// or https://, got %q", o.BaseURL)
	}
	return nil
}

// Credentials are a provider's key and endpoint for one agent, resolved by
// the app from its settings: this package reads no environment.
type Credentials struct {
	APIKey string
	// BaseURL overrides the provider's endpoint (an OpenAI-compatible
	// server); empty for the provider's own.
	BaseURL string
	// CLI is the agent's CLI settings (its working directory, the
	// program, its environment), for the claude-code and codex backends.
	CLI *CLIOptions
}

// New builds the backend a spec names, held to Options.Timeout and
// Options.MaxReplyBytes.
func New(spec Spec, opts Options) (Backend, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("creating %s backend: %w", spec.Provider, err)
	}
	if spec.Model == "" {
		return nil, fmt.Errorf("creating %s backend: no model name", spec.Provider)
	}
	switch spec.Provider {
	case ProviderAnthropic:
		b, err := newAnthropic(spec.Model, opts)
		if err != nil {
			return nil, err
		}
		return bound(b, opts), nil
	case ProviderOpenAI:
		b, err := newOpenAI(spec.Model, opts)
		if err != nil {
			return nil, err
		}
		return bound(b, opts), nil
	case ProviderClaudeCode, ProviderCodex:
		b, err := newCLI(spec, opts)
		if err != nil {
			return nil, err
		}
		return bound(b, opts), nil
	case ProviderScripted:
		script, err := LoadScript(spec.Model)
		if err != nil {
			return nil, fmt.Errorf("creating scripted backend: %w", err)
		}
		return bound(NewScripted(script, opts), opts), nil
	default:
		return nil, fmt.Errorf("creating backend: unknown provider %q (want one of %s)", spec.Provider, strings.Join(providers, ", "))
	}
}
