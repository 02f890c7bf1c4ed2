package slack

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/slack-go/slack"

	"github.com/switchboardhq/switchboard/bots"
	"github.com/switchboardhq/switchboard/bots/slack/mrkdwn"
	"github.com/switchboardhq/switchboard/core/cards"
)

// Charts go to Slack as its data_visualization block
// (https://docs.slack.dev/reference/block-kit/blocks/data-visualization-block),
// which Slack draws itself, when the chart fits what the block documents:
// at most 6 series of at most 20 points, one point per series at each x;
// labels of at most 20 characters and titles of at most 50 (longer ones are
// cut). A numeric x axis goes natively only when its values are evenly
// spaced, since the block spaces its categories evenly. Anything else, and
// a block Slack refuses (a workspace it has not reached), is shared as the
// server-drawn PNG instead, once.

// Documented limits of the data visualization block.
const (
	chartTitleMax  = 50
	chartAxisMax   = 50
	chartLabelMax  = 20
	chartSeriesMax = 6
	chartPointsMax = 20
)

var errChartNotNative = errors.New("the chart does not fit slack's data visualization block")

// chartBlock converts a chart to a data_visualization block, or says why
// it cannot.
func chartBlock(c *cards.Chart) (*slack.DataVisualizationBlock, error) {
	if c == nil || len(c.Series) == 0 {
		return nil, fmt.Errorf("%w: no series", errChartNotNative)
	}
	if len(c.Series) > chartSeriesMax {
		return nil, fmt.Errorf("%w: %d series, at most %d", errChartNotNative, len(c.Series), chartSeriesMax)
	}
	labelled := false
	for _, s := range c.Series {
		for _, p := range s.Points {
			labelled = labelled || p.Label != ""
		}
	}
	// The categories, in order, and each point's category.
	var cats []string
	key := func(p cards.ChartPoint) string { return p.Label }
	if labelled {
		for _, s := range c.Series {
			for _, p := range s.Points {
				if !slices.Contains(cats, p.Label) {
					cats = append(cats, p.Label)
				}
			}
		}
	} else {
		var xs []float64
		for _, s := range c.Series {
			for _, p := range s.Points {
				if !slices.Contains(xs, p.X) {
					xs = append(xs, p.X)
				}
			}
		}
		slices.Sort(xs)
		if !evenlySpaced(xs) {
			return nil, fmt.Errorf("%w: its x values are not evenly spaced", errChartNotNative)
		}
		for _, x := range xs {
			cats = append(cats, strconv.FormatFloat(x, 'g', -1, 64))
		}
		key = func(p cards.ChartPoint) string { return strconv.FormatFloat(p.X, 'g', -1, 64) }
	}
	if len(cats) > chartPointsMax {
		return nil, fmt.Errorf("%w: %d points on the x axis, at most %d", errChartNotNative, len(cats), chartPointsMax)
	}
	axis := slack.NewDataVisualizationAxisConfig()
	for _, cat := range cats {
		axis.Categories = append(axis.Categories, truncateRunes(cat, chartLabelMax))
	}
	axis.XLabel, axis.YLabel = truncateRunes(c.XLabel, chartAxisMax), truncateRunes(c.YLabel, chartAxisMax)
	var series []slack.DataVisualizationDataSeries
	for i, s := range c.Series {
		name := s.Name
		if name == "" {
			name = fmt.Sprintf("Series %d", i+1)
			if len(c.Series) == 1 {
				name = firstOf(c.YLabel, "Value")
			}
		}
		at := map[string]float64{}
		for _, p := range s.Points {
			if _, dup := at[key(p)]; dup {
				return nil, fmt.Errorf("%w: series %q has two values at %q", errChartNotNative, name, key(p))
			}
			at[key(p)] = p.Y
		}
		ds := slack.NewDataVisualizationDataSeries(truncateRunes(name, chartLabelMax))
		for j, cat := range cats {
			y, ok := at[cat]
			if !ok {
				return nil, fmt.Errorf("%w: series %q has no value at %q", errChartNotNative, name, cat)
			}
			ds.Data = append(ds.Data, slack.NewDataVisualizationDataPoint(axis.Categories[j], y))
		}
		series = append(series, ds)
	}
	var chart slack.DataVisualizationChart
	switch c.Kind {
	case cards.ChartBar:
		chart = slack.NewDataVisualizationBarChart(axis, series...)
	case cards.ChartLine, "":
		chart = slack.NewDataVisualizationLineChart(axis, series...)
	default:
		return nil, fmt.Errorf("%w: kind %q", errChartNotNative, c.Kind)
	}
	b := slack.NewDataVisualizationBlock(truncateRunes(firstOf(c.Title, "Chart"), chartTitleMax), chart)
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", errChartNotNative, err)
	}
	return b, nil
}

// evenlySpaced reports whether sorted xs step by one amount (within a
// rounding error).
func evenlySpaced(xs []float64) bool {
	if len(xs) < 3 {
		return true
	}
	step := xs[1] - xs[0]
	for i := 2; i < len(xs); i++ {
		if math.Abs((xs[i]-xs[i-1])-step) > 1e-9*math.Max(1, math.Abs(step)) {
			return false
		}
	}
	return true
}

// postFiles shares m's files after its text: a chart as Slack's own chart
// block when it fits one, else (or when Slack refuses the block) its
// image; every other file uploaded.
func (a *Adapter) postFiles(ctx context.Context, w *workspace, channel, thread string, m *bots.Message) ([]bots.MessageRef, error) {
	var refs []bots.MessageRef
	for _, f := range m.Files {
		if f.Chart != nil {
			ref, err := a.postChart(ctx, w, channel, thread, f, m.Identity)
			if err == nil {
				refs = append(refs, ref)
				continue
			}
			if !errors.Is(err, errChartNotNative) && !errors.Is(err, bots.ErrRefused) {
				return refs, err
			}
			a.log.InfoContext(ctx, "posting a chart as an image", "channel", channel, "reason", err)
		}
		if err := a.uploadFiles(ctx, w, channel, thread, []bots.File{f}); err != nil {
			return refs, err
		}
	}
	return refs, nil
}

// postChart posts a chart as a data_visualization block, with its title
// (and caption) as the message's text for notifications and old clients.
func (a *Adapter) postChart(ctx context.Context, w *workspace, channel, thread string, f bots.File, id *bots.Identity) (bots.MessageRef, error) {
	b, err := chartBlock(f.Chart)
	if err != nil {
		return bots.MessageRef{}, err
	}
	text := "📊 " + firstOf(f.Title, f.Chart.Title, "Chart")
	blocks := []slack.Block{b}
	if f.Caption != "" {
		caption := mrkdwn.Convert(f.Caption)
		text += "\n" + caption
		blocks = append(blocks, slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, truncateRunes(caption, 3000), false, false)))
	}
	ts, err := a.postPart(ctx, w, channel, thread, part{text: text, blocks: blocks}, id)
	if err != nil {
		return bots.MessageRef{}, err
	}
	return bots.MessageRef{Channel: channel, ID: ts}, nil
}
