package metrics

import (
	"context"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// update rewrites docs/reference/metrics.md instead of comparing it:
// go test ./internal/metrics -run TestReference -update
var update = flag.Bool("update", false, "rewrite docs/reference/metrics.md from the registry")

// referenceSource answers a scrape with one row of each kind of gauge.
type referenceSource struct{}

func (referenceSource) WorkCount(context.Context) ([]*store.WorkDepth, error) {
	return []*store.WorkDepth{{Kind: "turn", State: store.WorkAvailable, Count: 1}}, nil
}

func (referenceSource) ApprovalCount(context.Context, *store.ApprovalCountParams) (int64, error) {
	return 0, nil
}

var descName = regexp.MustCompile(`fqName: "([^"]+)"`)
var descLabels = regexp.MustCompile(`variableLabels: \{([^}]*)\}`)

// metricsReference renders docs/reference/metrics.md: every family the
// switchboard_* collectors of New declare (Describe), with the type and help
// the registry serves (Gather, after one observation of each instrument, so
// that vectors without a series yet are served too).
func metricsReference(t *testing.T) string {
	t.Helper()
	m, err := New(Options{Store: referenceSource{}, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m.TurnEnded(ctx, &core.TurnObservation{Agent: "a", Outcome: core.TurnOutcomeDone, Duration: time.Second})
	m.ModelCalled(ctx, &core.ModelCallObservation{Agent: "a", Provider: "p", Model: "m", Duration: time.Second, TimeToFirstToken: time.Millisecond})
	m.ToolCalled(ctx, &core.ToolCallObservation{Agent: "a", Tool: "t", Duration: time.Millisecond})
	m.WorkTakenOver(ctx, "turn", 1)
	m.WorkLeaseLost(ctx, "turn")
	m.DeliveryFailed(ctx, "slack", false)
	m.DeliveryRetried(ctx)
	m.BudgetRefused("agent:a", "day")
	m.AuditSinkDelivered(ctx, "webhook", time.Second)
	m.SetBudgets(func(context.Context) ([]core.BudgetStatus, error) {
		return []core.BudgetStatus{{Key: "agent:a", Period: "day:2026-12-07", LimitUSD: 1, LimitTokens: 1000}}, nil
	})
	m.Acks(http.NotFoundHandler())

	families, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]*dto.MetricFamily{}
	for _, f := range families {
		served[f.GetName()] = f
	}
	type row struct{ name, typ, labels, help string }
	var rows []row
	for _, c := range m.own {
		ch := make(chan *prometheus.Desc, 16)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			s := d.String()
			name := descName.FindStringSubmatch(s)[1]
			f, ok := served[name]
			if !ok {
				t.Fatalf("%s is declared but the registry does not serve it: observe it once in metricsReference", name)
			}
			var labels []string
			if l := descLabels.FindStringSubmatch(s); l != nil && l[1] != "" {
				for _, n := range strings.Split(l[1], ",") {
					labels = append(labels, "`"+n+"`")
				}
			}
			rows = append(rows, row{name, strings.ToLower(f.GetType().String()), strings.Join(labels, ", "), f.GetHelp()})
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return strings.Compare(a.name, b.name) })

	var b strings.Builder
	b.WriteString("# Metrics\n\n")
	b.WriteString("<!-- Generated from internal/metrics by `go test ./internal/metrics -run TestReference -update`; do not edit. -->\n\n")
	b.WriteString("What `GET /metrics` serves (behind `SWITCHBOARD_API_TOKEN` when it is set;\nsee [Observability](../operate.md#observability)). Besides these, the Go\nruntime (`go_*`) and process (`process_*`) collectors are registered.\n\n")
	b.WriteString("| metric | type | labels | help |\n| --- | --- | --- | --- |\n")
	for _, r := range rows {
		b.WriteString("| `" + r.name + "` | " + r.typ + " | " + r.labels + " | " + strings.ReplaceAll(r.help, "|", `\|`) + " |\n")
	}
	return b.String()
}

func TestReferenceMetrics(t *testing.T) {
	page, err := filepath.Abs(filepath.Join("..", "..", "docs", "reference", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	got := metricsReference(t)
	if *update {
		if err := os.WriteFile(page, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		w, g := strings.Split(string(want), "\n"), strings.Split(got, "\n")
		i := 0
		for i < len(w) && i < len(g) && w[i] == g[i] {
			i++
		}
		t.Errorf("docs/reference/metrics.md is stale: regenerate it with\n\tgo test ./internal/metrics -run TestReference -update\nfirst difference at line %s", strconv.Itoa(i+1))
	}
}
