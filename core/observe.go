package core

import (
	"context"
	"errors"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/switchboardhq/switchboard/core/model"
	"github.com/switchboardhq/switchboard/core/redact"
	"github.com/switchboardhq/switchboard/store"
)

// How core is observed.
//
// Traces go through the OpenTelemetry trace API (Options.TracerProvider),
// which is the instrumentation API libraries are meant to call: without a
// provider it is the no-op one, whose spans cost an interface call and record
// nothing. The SDK and the exporter live in the app, never here.
//
// Metrics go through Observer, a small interface of what happened, so core
// depends on no metrics library: the app implements it with Prometheus
// (internal/metrics). Spans follow the OpenTelemetry GenAI semantic
// conventions: invoke_agent for a turn, chat for a model call, execute_tool
// for a tool call.

// instrumentationName names core's tracer.
const instrumentationName = "github.com/switchboardhq/switchboard/core"

// Observer is told what turns and workers did, for metrics. Core calls it
// inline, from the goroutine that did the work: an implementation must be
// quick and must not block. Embed NopObserver to implement only some of it.
type Observer interface {
	// TurnEnded is called once per RunTurn.
	TurnEnded(ctx context.Context, o *TurnObservation)
	// ModelCalled is called once per model call, failed or not.
	ModelCalled(ctx context.Context, o *ModelCallObservation)
	// ToolCalled is called once per tool handler run.
	ToolCalled(ctx context.Context, o *ToolCallObservation)
	// WorkTakenOver is called when this instance takes over an item whose
	// earlier attempt died holding its lease: claimed after the lease
	// expired, or taken back from this instance's previous run at Start.
	WorkTakenOver(ctx context.Context, kind string, n int)
	// WorkLeaseLost is called when an item running here lost its lease to
	// another worker.
	WorkLeaseLost(ctx context.Context, kind string)
}

// TurnOutcome is how a turn ended, as observed.
type TurnOutcome string

// Turn outcomes.
const (
	TurnOutcomeDone        TurnOutcome = "done"        // answered, nothing pending
	TurnOutcomePaused      TurnOutcome = "paused"      // waiting for a person or a client
	TurnOutcomeFailed      TurnOutcome = "failed"      // an error entry was recorded
	TurnOutcomeInterrupted TurnOutcome = "interrupted" // cut off (a stop, a lost lease) or could not be finished
)

// TurnObservation is one RunTurn.
type TurnObservation struct {
	Agent    string
	Outcome  TurnOutcome
	Duration time.Duration
}

// ModelCallObservation is one model call.
type ModelCallObservation struct {
	Agent    string
	Provider string // the backend: anthropic, openai, scripted
	Model    string // the model that answered (the requested one when it failed)
	Duration time.Duration
	// TimeToFirstToken is how long the first streamed output (text,
	// thinking or a tool call) took; 0 when nothing streamed.
	TimeToFirstToken time.Duration
	Usage            model.Usage
	CostMicroUSD     int64
	StopReason       string
	Err              error
}

// ToolCallObservation is one tool handler run.
type ToolCallObservation struct {
	Agent    string
	Tool     string
	Duration time.Duration
	Failed   bool // the result is an error
}

// NopObserver observes nothing.
type NopObserver struct{}

var _ Observer = NopObserver{}

func (NopObserver) TurnEnded(context.Context, *TurnObservation)        {}
func (NopObserver) ModelCalled(context.Context, *ModelCallObservation) {}
func (NopObserver) ToolCalled(context.Context, *ToolCallObservation)   {}
func (NopObserver) WorkTakenOver(context.Context, string, int)         {}
func (NopObserver) WorkLeaseLost(context.Context, string)              {}

// newTracer is core's tracer from tp, or from the no-op provider.
func newTracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return tp.Tracer(instrumentationName, trace.WithSchemaURL(semconv.SchemaURL))
}

// turnTrace is a turn's span and its metrics, ended once by end.
type turnTrace struct {
	s       *Service
	span    trace.Span
	agent   string
	start   time.Time
	outcome TurnOutcome
}

// traceTurn starts the invoke_agent span of a turn. The durations observed
// are wall-clock (time.Now), not Options.Now: a test's fixed clock would make
// every latency zero.
func (s *Service) traceTurn(ctx context.Context, conv *store.Conversation, item *store.WorkItem, agentName string) (context.Context, *turnTrace) {
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameInvokeAgent,
		semconv.GenAIAgentName(agentName),
		semconv.GenAIConversationID(conv.ID.String()),
		attribute.String("switchboard.turn.id", item.ID.String()),
		attribute.Int("switchboard.turn.attempt", item.Attempts),
	}
	if a, ok := s.agents().Find(agentName); ok {
		if spec, err := model.ParseSpec(a.Model); err == nil {
			attrs = append(attrs, semconv.GenAIProviderNameKey.String(spec.Provider), semconv.GenAIRequestModel(spec.Model))
		}
	}
	ctx, span := s.tracer.Start(ctx, "invoke_agent "+agentName, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return ctx, &turnTrace{s: s, span: span, agent: agentName, start: time.Now(), outcome: TurnOutcomeDone}
}

// end closes the turn's span and reports it, with err the error RunTurn
// returns.
func (t *turnTrace) end(ctx context.Context, err error) {
	if err != nil {
		t.outcome = TurnOutcomeInterrupted
		endSpan(t.span, err)
	} else {
		if t.outcome == TurnOutcomeFailed {
			t.span.SetStatus(codes.Error, "the turn recorded an error entry")
		}
		t.span.SetAttributes(attribute.String("switchboard.turn.outcome", string(t.outcome)))
		t.span.End()
	}
	d := time.Since(t.start)
	// Logged with the span's context: a JSON log line carries the trace id.
	t.s.log.DebugContext(ctx, "turn ended", "agent", t.agent, "outcome", string(t.outcome), "duration_ms", d.Milliseconds())
	t.s.observer.TurnEnded(ctx, &TurnObservation{Agent: t.agent, Outcome: t.outcome, Duration: d})
}

// modelTrace is one model call's chat span and metrics.
type modelTrace struct {
	t     *turn
	span  trace.Span
	spec  model.Spec
	start time.Time
	first time.Duration
}

func (t *turn) traceModel(ctx context.Context, req *model.Request) (context.Context, *modelTrace) {
	spec, _ := model.ParseSpec(t.agent.Model)
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameChat,
		semconv.GenAIProviderNameKey.String(spec.Provider),
		semconv.GenAIRequestModel(spec.Model),
		semconv.GenAIAgentName(t.agent.Name),
		semconv.GenAIConversationID(t.conv.ID.String()),
	}
	if req.MaxTokens > 0 {
		attrs = append(attrs, semconv.GenAIRequestMaxTokens(req.MaxTokens))
	}
	if req.Temperature != nil {
		attrs = append(attrs, semconv.GenAIRequestTemperature(*req.Temperature))
	}
	ctx, span := t.s.tracer.Start(ctx, "chat "+spec.Model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return ctx, &modelTrace{t: t, span: span, spec: spec, start: time.Now()}
}

// event notes the first streamed output of the call.
func (m *modelTrace) event(ev model.Event) {
	if m.first != 0 {
		return
	}
	switch ev.Kind {
	case model.EventTextDelta, model.EventThinkingDelta, model.EventToolCallStart:
		m.first = max(time.Since(m.start), time.Nanosecond)
	}
}

// end closes the span with the response (nil when err) and reports the call.
func (m *modelTrace) end(ctx context.Context, resp *model.Response, u *store.Usage, err error) {
	o := &ModelCallObservation{
		Agent: m.t.agent.Name, Provider: m.spec.Provider, Model: m.spec.Model,
		Duration: time.Since(m.start), TimeToFirstToken: m.first, Err: err,
	}
	if resp != nil {
		o.Usage, o.StopReason = resp.Usage, resp.StopReason
		if u != nil {
			o.Model, o.CostMicroUSD = u.Model, u.CostMicroUSD
		}
		m.span.SetAttributes(
			semconv.GenAIResponseModel(o.Model),
			semconv.GenAIUsageInputTokens(int(resp.Usage.TotalInputTokens())),
			semconv.GenAIUsageOutputTokens(int(resp.Usage.OutputTokens)),
			semconv.GenAIUsageCacheReadInputTokens(int(resp.Usage.CachedTokens)),
			semconv.GenAIUsageCacheCreationInputTokens(int(resp.Usage.CacheWriteTokens)),
			semconv.GenAIResponseFinishReasons(resp.StopReason),
		)
	}
	endSpan(m.span, err)
	m.t.s.observer.ModelCalled(ctx, o)
}

// traceTool starts the execute_tool span of a call.
func (t *turn) traceTool(ctx context.Context, c ToolCallContent) (context.Context, func(failed bool, err error)) {
	ctx, span := t.s.tracer.Start(ctx, "execute_tool "+c.Name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		semconv.GenAIOperationNameExecuteTool,
		semconv.GenAIToolName(c.Name),
		semconv.GenAIToolCallID(c.CallID),
		semconv.GenAIToolType("function"),
		semconv.GenAIAgentName(t.agent.Name),
		semconv.GenAIConversationID(t.conv.ID.String()),
	))
	start := time.Now()
	return ctx, func(failed bool, err error) {
		if err == nil && failed {
			span.SetStatus(codes.Error, "the tool returned an error result")
		}
		endSpan(span, err)
		t.s.observer.ToolCalled(ctx, &ToolCallObservation{Agent: t.agent.Name, Tool: c.Name, Duration: time.Since(start), Failed: failed || err != nil})
	}
}

// endSpan records err (redacted) on span and ends it.
func endSpan(span trace.Span, err error) {
	if err != nil {
		msg := redact.String(err.Error())
		span.SetStatus(codes.Error, msg)
		span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
	}
	span.End()
}

// errorType is the error.type attribute: a well-known class, or the model
// error's kind, else "_OTHER" as the conventions ask.
func errorType(err error) string {
	var me *model.Error
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, store.ErrLeaseLost):
		return "lease_lost"
	case errors.As(err, &me) && me.Type != "":
		return me.Type
	case errors.As(err, &me) && me.Status != 0:
		return strconv.Itoa(me.Status)
	}
	return "_OTHER"
}
