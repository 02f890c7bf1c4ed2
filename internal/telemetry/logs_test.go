package telemetry_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/proto"

	"github.com/switchboardhq/switchboard/core/audit"
	"github.com/switchboardhq/switchboard/internal/telemetry"
	"github.com/switchboardhq/switchboard/store"
)

// TestAuditOTLP: the audit's otlp sink, through the service's logger
// provider, reaches a local OTLP/HTTP receiver as one log record per
// event: the event's JSON as the body, its fields as attributes, the
// trace of the context it was emitted in, the service's resource.
func TestAuditOTLP(t *testing.T) {
	var mu sync.Mutex
	var records []*logspb.LogRecord
	var resourceAttrs map[string]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/logs" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "want protobuf on /v1/logs", http.StatusBadRequest)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var req collogs.ExportLogsServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, rl := range req.ResourceLogs {
			resourceAttrs = map[string]string{}
			for _, kv := range rl.GetResource().GetAttributes() {
				resourceAttrs[kv.Key] = kv.GetValue().GetStringValue()
			}
			for _, sl := range rl.ScopeLogs {
				if sl.GetScope().GetName() == audit.OTLPScope {
					records = append(records, sl.LogRecords...)
				}
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&collogs.ExportLogsServiceResponse{})
		w.Write(out)
	}))
	defer srv.Close()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL}
	logs, err := telemetry.NewLogs(context.Background(), telemetry.TracingOptions{Getenv: func(k string) string { return env[k] }, InstanceID: "instance-a"})
	if err != nil {
		t.Fatal(err)
	}
	sink := audit.NewOTLP(logs.Provider)

	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("test").Start(context.Background(), "turn")
	conv := uuid.New()
	ev := audit.FromRecord(&store.AuditRecord{
		ID: uuid.New(), ConversationID: &conv, CallID: "call-1", Agent: "atlas", Actor: "agent:atlas", Action: "deploy",
		Risk: "high", Decision: "confirm", Outcome: store.AuditOK, DecidedBy: "user:U1", CreatedAt: time.Now(), UpdatedAt: time.Now(),
		TraceID: span.SpanContext().TraceID().String(),
	}, uuid.Must(uuid.NewV7()).String())
	if err := sink.Emit(ctx, &ev); err != nil {
		t.Fatal(err)
	}
	span.End()
	if err := logs.Shutdown(context.Background()); err != nil { // flushes
		t.Fatalf("flushing the logs: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(records) != 1 {
		t.Fatalf("the receiver got %d audit records, want 1", len(records))
	}
	r := records[0]
	var body audit.Event
	if err := json.Unmarshal([]byte(r.GetBody().GetStringValue()), &body); err != nil || body.ID != ev.ID || body.Outcome != "ok" {
		t.Fatalf("body %q (%v); want the event's JSON", r.GetBody().GetStringValue(), err)
	}
	attrs := map[string]string{}
	for _, kv := range r.Attributes {
		attrs[kv.Key] = kv.GetValue().GetStringValue()
	}
	for k, want := range map[string]string{
		"audit.id": ev.ID, "audit.action": "deploy", "audit.outcome": "ok", "audit.actor": "agent:atlas",
		"audit.conversation_id": conv.String(), "audit.decided_by": "user:U1",
	} {
		if attrs[k] != want {
			t.Errorf("attribute %s = %q, want %q", k, attrs[k], want)
		}
	}
	if got := uuidHex(r.TraceId); got != span.SpanContext().TraceID().String() {
		t.Errorf("the record's trace id = %s, want the span's %s", got, span.SpanContext().TraceID())
	}
	if r.EventName != audit.OTLPEventName || r.SeverityText != "INFO" {
		t.Errorf("event name %q, severity %q", r.EventName, r.SeverityText)
	}
	if resourceAttrs["service.name"] != "switchboard" || resourceAttrs["service.instance.id"] != "instance-a" {
		t.Errorf("resource %v: want service.name switchboard, service.instance.id instance-a", resourceAttrs)
	}
}

func uuidHex(b []byte) string {
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, hex[c>>4], hex[c&15])
	}
	return string(out)
}

// Without a collector's address the otlp sink is refused, naming the
// variable.
func TestAuditOTLPNeedsEndpoint(t *testing.T) {
	_, err := telemetry.NewLogs(context.Background(), telemetry.TracingOptions{Getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_ENDPOINT") {
		t.Fatalf("NewLogs without an endpoint: %v", err)
	}
}
