package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboardhq/switchboard/internal/telemetry"
	"github.com/switchboardhq/switchboard/internal/testenv"
	"github.com/switchboardhq/switchboard/store"
)

// TestObservability runs turns on Slack through the real service and reads
// what an operator would: the spans of the turns (recorded with the
// OpenTelemetry SDK's in-memory SpanRecorder) with their GenAI attributes,
// GET /metrics parsed as Prometheus text, and JSON log lines carrying the
// trace id of the turn they were logged in.
func TestObservability(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db databaseFunc) {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		var logs testenv.Buffer
		logger := slog.New(telemetry.LogHandler(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
		script, err := filepath.Abs(filepath.Join("testdata", "audit_e2e.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		e := startSlack(t, db(t), envOptions{env: map[string]string{"SWITCHBOARD_MODEL": "scripted:" + script}, tracer: tp, logger: logger})
		addAuditTools(t, e.app.Registry)
		ctx := context.Background()

		say := func(channel, ts, text string) {
			t.Helper()
			e.mustPost(newEvent("Ev"+channel, mention(channel, ts, "", alice, text)))
		}
		say("C0LOOK", "1700003000.000001", "please look up the weather")
		say("C0FETCH", "1700003000.000002", "please fetch the page")
		say("C0DEPLOY", "1700003000.000003", "please deploy prod") // waits for a person
		e.waitReply("C0LOOK", "Looked it up.")
		e.waitReply("C0FETCH", "The fetch failed.")
		e.waitIdle()
		// Two items of a kind of their own, due tomorrow: the queue depth
		// shows them by kind and state.
		for range 2 {
			if _, err := e.store.WorkEnqueue(ctx, &store.WorkEnqueueParams{Kind: "observe_probe", RunAt: time.Now().Add(24 * time.Hour), Now: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}

		// --- Spans ---
		spans := rec.Ended()
		lookupTurn := checkSpans(t, spans, "audit_lookup", "call-lookup")
		checkSpans(t, spans, "audit_fetch", "call-fetch")

		// --- Logs: a line logged inside a turn carries its trace id. ---
		found := false
		for _, line := range bytes.Split(logs.Bytes(), []byte("\n")) {
			var l struct {
				Msg     string `json:"msg"`
				TraceID string `json:"trace_id"`
				SpanID  string `json:"span_id"`
			}
			if json.Unmarshal(line, &l) != nil || l.Msg != "turn ended" {
				continue
			}
			if l.TraceID == lookupTurn.SpanContext().TraceID().String() && l.SpanID == lookupTurn.SpanContext().SpanID().String() {
				found = true
			}
		}
		if !found {
			t.Errorf("no JSON log line \"turn ended\" with trace_id %s and span_id %s of the lookup turn; the log:\n%s",
				lookupTurn.SpanContext().TraceID(), lookupTurn.SpanContext().SpanID(), logs.String())
		}

		// --- Metrics ---
		fams := scrape(t, e)
		agent := lookupTurn.Attributes()
		agentName := attrOf(agent, "gen_ai.agent.name").AsString()
		for _, c := range []struct {
			name   string
			labels map[string]string
			check  func(v float64) bool
			want   string
		}{
			{"switchboard_up", nil, eqTo(1), "1"},
			{"switchboard_turn_duration_seconds", map[string]string{"agent": agentName, "outcome": "done"}, atLeast(2), "2 or more turns done (lookup, fetch, and their closing lines)"},
			{"switchboard_turn_duration_seconds", map[string]string{"agent": agentName, "outcome": "paused"}, eqTo(1), "1 turn paused (deploy waits for a person)"},
			{"switchboard_model_call_duration_seconds", map[string]string{"provider": "scripted", "outcome": "ok"}, atLeast(5), "5 or more model calls"},
			{"switchboard_model_time_to_first_token_seconds", map[string]string{"provider": "scripted"}, atLeast(5), "a first token for each model call"},
			{"switchboard_model_tokens_total", map[string]string{"agent": agentName, "type": "output"}, atLeast(1), "output tokens counted"},
			{"switchboard_model_tokens_total", map[string]string{"agent": agentName, "type": "input"}, atLeast(1), "input tokens counted"},
			{"switchboard_tool_call_duration_seconds", map[string]string{"tool": "audit_lookup", "outcome": "ok"}, eqTo(1), "1 lookup call, ok"},
			{"switchboard_tool_call_duration_seconds", map[string]string{"tool": "audit_fetch", "outcome": "error"}, eqTo(1), "1 fetch call, failed"},
			{"switchboard_ack_duration_seconds", map[string]string{"platform": "slack", "endpoint": "/slack/events"}, eqTo(3), "3 acks of the 3 events posted"},
			{"switchboard_approvals_pending", nil, eqTo(1), "1 approval pending (deploy)"},
			{"switchboard_queue_depth", map[string]string{"kind": "observe_probe", "state": "available"}, eqTo(2), "2 probe items available"},
			{"switchboard_work_items", map[string]string{"state": "available"}, atLeast(2), "the probe items in the by-state total"},
		} {
			v, ok := sample(fams, c.name, c.labels)
			if !ok {
				t.Errorf("GET /metrics has no %s%v", c.name, c.labels)
				continue
			}
			if !c.check(v) {
				t.Errorf("%s%v = %v, want %s", c.name, c.labels, v, c.want)
			}
		}
		if _, ok := sample(fams, "switchboard_lease_takeovers_total", nil); ok {
			t.Errorf("switchboard_lease_takeovers_total has a series although nothing was taken over")
		}
	})
}

// checkSpans finds the turn that called tool (by its call id) and checks its
// spans: an invoke_agent span, with a chat span and the execute_tool span
// as its children, carrying the GenAI attributes. It returns the turn span.
func checkSpans(t *testing.T, spans []sdktrace.ReadOnlySpan, tool, callID string) sdktrace.ReadOnlySpan {
	t.Helper()
	var toolSpan sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == "execute_tool "+tool && attrOf(s.Attributes(), "gen_ai.tool.call.id").AsString() == callID {
			toolSpan = s
		}
	}
	if toolSpan == nil {
		t.Fatalf("no span \"execute_tool %s\" with gen_ai.tool.call.id %s among %d spans: %v", tool, callID, len(spans), spanNames(spans))
	}
	for k, want := range map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool, "gen_ai.tool.type": "function"} {
		if got := attrOf(toolSpan.Attributes(), attribute.Key(k)).Emit(); got != want {
			t.Errorf("execute_tool %s: %s = %q, want %q", tool, k, got, want)
		}
	}
	var turn sdktrace.ReadOnlySpan
	var chats []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.SpanContext().SpanID() == toolSpan.Parent().SpanID() {
			turn = s
		}
	}
	if turn == nil || !strings.HasPrefix(turn.Name(), "invoke_agent ") {
		t.Fatalf("the parent of execute_tool %s is %v, want an invoke_agent span", tool, turn)
	}
	for _, s := range spans {
		if s.Parent().SpanID() == turn.SpanContext().SpanID() && strings.HasPrefix(s.Name(), "chat ") {
			chats = append(chats, s)
		}
	}
	if got := attrOf(turn.Attributes(), "gen_ai.operation.name").AsString(); got != "invoke_agent" {
		t.Errorf("%s: gen_ai.operation.name = %q, want invoke_agent", turn.Name(), got)
	}
	if turn.Status().Code.String() == "Error" {
		t.Errorf("%s ended with an error status: %v", turn.Name(), turn.Status())
	}
	// The model asks for the tool, then writes the closing line: two calls.
	if len(chats) != 2 {
		t.Fatalf("the turn of %s has %d chat spans, want 2 (the call for the tool, the closing line)", tool, len(chats))
	}
	for _, c := range chats {
		a := c.Attributes()
		if c.SpanKind() != trace.SpanKindClient {
			t.Errorf("%s: kind %v, want client", c.Name(), c.SpanKind())
		}
		for k, want := range map[string]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "scripted"} {
			if got := attrOf(a, attribute.Key(k)).AsString(); got != want {
				t.Errorf("%s: %s = %q, want %q", c.Name(), k, got, want)
			}
		}
		if m := attrOf(a, "gen_ai.request.model").AsString(); m == "" || c.Name() != "chat "+m {
			t.Errorf("%s: gen_ai.request.model = %q, want the model the span is named for", c.Name(), m)
		}
		if in, out := attrOf(a, "gen_ai.usage.input_tokens").AsInt64(), attrOf(a, "gen_ai.usage.output_tokens").AsInt64(); in <= 0 || out <= 0 {
			t.Errorf("%s: gen_ai.usage.input_tokens %d, output_tokens %d; want both above 0", c.Name(), in, out)
		}
		if r := attrOf(a, "gen_ai.response.finish_reasons").AsStringSlice(); len(r) != 1 || r[0] == "" {
			t.Errorf("%s: gen_ai.response.finish_reasons = %v, want one reason", c.Name(), r)
		}
		if c.SpanContext().TraceID() != turn.SpanContext().TraceID() {
			t.Errorf("%s is in trace %s, its turn in %s", c.Name(), c.SpanContext().TraceID(), turn.SpanContext().TraceID())
		}
	}
	if !chats[0].EndTime().Before(toolSpan.StartTime()) && !chats[0].EndTime().Equal(toolSpan.StartTime()) {
		t.Errorf("the tool ran before the model call that asked for it ended")
	}
	return turn
}

func attrOf(attrs []attribute.KeyValue, key attribute.Key) attribute.Value {
	for _, a := range attrs {
		if a.Key == key {
			return a.Value
		}
	}
	return attribute.Value{}
}

func spanNames(spans []sdktrace.ReadOnlySpan) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name()
	}
	return out
}

// scrape reads GET /metrics and parses it.
func scrape(t *testing.T, e *slackEnv) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := e.http.Get(e.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics answered %d: %s", resp.StatusCode, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("GET /metrics is not Prometheus text: %v\n%s", err, body)
	}
	return fams
}

// sample sums the value of name over the series whose labels include
// labels: a counter's or gauge's value, a histogram's count.
func sample(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
	var sum float64
	found := false
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue next
			}
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum, found
}

func eqTo(want float64) func(float64) bool    { return func(v float64) bool { return v == want } }
func atLeast(want float64) func(float64) bool { return func(v float64) bool { return v >= want } }
