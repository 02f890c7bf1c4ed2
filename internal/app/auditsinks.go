package app

import (
	"context"
	"fmt"
	"slices"

	"go.opentelemetry.io/otel/log"

	"github.com/switchboardhq/switchboard/core/audit"
	"github.com/switchboardhq/switchboard/core/config"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/internal/telemetry"
)

// buildAuditSinks opens the sinks switchboard.yaml's audit section
// declares (nil when none): the files, the webhooks (their deliveries run
// as work, see core/auditsinks.go) and the OTLP log exporter. They close
// after the worker has stopped, when nothing writes the audit any more.
func (a *App) buildAuditSinks(ctx context.Context, agents *config.Config) (*audit.Sinks, error) {
	if len(agents.Audit.Sinks) == 0 {
		return nil, nil
	}
	redact.AddSecrets(agents.Audit.Secrets(a.cfg.Env)...)
	var lp log.LoggerProvider
	if slices.ContainsFunc(agents.Audit.Sinks, func(s config.AuditSink) bool { return s.OTLP }) {
		logs, err := telemetry.NewLogs(ctx, telemetry.TracingOptions{Getenv: a.cfg.Env, InstanceID: a.cfg.InstanceID})
		if err != nil {
			return nil, fmt.Errorf("config %s: audit.sinks: %w", a.cfg.ConfigPath, err)
		}
		a.onStop(logs.Shutdown)
		lp = logs.Provider
	}
	sinks, err := audit.New(audit.Options{
		Config: agents.Audit, Getenv: a.cfg.Env, LoggerProvider: lp, Observer: a.Metrics,
		Logger: a.log.With("part", "audit"), Now: a.cfg.Now,
	})
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", a.cfg.ConfigPath, err)
	}
	a.onStop(func(context.Context) error { return sinks.Close() })
	return sinks, nil
}
