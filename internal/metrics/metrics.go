// Package metrics holds the service's Prometheus registry: the latency
// histograms and counters that core, the worker and delivery report through
// their Observer interfaces (core never imports Prometheus), the ack latency
// of the platforms' HTTP endpoints, and the gauges read from the store at
// each scrape (queue depth, pending approvals) by one collector.
//
// Every series is named switchboard_*; docs/reference/metrics.md, generated
// from this registry, lists them.
package metrics

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/switchboardhq/switchboard/bots/deliver"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// Source is what a scrape reads from the store: one GROUP BY over the work
// queue and one count of pending approvals.
type Source interface {
	WorkCount(ctx context.Context) ([]*store.WorkDepth, error)
	ApprovalCount(ctx context.Context, p *store.ApprovalCountParams) (int64, error)
}

// Options configures the registry.
type Options struct {
	// Store is read at each scrape; required.
	Store Source
	// ScrapeTimeout bounds the store reads of one scrape (default 2s).
	ScrapeTimeout time.Duration
	Logger        *slog.Logger
	Now           func() time.Time
}

func (o *Options) validate() error {
	switch {
	case o.Store == nil:
		return errors.New("metrics: Options.Store is required")
	case o.ScrapeTimeout < 0:
		return errors.New("metrics: Options.ScrapeTimeout must not be negative")
	}
	return nil
}

// Metrics is the registry and the instruments in it. It implements
// core.Observer and deliver.Observer.
type Metrics struct {
	reg *prometheus.Registry

	turnDuration  *prometheus.HistogramVec
	modelDuration *prometheus.HistogramVec
	firstToken    *prometheus.HistogramVec
	tokens        *prometheus.CounterVec
	cost          *prometheus.CounterVec
	toolDuration  *prometheus.HistogramVec
	ack           *prometheus.HistogramVec
	takeovers     *prometheus.CounterVec
	leaseLost     *prometheus.CounterVec
	deliveryFail  *prometheus.CounterVec
	deliveryRetry prometheus.Counter
	budgetRefused *prometheus.CounterVec
	budgets       *budgetCollector
	audit         auditMetrics
	opts          Options

	// own are the switchboard_* collectors in reg (the Go runtime and
	// process collectors aside): docs/reference/metrics.md lists them.
	own []prometheus.Collector
}

var (
	_ core.Observer    = (*Metrics)(nil)
	_ deliver.Observer = (*Metrics)(nil)
)

// Buckets, in seconds. A turn and a model call run for seconds to minutes;
// an ack should take milliseconds.
var (
	slowBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300}
	fastBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}
)

// New builds the registry: the instruments, the store collector, and the Go
// runtime and process collectors.
func New(opts Options) (*Metrics, error) {
	if opts.ScrapeTimeout == 0 {
		opts.ScrapeTimeout = 2 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		turnDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "switchboard_turn_duration_seconds", Help: "Time a turn ran, from claim to its last write, by agent and outcome (done, paused, failed, interrupted).",
			Buckets: slowBuckets,
		}, []string{"agent", "outcome"}),
		modelDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "switchboard_model_call_duration_seconds", Help: "Time a model call took, retries included, by agent, provider, model and outcome (ok, error).",
			Buckets: slowBuckets,
		}, []string{"agent", "provider", "model", "outcome"}),
		firstToken: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "switchboard_model_time_to_first_token_seconds", Help: "Time from a model call's start to its first streamed output, by agent, provider and model.",
			Buckets: slowBuckets,
		}, []string{"agent", "provider", "model"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_model_tokens_total", Help: "Tokens of model calls by agent, provider, model and type (input: billed at the base rate, cache_read, cache_write, output).",
		}, []string{"agent", "provider", "model", "type"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_model_cost_usd_total", Help: "Cost of model calls in US dollars, by agent, provider and model (models with a known price).",
		}, []string{"agent", "provider", "model"}),
		toolDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "switchboard_tool_call_duration_seconds", Help: "Time a tool handler ran, by tool and outcome (ok, error).",
			Buckets: slowBuckets,
		}, []string{"tool", "outcome"}),
		ack: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "switchboard_ack_duration_seconds", Help: "Time to answer a platform's HTTP request (an event, a click, an interaction), by platform and endpoint.",
			Buckets: fastBuckets,
		}, []string{"platform", "endpoint"}),
		takeovers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_lease_takeovers_total", Help: "Work items this instance took over from a dead attempt (an expired lease, or its own previous run), by kind.",
		}, []string{"kind"}),
		leaseLost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_lease_lost_total", Help: "Work items running here whose lease another worker took over, by kind.",
		}, []string{"kind"}),
		deliveryFail: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_delivery_failures_total", Help: "Failed deliveries to a platform, by platform and whether they are retried (retry) or given up (gone).",
		}, []string{"platform", "result"}),
		deliveryRetry: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchboard_delivery_retries_total", Help: "Deliver work items run again after a failed attempt.",
		}),
		budgetRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_budget_refusals_total", Help: "Model calls refused because they would pass a budget, by budget and period (day, month).",
		}, []string{"budget", "period"}),
		opts: opts,
	}
	m.budgets = newBudgetCollector(m)
	m.audit = newAuditMetrics()
	m.own = []prometheus.Collector{
		m.turnDuration, m.modelDuration, m.firstToken, m.tokens, m.cost, m.toolDuration, m.ack,
		m.takeovers, m.leaseLost, m.deliveryFail, m.deliveryRetry, m.budgetRefused,
		newStoreCollector(opts), m.budgets, m.audit.deliveries, m.audit.lag,
	}
	m.reg.MustRegister(m.own...)
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m, nil
}

// Registry is the registry, for tests and for adding collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	// A store that does not answer costs its own gauges, not the scrape.
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, ErrorHandling: promhttp.ContinueOnError})
}

func outcome(failed bool) string {
	if failed {
		return "error"
	}
	return "ok"
}

// TurnEnded implements core.Observer.
func (m *Metrics) TurnEnded(_ context.Context, o *core.TurnObservation) {
	m.turnDuration.WithLabelValues(o.Agent, string(o.Outcome)).Observe(o.Duration.Seconds())
}

// ModelCalled implements core.Observer.
func (m *Metrics) ModelCalled(_ context.Context, o *core.ModelCallObservation) {
	m.modelDuration.WithLabelValues(o.Agent, o.Provider, o.Model, outcome(o.Err != nil)).Observe(o.Duration.Seconds())
	if o.TimeToFirstToken > 0 {
		m.firstToken.WithLabelValues(o.Agent, o.Provider, o.Model).Observe(o.TimeToFirstToken.Seconds())
	}
	if o.Err != nil {
		return
	}
	for _, t := range []struct {
		typ string
		n   int64
	}{
		{"input", o.Usage.InputTokens}, {"cache_read", o.Usage.CachedTokens},
		{"cache_write", o.Usage.CacheWriteTokens}, {"output", o.Usage.OutputTokens},
	} {
		// Add(0) still creates the series, so every type shows from the
		// first call on.
		m.tokens.WithLabelValues(o.Agent, o.Provider, o.Model, t.typ).Add(float64(t.n))
	}
	m.cost.WithLabelValues(o.Agent, o.Provider, o.Model).Add(float64(o.CostMicroUSD) / 1e6)
}

// ToolCalled implements core.Observer.
func (m *Metrics) ToolCalled(_ context.Context, o *core.ToolCallObservation) {
	m.toolDuration.WithLabelValues(o.Tool, outcome(o.Failed)).Observe(o.Duration.Seconds())
}

// WorkTakenOver implements core.Observer.
func (m *Metrics) WorkTakenOver(_ context.Context, kind string, n int) {
	m.takeovers.WithLabelValues(kind).Add(float64(n))
}

// WorkLeaseLost implements core.Observer.
func (m *Metrics) WorkLeaseLost(_ context.Context, kind string) {
	m.leaseLost.WithLabelValues(kind).Inc()
}

// DeliveryFailed implements deliver.Observer.
func (m *Metrics) DeliveryFailed(_ context.Context, platform string, gone bool) {
	result := "retry"
	if gone {
		result = "gone"
	}
	m.deliveryFail.WithLabelValues(platform, result).Inc()
}

// DeliveryRetried implements deliver.Observer.
func (m *Metrics) DeliveryRetried(context.Context) { m.deliveryRetry.Inc() }

// Endpoint is a platform's HTTP endpoint whose answer time is its ack.
type Endpoint struct {
	Platform string // slack, discord
	Path     string // /slack/events
}

// Endpoints are the platforms' HTTP endpoints that acknowledge events.
var Endpoints = []Endpoint{
	{"slack", "/slack/events"},
	{"slack", "/slack/interactivity"},
	{"discord", "/discord/interactions"},
}

// Acks wraps the service's handler: requests to the platforms' endpoints
// have their time to answer observed as switchboard_ack_duration_seconds;
// every other request passes untouched. The time runs until the handler
// returns, which is when its answer is written.
func (m *Metrics) Acks(next http.Handler) http.Handler {
	observers := map[string]prometheus.Observer{}
	for _, e := range Endpoints {
		observers[e.Path] = m.ack.WithLabelValues(e.Platform, e.Path)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o, ok := observers[r.URL.Path]
		if !ok || r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		next.ServeHTTP(w, r)
		o.Observe(time.Since(start).Seconds())
	})
}
