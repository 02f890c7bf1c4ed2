package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// DefaultAPIURL is the Bot API server the adapter talks to by default.
const DefaultAPIURL = "https://api.telegram.org"

// Options configures an Adapter.
type Options struct {
	// Token is the bot token BotFather gave (TELEGRAM_BOT_TOKEN):
	// "<bot id>:<secret>". Required.
	Token string
	// APIURL is the Bot API server (TELEGRAM_API_URL; tests point it at
	// internal/telegramtest). Default DefaultAPIURL.
	APIURL string
	// WebhookURL, when set, receives updates by webhook instead of long
	// polling: Start registers it with setWebhook and WebhookSecret, and
	// Routes serves it. It must be the public address of WebhookPath.
	WebhookURL string
	// WebhookSecret is the secret_token of the webhook
	// (TELEGRAM_WEBHOOK_SECRET): Telegram sends it in the
	// X-Telegram-Bot-Api-Secret-Token header of every update, and an
	// update without it is refused. Required with WebhookURL.
	WebhookSecret string

	// Submitter is core's inbound half. Required.
	Submitter core.Submitter
	// Poller keeps long polling to one instance. nil polls without a
	// leader (one instance only).
	Poller Poller

	// PollTimeout is the long poll's timeout (getUpdates timeout). Default
	// 25s.
	PollTimeout time.Duration
	// StreamUpdateInterval is the least time between two edits of a
	// streamed reply in a private chat; in groups it is at least
	// GroupEditInterval. Default and minimum 1s (Telegram: about one
	// message a second per chat).
	StreamUpdateInterval time.Duration
	// GroupEditInterval is the least time between two edits of a streamed
	// reply in a group. Default 3s (Telegram: 20 messages a minute per
	// group).
	GroupEditInterval time.Duration
	// FileMaxBytes is the largest file read for the model (default 5 MB;
	// the Bot API serves at most 20 MB); FileMaxCount how many of a
	// message's are read (default 5; negative: none).
	FileMaxBytes int64
	FileMaxCount int
	// SubmitTimeout bounds one Submit or Act call. Default 10s.
	SubmitTimeout time.Duration
	// MaxRetryAfter is the longest 429 retry_after the adapter waits out
	// inside a call before it returns the error (to be retried by the
	// delivery). Default 30s.
	MaxRetryAfter time.Duration

	Logger *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// HTTPClient makes the API calls (not the long poll, which has its
	// own timeout). Default: a client with a 30 s timeout.
	HTTPClient *http.Client
}

// Poller is what long polling needs from the service: a lease so that one
// instance polls at a time (Telegram answers 409 Conflict to a second
// poller). The offset needs no store of its own: Telegram keeps every
// update until a getUpdates asks past it, and the adapter asks past an
// update only once core has it, so a new poller (a restart, a takeover)
// starts at the first update not handled; one handled but not yet
// confirmed comes again and Submit drops it by its update_id.
type Poller interface {
	// Lead takes or renews the right to poll; false when another instance
	// holds it.
	Lead(ctx context.Context) (bool, error)
	// Release gives the right up (at Stop).
	Release(ctx context.Context) error
}

const minStreamInterval = time.Second

func (o *Options) withDefaults() Options {
	c := *o
	c.Token = strings.TrimSpace(c.Token)
	c.APIURL = strings.TrimRight(strings.TrimSpace(c.APIURL), "/")
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if c.PollTimeout == 0 {
		c.PollTimeout = 25 * time.Second
	}
	if c.StreamUpdateInterval == 0 {
		c.StreamUpdateInterval = minStreamInterval
	}
	if c.GroupEditInterval == 0 {
		c.GroupEditInterval = 3 * time.Second
	}
	if c.FileMaxBytes == 0 {
		c.FileMaxBytes = DefaultFileMaxBytes
	}
	if c.FileMaxCount == 0 {
		c.FileMaxCount = DefaultFileMaxCount
	}
	if c.SubmitTimeout == 0 {
		c.SubmitTimeout = 10 * time.Second
	}
	if c.MaxRetryAfter == 0 {
		c.MaxRetryAfter = 30 * time.Second
	}
	return c
}

func (o *Options) validate() error {
	var errs []error
	if err := CheckToken(o.Token); err != nil {
		errs = append(errs, fmt.Errorf("Options.Token: %w", err))
	}
	if o.Submitter == nil {
		errs = append(errs, errors.New("Options.Submitter is required"))
	}
	if err := CheckAPIURL(o.APIURL); err != nil {
		errs = append(errs, fmt.Errorf("Options.APIURL: %w", err))
	}
	if o.WebhookURL != "" {
		if err := CheckWebhookURL(o.WebhookURL); err != nil {
			errs = append(errs, fmt.Errorf("Options.WebhookURL: %w", err))
		}
		if err := CheckWebhookSecret(o.WebhookSecret); err != nil {
			errs = append(errs, fmt.Errorf("Options.WebhookSecret: %w", err))
		}
	} else if o.WebhookSecret != "" {
		errs = append(errs, errors.New("Options.WebhookSecret is set without Options.WebhookURL"))
	}
	if o.StreamUpdateInterval < minStreamInterval {
		errs = append(errs, fmt.Errorf("Options.StreamUpdateInterval must be at least %s, got %s", minStreamInterval, o.StreamUpdateInterval))
	}
	if o.GroupEditInterval < o.StreamUpdateInterval {
		errs = append(errs, fmt.Errorf("Options.GroupEditInterval must be at least StreamUpdateInterval (%s), got %s", o.StreamUpdateInterval, o.GroupEditInterval))
	}
	if o.PollTimeout < time.Second || o.PollTimeout > 50*time.Second {
		errs = append(errs, fmt.Errorf("Options.PollTimeout must be between 1s and 50s, got %s", o.PollTimeout))
	}
	if o.SubmitTimeout <= 0 || o.MaxRetryAfter <= 0 {
		errs = append(errs, errors.New("Options.SubmitTimeout and MaxRetryAfter must be positive"))
	}
	return errors.Join(errs...)
}

// CheckToken says what is wrong with s as a bot token, for callers that
// name the setting it came from.
func CheckToken(s string) error {
	id, secret, ok := strings.Cut(strings.TrimSpace(s), ":")
	switch {
	case s == "":
		return errors.New("the bot token is required")
	case !ok || id == "" || strings.Trim(id, "0123456789") != "" || len(secret) < 8:
		return errors.New("a bot token reads <bot id>:<secret> (digits, a colon, then the secret), as BotFather gives it")
	case strings.ContainsAny(secret, " /?#"):
		return errors.New("the bot token's secret holds characters no token has")
	}
	return nil
}

// CheckAPIURL says what is wrong with s as Options.APIURL.
func CheckAPIURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("parsing %q: %w", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q must be an http(s) URL with a host and no query (the Bot API server, e.g. %s)", s, DefaultAPIURL)
	}
	return nil
}

// CheckWebhookURL says what is wrong with s as Options.WebhookURL:
// Telegram sends webhooks to https addresses only (http is accepted for
// loopback, where a local Bot API server or a test runs).
func CheckWebhookURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("parsing %q: %w", s, err)
	}
	if u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && loopbackHost(u.Hostname()))) {
		return fmt.Errorf("%q must be an https URL (Telegram sends webhooks to https only)", s)
	}
	return nil
}

func loopbackHost(h string) bool {
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
}

// CheckWebhookSecret says what is wrong with s as a webhook secret_token:
// Telegram takes 1-256 characters of A-Z, a-z, 0-9, _ and -.
func CheckWebhookSecret(s string) error {
	if s == "" {
		return errors.New("the webhook secret is required for webhooks")
	}
	if len(s) > 256 {
		return fmt.Errorf("the webhook secret is %d characters; Telegram takes at most 256", len(s))
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return fmt.Errorf("the webhook secret may hold only A-Z, a-z, 0-9, _ and -; it holds %q", r)
		}
	}
	if len(s) < 16 {
		return fmt.Errorf("the webhook secret is %d characters; use at least 16 random ones", len(s))
	}
	return nil
}
