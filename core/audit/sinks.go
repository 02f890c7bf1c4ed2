package audit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/log"

	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/core/web"
)

// Sink kinds, as metrics label them.
const (
	KindFile    = "file"
	KindWebhook = "webhook"
	KindOTLP    = "otlp"
)

// Observer is told how sink writes went (internal/metrics counts them).
type Observer interface {
	// AuditSinkDelivered: a row reached a sink of kind, lag after it was
	// written.
	AuditSinkDelivered(ctx context.Context, kind string, lag time.Duration)
	// AuditSinkFailed: a write to a sink of kind failed; final when it is
	// not tried again (a file or OTLP write, a webhook's last attempt).
	AuditSinkFailed(ctx context.Context, kind string, final bool)
}

type nopObserver struct{}

func (nopObserver) AuditSinkDelivered(context.Context, string, time.Duration) {}
func (nopObserver) AuditSinkFailed(context.Context, string, bool)             {}

// Options configure Sinks.
type Options struct {
	// Config is switchboard.yaml's audit section (checked by config.Parse).
	Config config.Audit
	// Getenv reads each webhook's secret_env; required with a webhook.
	Getenv func(string) string
	// LoggerProvider exports the otlp sink's records; required with one.
	LoggerProvider log.LoggerProvider
	Observer       Observer
	Logger         *slog.Logger
	Now            func() time.Time
	// Resolver and Dialer replace the webhooks' (tests).
	Resolver web.Resolver
	Dialer   web.Dialer
}

// Sinks are the configured sinks.
type Sinks struct {
	webhooks []*Webhook
	files    []*File
	otlp     *OTLP
	obs      Observer
	log      *slog.Logger
	now      func() time.Time
}

// New opens the sinks o.Config declares. With none it returns nil: no
// sink, nothing to do.
func New(o Options) (*Sinks, error) {
	if len(o.Config.Sinks) == 0 {
		return nil, nil
	}
	s := &Sinks{obs: o.Observer, log: o.Logger, now: o.Now}
	if s.obs == nil {
		s.obs = nopObserver{}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	for i, c := range o.Config.Sinks {
		where := fmt.Sprintf("audit.sinks[%d]", i)
		switch c.Kind() {
		case KindFile:
			f, err := NewFile(c)
			if err != nil {
				_ = s.Close()
				return nil, fmt.Errorf("%s.file: %w", where, err)
			}
			s.files = append(s.files, f)
		case KindWebhook:
			if o.Getenv == nil || o.Getenv(c.SecretEnv) == "" {
				_ = s.Close()
				return nil, fmt.Errorf("%s.secret_env: %s is not set in the environment", where, c.SecretEnv)
			}
			w, err := NewWebhook(WebhookOptions{
				URL: c.Webhook, Secret: []byte(o.Getenv(c.SecretEnv)), MaxAttempts: c.MaxAttempts,
				Resolver: o.Resolver, Dialer: o.Dialer, Logger: s.log, Now: s.now,
			})
			if err != nil {
				_ = s.Close()
				return nil, fmt.Errorf("%s.webhook: %w", where, err)
			}
			s.webhooks = append(s.webhooks, w)
		case KindOTLP:
			if o.LoggerProvider == nil {
				_ = s.Close()
				return nil, fmt.Errorf("%s.otlp: no OpenTelemetry logger provider (set OTEL_EXPORTER_OTLP_ENDPOINT)", where)
			}
			s.otlp = NewOTLP(o.LoggerProvider)
		default:
			_ = s.Close()
			return nil, fmt.Errorf("%s: a sink names one kind: file, webhook or otlp: true", where)
		}
	}
	return s, nil
}

// Webhooks are the webhook sinks, in the order configured.
func (s *Sinks) Webhooks() []*Webhook {
	if s == nil {
		return nil
	}
	return s.webhooks
}

// Webhook is the webhook sink whose ID is id, nil when none is.
func (s *Sinks) Webhook(id string) *Webhook {
	for _, w := range s.Webhooks() {
		if w.ID() == id {
			return w
		}
	}
	return nil
}

// AfterCommit writes ev to the file and OTLP sinks, once its row is
// committed. A failure is logged and counted, never returned: the row is
// in the database, and in the export.
func (s *Sinks) AfterCommit(ctx context.Context, ev *Event) {
	if s == nil {
		return
	}
	for _, f := range s.files {
		if err := f.Write(ev); err != nil {
			s.log.ErrorContext(ctx, "writing the audit file sink", "error", redact.String(err.Error()), "audit_id", ev.ID)
			s.obs.AuditSinkFailed(ctx, KindFile, true)
			continue
		}
		s.obs.AuditSinkDelivered(ctx, KindFile, s.now().Sub(ev.Time))
	}
	if s.otlp != nil {
		if err := s.otlp.Emit(ctx, ev); err != nil {
			s.log.ErrorContext(ctx, "emitting the audit OTLP record", "error", redact.String(err.Error()), "audit_id", ev.ID)
			s.obs.AuditSinkFailed(ctx, KindOTLP, true)
		} else {
			s.obs.AuditSinkDelivered(ctx, KindOTLP, s.now().Sub(ev.Time))
		}
	}
}

// Deliver posts ev to the webhook sink id, once; attempt and last say
// which attempt of the work item this is, for the metrics.
func (s *Sinks) Deliver(ctx context.Context, id string, ev *Event, last bool) error {
	w := s.Webhook(id)
	if w == nil {
		s.obs.AuditSinkFailed(ctx, KindWebhook, last)
		return fmt.Errorf("delivering audit event %s: webhook sink %s is no longer configured (audit.sinks in switchboard.yaml)", ev.ID, id)
	}
	if err := w.Post(ctx, ev); err != nil {
		if ctx.Err() == nil {
			s.obs.AuditSinkFailed(ctx, KindWebhook, last)
		}
		return err
	}
	s.obs.AuditSinkDelivered(ctx, KindWebhook, s.now().Sub(ev.Time))
	return nil
}

// Close closes the files.
func (s *Sinks) Close() error {
	if s == nil {
		return nil
	}
	var errs []error
	for _, f := range s.files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}
