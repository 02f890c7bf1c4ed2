package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboardhq/switchboard/store"
)

// storeCollector reads the gauges that live in the database at each scrape:
// two aggregate queries, whatever the size of the queue.
type storeCollector struct {
	st      Source
	timeout time.Duration
	log     *slog.Logger
	now     func() time.Time

	up, depth, items, approvals *prometheus.Desc
}

func newStoreCollector(o Options) *storeCollector {
	return &storeCollector{
		st: o.Store, timeout: o.ScrapeTimeout, log: o.Logger, now: o.Now,
		up: prometheus.NewDesc("switchboard_up", "1 when the process runs.", nil, nil),
		depth: prometheus.NewDesc("switchboard_queue_depth",
			"Work items by kind and state (available, running, failed), from one COUNT ... GROUP BY at each scrape.", []string{"kind", "state"}, nil),
		items: prometheus.NewDesc("switchboard_work_items",
			"Work items by state, all kinds together (kept for dashboards made before switchboard_queue_depth).", []string{"state"}, nil),
		approvals: prometheus.NewDesc("switchboard_approvals_pending",
			"Approvals and questions waiting for a person (not yet expired).", nil, nil),
	}
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.up
	ch <- c.depth
	ch <- c.items
	ch <- c.approvals
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)

	depths, err := c.st.WorkCount(ctx)
	if err != nil {
		c.log.WarnContext(ctx, "metrics: counting work", "error", err)
		ch <- prometheus.NewInvalidMetric(c.depth, err)
	} else {
		byState := map[store.WorkState]int64{store.WorkAvailable: 0, store.WorkRunning: 0, store.WorkFailed: 0}
		for _, d := range depths {
			ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(d.Count), d.Kind, string(d.State))
			byState[d.State] += d.Count
		}
		for state, n := range byState {
			ch <- prometheus.MustNewConstMetric(c.items, prometheus.GaugeValue, float64(n), string(state))
		}
	}

	pending, err := c.st.ApprovalCount(ctx, &store.ApprovalCountParams{Now: c.now()})
	if err != nil {
		c.log.WarnContext(ctx, "metrics: counting pending approvals", "error", err)
		ch <- prometheus.NewInvalidMetric(c.approvals, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.approvals, prometheus.GaugeValue, float64(pending))
}
