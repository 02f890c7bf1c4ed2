package headless

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboardhq/switchboard/core/cards"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/headless/chart"
)

// RenderChartName is the name of the chart tool.
const RenderChartName = "render_chart"

// ChartInput is the input of render_chart.
type ChartInput struct {
	Title  string        `json:"title" jsonschema:"a short title naming what is shown"`
	Kind   string        `json:"kind,omitempty" jsonschema:"line for a trend over an ordered x (time, steps); bar to compare categories"`
	Series []ChartSeries `json:"series" jsonschema:"one entry per line or per set of bars; at most 20 series and 5000 points in all"`
	Labels ChartLabels   `json:"labels,omitzero" jsonschema:"axis titles"`
}

// ChartSeries is one line, or one set of bars.
type ChartSeries struct {
	Name   string       `json:"name,omitempty" jsonschema:"legend entry; needed when there is more than one series"`
	Points []ChartPoint `json:"points"`
}

// ChartPoint is one value. X is a label (string) or a number (float64).
type ChartPoint struct {
	X any     `json:"x" jsonschema:"a label such as \"Mar\" or \"2024-Q1\", or a number"`
	Y float64 `json:"y"`
}

// ChartLabels are the axis titles.
type ChartLabels struct {
	X string `json:"x,omitempty" jsonschema:"x axis title"`
	Y string `json:"y,omitempty" jsonschema:"y axis title, with the unit"`
}

// ChartRendered is what the model sees after a server render; the image
// itself goes to the platform as an attachment.
type ChartRendered struct {
	Rendered bool `json:"rendered"`
	Points   int  `json:"points"`
	Series   int  `json:"series"`

	attachment tool.Attachment
}

// Attachments hands the PNG to the platform (tool.Attacher).
func (c ChartRendered) Attachments() []tool.Attachment {
	return []tool.Attachment{c.attachment}
}

func renderChartDef(tier tool.Tier) tool.Def {
	return tool.Def{
		Name: RenderChartName,
		Description: "Show the user a line or bar chart. " +
			"Each point has an x (a label such as \"Mar\", or a number) and a numeric y; use labels or numbers throughout, not both. " +
			"Prefer it to a table when the shape of the data matters.",
		Risk:       tool.RiskLow,
		Tier:       tier,
		SchemaFunc: chartSchema,
	}
}

func chartSchema(s *jsonschema.Schema) error {
	p := s.Properties
	series := p["series"]
	if p["title"] == nil || p["kind"] == nil || series == nil || series.Items == nil {
		return errors.New("render_chart schema lacks title, kind or series")
	}
	p["title"].MaxLength = jsonschema.Ptr(chart.MaxTextLen)
	p["kind"].Enum = []any{string(chart.KindLine), string(chart.KindBar)}
	p["kind"].Default = json.RawMessage(`"line"`)
	series.MinItems = jsonschema.Ptr(1)
	series.MaxItems = jsonschema.Ptr(chart.MaxSeries)
	sp := series.Items.Properties
	sp["name"].MaxLength = jsonschema.Ptr(chart.MaxTextLen)
	sp["points"].MinItems = jsonschema.Ptr(1)
	sp["points"].MaxItems = jsonschema.Ptr(chart.MaxPoints)
	x := sp["points"].Items.Properties["x"]
	x.Types = []string{"string", "number"}
	x.MaxLength = jsonschema.Ptr(chart.MaxTextLen) // applies to labels only
	for _, l := range p["labels"].Properties {
		l.MaxLength = jsonschema.Ptr(chart.MaxTextLen)
	}
	return nil
}

// spec converts the model's input to a chart spec. If any x is a label,
// numbers are read as labels too: a model writing 2023 among "2024-Q1"
// means a category.
func (in ChartInput) spec() (chart.Spec, error) {
	labelled := false
	for _, se := range in.Series {
		for _, p := range se.Points {
			if _, ok := p.X.(string); ok {
				labelled = true
			}
		}
	}
	spec := chart.Spec{
		Title:  strings.TrimSpace(in.Title),
		Kind:   chart.Kind(in.Kind),
		XLabel: in.Labels.X,
		YLabel: in.Labels.Y,
		Series: make([]chart.Series, len(in.Series)),
	}
	for i, se := range in.Series {
		pts := make([]chart.Point, len(se.Points))
		for j, p := range se.Points {
			pt := chart.Point{Y: p.Y}
			switch x := p.X.(type) {
			case string:
				pt.Label = strings.TrimSpace(x)
				if pt.Label == "" {
					return chart.Spec{}, fmt.Errorf("series[%d].points[%d].x: a label must not be blank", i, j)
				}
			case float64:
				if labelled {
					pt.Label = strconv.FormatFloat(x, 'g', -1, 64)
				} else {
					pt.X = x
				}
			default:
				return chart.Spec{}, fmt.Errorf("series[%d].points[%d].x: must be a label or a number, got %T", i, j, p.X)
			}
			pts[j] = pt
		}
		spec.Series[i] = chart.Series{Name: strings.TrimSpace(se.Name), Points: pts}
	}
	if err := spec.Validate(); err != nil {
		return chart.Spec{}, fmt.Errorf("invalid chart: %w", err)
	}
	return spec, nil
}

// renderChartFrontend hands the data to the client, which draws it.
func renderChartFrontend(_ context.Context, _ *tool.Request, in ChartInput) (ChartRendered, error) {
	if _, err := in.spec(); err != nil {
		return ChartRendered{}, err
	}
	payload, err := json.Marshal(in)
	if err != nil {
		return ChartRendered{}, fmt.Errorf("encoding chart for the client: %w", err)
	}
	return ChartRendered{}, tool.PauseWith(tool.Pause{
		Kind:    tool.PauseFrontend,
		Prompt:  in.Title,
		Payload: payload,
	})
}

// renderChartServer draws the chart here and attaches the PNG.
func renderChartServer(ctx context.Context, _ *tool.Request, in ChartInput) (ChartRendered, error) {
	spec, err := in.spec()
	if err != nil {
		return ChartRendered{}, err
	}
	if err := ctx.Err(); err != nil {
		return ChartRendered{}, fmt.Errorf("rendering chart: %w", err)
	}
	png, err := chart.Render(spec)
	if err != nil {
		return ChartRendered{}, err
	}
	return ChartRendered{
		Rendered: true,
		Points:   spec.Points(),
		Series:   len(spec.Series),
		attachment: tool.Attachment{
			Name:     fileName(spec.Title) + ".png",
			MimeType: "image/png",
			Data:     png,
			Title:    spec.Title,
			Chart:    chartData(spec),
		},
	}, nil
}

// chartData is the spec as the platforms read it, kept beside the image
// for those that draw charts natively.
func chartData(spec chart.Spec) *cards.Chart {
	c := &cards.Chart{Title: spec.Title, Kind: string(spec.Kind), XLabel: spec.XLabel, YLabel: spec.YLabel}
	if c.Kind == "" {
		c.Kind = cards.ChartLine
	}
	for _, se := range spec.Series {
		s := cards.ChartSeries{Name: se.Name, Points: make([]cards.ChartPoint, len(se.Points))}
		for i, p := range se.Points {
			s.Points[i] = cards.ChartPoint{Label: p.Label, X: p.X, Y: p.Y}
		}
		c.Series = append(c.Series, s)
	}
	return c
}

// fileName makes a safe file name from a title: letters and digits joined
// by dashes, at most 60 characters, "chart" when nothing is left.
func fileName(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		} else {
			dash = true
		}
		if b.Len() >= 60 {
			break
		}
	}
	if b.Len() == 0 {
		return "chart"
	}
	return b.String()
}
