package metrics

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboardhq/switchboard/core"
)

// BudgetSource reads the budgets' spend at each scrape (core.Service.Budgets).
type BudgetSource func(ctx context.Context) ([]core.BudgetStatus, error)

// budgetCollector reads each declared budget's day and month at each
// scrape: one row per budget and period.
type budgetCollector struct {
	m                                  *Metrics
	src                                atomic.Pointer[BudgetSource]
	spent, reserved, limit, limitToken *prometheus.Desc
}

func newBudgetCollector(m *Metrics) *budgetCollector {
	labels := []string{"budget", "period"}
	return &budgetCollector{
		m:          m,
		spent:      prometheus.NewDesc("switchboard_budget_spent_usd", "What a budget has spent in its current day or month (period), in US dollars.", labels, nil),
		reserved:   prometheus.NewDesc("switchboard_budget_reserved_usd", "What model calls in flight hold against a budget (their worst case), in US dollars.", labels, nil),
		limit:      prometheus.NewDesc("switchboard_budget_limit_usd", "A budget's limit for its current day or month, extensions included, in US dollars.", labels, nil),
		limitToken: prometheus.NewDesc("switchboard_budget_limit_tokens", "A budget's token limit for its current day or month, extensions included.", labels, nil),
	}
}

func (c *budgetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.spent
	ch <- c.reserved
	ch <- c.limit
	ch <- c.limitToken
}

func (c *budgetCollector) Collect(ch chan<- prometheus.Metric) {
	src := c.src.Load()
	if src == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.m.opts.ScrapeTimeout)
	defer cancel()
	bs, err := (*src)(ctx)
	if err != nil {
		c.m.opts.Logger.WarnContext(ctx, "metrics: reading budgets", "error", err)
		ch <- prometheus.NewInvalidMetric(c.spent, err)
		return
	}
	for _, b := range bs {
		period, _, _ := strings.Cut(b.Period, ":")
		ch <- prometheus.MustNewConstMetric(c.spent, prometheus.GaugeValue, b.SpentUSD, b.Key, period)
		ch <- prometheus.MustNewConstMetric(c.reserved, prometheus.GaugeValue, b.ReservedUSD, b.Key, period)
		if b.LimitUSD > 0 {
			ch <- prometheus.MustNewConstMetric(c.limit, prometheus.GaugeValue, b.LimitUSD+b.ExtraUSD, b.Key, period)
		}
		if b.LimitTokens > 0 {
			ch <- prometheus.MustNewConstMetric(c.limitToken, prometheus.GaugeValue, float64(b.LimitTokens+b.ExtraTokens), b.Key, period)
		}
	}
}

// SetBudgets gives the collector its source, once the service that reads
// the budgets exists.
func (m *Metrics) SetBudgets(src BudgetSource) { m.budgets.src.Store(&src) }

// BudgetRefused counts a model call refused by a budget.
func (m *Metrics) BudgetRefused(budget, period string) {
	m.budgetRefused.WithLabelValues(budget, period).Inc()
}

var _ core.BudgetObserver = (*Metrics)(nil)
