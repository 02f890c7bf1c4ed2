package telemetry

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// Logs is a logger provider exporting OTLP log records (the audit's otlp
// sink), and how to flush and stop it.
type Logs struct {
	Provider log.LoggerProvider
	shutdown func(context.Context) error
}

// Shutdown exports the records still buffered and stops the exporter.
func (l *Logs) Shutdown(ctx context.Context) error {
	if l == nil || l.shutdown == nil {
		return nil
	}
	return l.shutdown(ctx)
}

// NewLogs returns the SDK's logger provider exporting over OTLP/HTTP to
// OTEL_EXPORTER_OTLP_LOGS_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT (one is
// required), with the resource NewTracing gives spans. The exporter reads
// the standard variables itself (headers, timeout, compression,
// certificates); records are batched and exported every second.
func NewLogs(ctx context.Context, o TracingOptions) (*Logs, error) {
	if o.Getenv == nil {
		return nil, fmt.Errorf("telemetry: TracingOptions.Getenv is required")
	}
	if o.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && o.Getenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT") == "" {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: the audit's otlp sink needs the collector's address (or OTEL_EXPORTER_OTLP_LOGS_ENDPOINT)")
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := strings.TrimSpace(o.Getenv(name)); p != "" && p != "http/protobuf" {
			return nil, fmt.Errorf("%s: %q is not supported: Switchboard exports logs over OTLP/HTTP (http/protobuf, port 4318 on a collector)", name, p)
		}
	}
	// The endpoint as the settings read it (the exporter would read only
	// the process's environment); headers, timeout, compression and
	// certificates it reads itself.
	endpoint := o.Getenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT")
	if endpoint == "" {
		endpoint = strings.TrimRight(o.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "/") + "/v1/logs"
	}
	exp, err := otlploghttp.New(ctx, otlploghttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: starting the OTLP log exporter: %w", err)
	}
	res, err := newResource(ctx, o)
	if err != nil {
		return nil, err
	}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)), sdklog.WithResource(res))
	return &Logs{Provider: lp, shutdown: lp.Shutdown}, nil
}
