package audit

import (
	"context"
	"encoding/json"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
)

// OTLPScope is the instrumentation scope of the audit's log records.
const OTLPScope = "github.com/switchboardhq/switchboard/core/audit"

// OTLPEventName is the event name of every audit log record.
const OTLPEventName = "switchboard.audit"

// OTLP emits events as OpenTelemetry log records through a
// LoggerProvider (internal/telemetry's, exporting over OTLP/HTTP): the
// body is the Event's JSON, the same line the file sink writes, and the
// fields a collector filters on are attributes too (audit.action,
// audit.outcome, ...). A record emitted with the context of the request
// or turn that wrote the row carries its trace.
type OTLP struct {
	logger log.Logger
}

// NewOTLP emits through lp.
func NewOTLP(lp log.LoggerProvider) *OTLP {
	return &OTLP{logger: lp.Logger(OTLPScope)}
}

// Emit hands ev to the provider's processor, which batches and exports it.
func (o *OTLP) Emit(ctx context.Context, ev *Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encoding audit event %s: %w", ev.ID, err)
	}
	var r log.Record
	r.SetTimestamp(ev.Time)
	r.SetSeverity(log.SeverityInfo)
	r.SetSeverityText("INFO")
	r.SetEventName(OTLPEventName)
	r.SetBody(attribute.StringValue(string(b)))
	attrs := []attribute.KeyValue{
		attribute.String("audit.id", ev.ID), attribute.String("audit.row_id", ev.RowID.String()),
		attribute.String("audit.actor", ev.Actor), attribute.String("audit.action", ev.Action),
		attribute.String("audit.outcome", ev.Outcome),
	}
	for _, kv := range [][2]string{
		{"audit.agent", ev.Agent}, {"audit.decided_by", ev.DecidedBy}, {"audit.call_id", ev.CallID},
		{"audit.risk", ev.Risk}, {"audit.decision", ev.Decision}, {"audit.trace_id", ev.TraceID},
	} {
		if kv[1] != "" {
			attrs = append(attrs, attribute.String(kv[0], kv[1]))
		}
	}
	if ev.WorkspaceID != nil {
		attrs = append(attrs, attribute.String("audit.workspace_id", ev.WorkspaceID.String()))
	}
	if ev.ConversationID != nil {
		attrs = append(attrs, attribute.String("audit.conversation_id", ev.ConversationID.String()))
	}
	r.AddAttributes(attrs...)
	o.logger.Emit(ctx, r)
	return nil
}
