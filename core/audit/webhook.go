package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/web"
)

// WebhookOptions configure a Webhook.
type WebhookOptions struct {
	URL    string // https (http to a loopback address); required
	Secret []byte // the HMAC key; required
	// MaxAttempts is how many times a row is tried (0: the default).
	MaxAttempts int
	// Timeout bounds one POST (default 30s).
	Timeout time.Duration
	// Resolver and Dialer replace the guard's (tests).
	Resolver web.Resolver
	Dialer   web.Dialer
	Logger   *slog.Logger
	Now      func() time.Time
}

func (o *WebhookOptions) validate() error {
	if err := config.CheckAuditWebhook(o.URL); err != nil {
		return fmt.Errorf("audit webhook %q: %w", o.URL, err)
	}
	if len(o.Secret) == 0 {
		return fmt.Errorf("audit webhook %q: the secret is empty", o.URL)
	}
	return nil
}

// Webhook POSTs events to one URL, signed. Its connections go through the
// web tools' address guard with the webhook's own host allowed (a SIEM
// collector often sits on a private network): it reaches that host and
// nothing else, as it follows no redirect.
type Webhook struct {
	url, id string
	secret  []byte
	client  *http.Client
	max     int
	log     *slog.Logger
	now     func() time.Time
}

// NewWebhook builds a Webhook.
func NewWebhook(o WebhookOptions) (*Webhook, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	u, _ := url.Parse(o.URL)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	g, err := web.NewGuard(web.GuardOptions{Allow: []string{net.JoinHostPort(u.Hostname(), port)}, Resolver: o.Resolver, Dialer: o.Dialer, Logger: o.Logger})
	if err != nil {
		return nil, fmt.Errorf("audit webhook %q: %w", o.URL, err)
	}
	w := &Webhook{url: o.URL, id: SinkID(o.URL), secret: o.Secret, max: o.MaxAttempts, log: o.Logger, now: o.Now}
	if w.max == 0 {
		w.max = config.DefaultAuditMaxAttempts
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	if w.now == nil {
		w.now = time.Now
	}
	w.client = web.NewClient(g, cmpDuration(o.Timeout, 30*time.Second), -1)
	// A redirect is the receiver's answer, a failure: followed, it could
	// lead anywhere the guard allows this host's address.
	w.client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return w, nil
}

func cmpDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// SinkID names a webhook in work items without its URL (which may carry a
// token): the first 16 hex digits of the URL's SHA-256.
func SinkID(rawURL string) string {
	h := sha256.Sum256([]byte(rawURL))
	return hex.EncodeToString(h[:8])
}

// ID is SinkID of the webhook's URL.
func (w *Webhook) ID() string { return w.id }

// MaxAttempts is how many times a row is tried.
func (w *Webhook) MaxAttempts() int { return w.max }

// Redacted is the URL without its query, for logs and errors.
func (w *Webhook) Redacted() string {
	u, err := url.Parse(w.url)
	if err != nil {
		return "(webhook)"
	}
	u.RawQuery = ""
	return u.String()
}

// StatusError is a delivery the receiver answered with a status that is
// not 2xx.
type StatusError struct {
	Status int
	Body   string // the start of the answer
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("the receiver answered %d %s: %q", e.Status, http.StatusText(e.Status), e.Body)
}

// Post sends ev once: nil when the receiver answered 2xx.
func (w *Webhook) Post(ctx context.Context, ev *Event) error {
	body, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encoding audit event %s: %w", ev.ID, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("posting audit event to %s: %w", w.Redacted(), err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "switchboard-audit/1")
	req.Header.Set(EventIDHeader, ev.ID)
	req.Header.Set(SignatureHeader, Sign(w.secret, w.now(), body))
	resp, err := w.client.Do(req)
	if err != nil {
		var refused *web.RefusedError
		if errors.As(err, &refused) {
			return fmt.Errorf("posting audit event to %s: %w", w.Redacted(), refused)
		}
		return fmt.Errorf("posting audit event to %s: %w", w.Redacted(), err)
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("posting audit event %s to %s: %w", ev.ID, w.Redacted(), &StatusError{Status: resp.StatusCode, Body: string(head)})
	}
	return nil
}
