package slack

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/cards"
)

func pts(labels string, ys ...float64) []cards.ChartPoint {
	var out []cards.ChartPoint
	for i, l := range strings.Split(labels, ",") {
		out = append(out, cards.ChartPoint{Label: l, Y: ys[i]})
	}
	return out
}

func xs(x []float64, ys ...float64) []cards.ChartPoint {
	var out []cards.ChartPoint
	for i := range x {
		out = append(out, cards.ChartPoint{X: x[i], Y: ys[i]})
	}
	return out
}

// chartBlock makes the documented data_visualization block when the chart
// fits it, and says why not otherwise (the chart is then an image).
func TestChartBlock(t *testing.T) {
	many := make([]cards.ChartSeries, 7)
	for i := range many {
		many[i] = cards.ChartSeries{Name: string(rune('a' + i)), Points: pts("x", 1)}
	}
	long := strings.Repeat("é", 60)
	cases := []struct {
		name  string
		chart cards.Chart
		want  string // JSON of the block, or "" when it must not fit
	}{
		{"bar with labels", cards.Chart{Title: "Sales", Kind: cards.ChartBar, XLabel: "Month", YLabel: "EUR", Series: []cards.ChartSeries{
			{Name: "2025", Points: pts("Jan,Feb", 1, 2)}, {Name: "2026", Points: pts("Feb,Jan", 4, 3)},
		}}, `{"type":"data_visualization","title":"Sales","chart":{"type":"bar","series":[{"name":"2025","data":[{"label":"Jan","value":1},{"label":"Feb","value":2}]},{"name":"2026","data":[{"label":"Jan","value":3},{"label":"Feb","value":4}]}],"axis_config":{"categories":["Jan","Feb"],"x_label":"Month","y_label":"EUR"}}}`},
		{"line, evenly spaced numbers, unnamed series", cards.Chart{Title: "Load", Kind: cards.ChartLine, YLabel: "ms", Series: []cards.ChartSeries{
			{Points: xs([]float64{3, 1, 2}, 30, 10, 20)},
		}}, `{"type":"data_visualization","title":"Load","chart":{"type":"line","series":[{"name":"ms","data":[{"label":"1","value":10},{"label":"2","value":20},{"label":"3","value":30}]}],"axis_config":{"categories":["1","2","3"],"y_label":"ms"}}}`},
		{"long title cut", cards.Chart{Title: long, Series: []cards.ChartSeries{{Name: "s", Points: pts("a", 1)}}},
			`{"type":"data_visualization","title":"` + strings.Repeat("é", 49) + `…","chart":{"type":"line","series":[{"name":"s","data":[{"label":"a","value":1}]}],"axis_config":{"categories":["a"]}}}`},
		{"uneven numbers", cards.Chart{Title: "t", Series: []cards.ChartSeries{{Name: "s", Points: xs([]float64{1, 2, 10}, 1, 2, 3)}}}, ""},
		{"seven series", cards.Chart{Title: "t", Series: many}, ""},
		{"21 categories", cards.Chart{Title: "t", Series: []cards.ChartSeries{{Name: "s", Points: xs([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)}}}, ""},
		{"a series missing a category", cards.Chart{Title: "t", Series: []cards.ChartSeries{{Name: "a", Points: pts("x,y", 1, 2)}, {Name: "b", Points: pts("x", 1)}}}, ""},
		{"duplicate series names", cards.Chart{Title: "t", Series: []cards.ChartSeries{{Name: "a", Points: pts("x", 1)}, {Name: "a", Points: pts("x", 2)}}}, ""},
		{"unknown kind", cards.Chart{Title: "t", Kind: "pie", Series: []cards.ChartSeries{{Name: "a", Points: pts("x", 1)}}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := chartBlock(&tc.chart)
			if tc.want == "" {
				if !errors.Is(err, errChartNotNative) {
					t.Fatalf("want errChartNotNative, got block %+v, err %v", b, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("want a block, got %v", err)
			}
			got, _ := json.Marshal(b)
			if string(got) != tc.want {
				t.Fatalf("block:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
