package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboardhq/switchboard/core/audit"
)

// The audit sinks' series: what reached each kind of sink, what failed,
// and how long after its write a row arrived. A webhook's backlog is the
// audit_deliver kind of switchboard_queue_depth.

var _ audit.Observer = (*Metrics)(nil)

type auditMetrics struct {
	deliveries *prometheus.CounterVec
	lag        *prometheus.HistogramVec
}

func newAuditMetrics() auditMetrics {
	return auditMetrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_audit_sink_deliveries_total",
			Help: "Audit rows written to a sink, by sink kind (file, webhook, otlp) and result (delivered; failed: an attempt that is retried; given_up: not tried again).",
		}, []string{"sink", "result"}),
		lag: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "switchboard_audit_sink_lag_seconds",
			Help:    "Time from an audit row's write to its arrival at a sink, retries included, by sink kind.",
			Buckets: []float64{0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600},
		}, []string{"sink"}),
	}
}

// AuditSinkDelivered implements audit.Observer.
func (m *Metrics) AuditSinkDelivered(_ context.Context, kind string, lag time.Duration) {
	m.audit.deliveries.WithLabelValues(kind, "delivered").Inc()
	m.audit.lag.WithLabelValues(kind).Observe(max(lag, 0).Seconds())
}

// AuditSinkFailed implements audit.Observer.
func (m *Metrics) AuditSinkFailed(_ context.Context, kind string, final bool) {
	result := "failed"
	if final {
		result = "given_up"
	}
	m.audit.deliveries.WithLabelValues(kind, result).Inc()
}
