// Package telemetry sets up what the service exports besides metrics: the
// OpenTelemetry tracer provider (OTLP over HTTP when the standard
// OTEL_EXPORTER_OTLP_* variables ask for it, the no-op provider otherwise)
// and the log handler that stamps each line with the trace and span it was
// logged in.
package telemetry

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// TracingOptions configures NewTracerProvider.
type TracingOptions struct {
	// Getenv reads the OTEL_* settings; required.
	Getenv func(string) string
	// InstanceID becomes service.instance.id.
	InstanceID string
	// Version becomes service.version when set.
	Version string
}

// Tracing is a tracer provider and how to flush and stop it.
type Tracing struct {
	Provider trace.TracerProvider
	// Enabled says spans are exported (OTEL_EXPORTER_OTLP_ENDPOINT or
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set).
	Enabled  bool
	shutdown func(context.Context) error
}

// Shutdown exports the spans still buffered and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil || t.shutdown == nil {
		return nil
	}
	return t.shutdown(ctx)
}

// NewTracing returns the SDK's tracer provider exporting over OTLP/HTTP
// when OTEL_EXPORTER_OTLP_ENDPOINT (or its _TRACES_ variant) is set, and the
// no-op provider, which records nothing and costs next to nothing,
// otherwise. The exporter reads the standard variables itself (endpoint,
// headers, timeout, compression, certificates), the SDK reads
// OTEL_TRACES_SAMPLER and its argument, and the resource
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
func NewTracing(ctx context.Context, o TracingOptions) (*Tracing, error) {
	if o.Getenv == nil {
		return nil, fmt.Errorf("telemetry: TracingOptions.Getenv is required")
	}
	if o.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && o.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return &Tracing{Provider: noop.NewTracerProvider()}, nil
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := strings.TrimSpace(o.Getenv(name)); p != "" && p != "http/protobuf" {
			return nil, fmt.Errorf("%s: %q is not supported: Switchboard exports traces over OTLP/HTTP (http/protobuf, port 4318 on a collector)", name, p)
		}
	}
	if v := o.Getenv("OTEL_SDK_DISABLED"); strings.EqualFold(v, "true") {
		return &Tracing{Provider: noop.NewTracerProvider()}, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: starting the OTLP trace exporter: %w", err)
	}
	res, err := newResource(ctx, o)
	if err != nil {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracing{Provider: tp, Enabled: true, shutdown: tp.Shutdown}, nil
}

// newResource is the service's resource for spans and log records.
func newResource(ctx context.Context, o TracingOptions) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{semconv.ServiceName("switchboard")}
	if o.InstanceID != "" {
		attrs = append(attrs, semconv.ServiceInstanceID(o.InstanceID))
	}
	if o.Version != "" {
		attrs = append(attrs, semconv.ServiceVersion(o.Version))
	}
	// Later options win: the environment's service name and attributes
	// override the defaults. No schema URL of ours: the SDK's detector
	// carries its own (a newer semconv), and two differing ones are an
	// error that stopped the exporter from starting.
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	return res, nil
}
