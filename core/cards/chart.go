package cards

// Chart is the data of a chart drawn on the server (render_chart), kept
// beside its PNG so that a platform that draws charts itself can show it
// natively (Slack's data_visualization block) and every other one shows
// the image. Points use labels (a categorical x axis) or numbers
// throughout.
type Chart struct {
	Title  string        `json:"title"`
	Kind   string        `json:"kind"` // "line" or "bar"
	XLabel string        `json:"x_label,omitempty"`
	YLabel string        `json:"y_label,omitempty"`
	Series []ChartSeries `json:"series"`
}

// ChartSeries is one line, or one set of bars.
type ChartSeries struct {
	Name   string       `json:"name,omitempty"`
	Points []ChartPoint `json:"points"`
}

// ChartPoint is one value at a label, or at the number X.
type ChartPoint struct {
	Label string  `json:"label,omitempty"`
	X     float64 `json:"x,omitempty"`
	Y     float64 `json:"y"`
}

// Chart kinds.
const (
	ChartLine = "line"
	ChartBar  = "bar"
)
