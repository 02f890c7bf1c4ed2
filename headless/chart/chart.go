// Package chart renders charts to PNG on the server, for contexts with no
// client to draw them (Slack, Discord, the terminal, scheduled runs), and
// sparklines for cards. It draws with gonum.org/v1/plot.
//
// Input comes from a model, so every size is bounded (series, points,
// categories, text, pixels) and a bad spec is an error that says which
// part is wrong, never a panic or a giant image.
package chart

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Kind is the chart type.
type Kind string

const (
	KindLine Kind = "line"
	KindBar  Kind = "bar"
)

// Limits on a spec. They keep a model's request from producing an
// unreadable chart or a render that takes seconds.
const (
	MaxSeries     = 20
	MaxPoints     = 5000 // over all series
	MaxCategories = 200  // distinct x labels on a categorical axis
	MaxTextLen    = 200  // title, axis labels, series names, x labels (in characters)
	MaxWidth      = 4096 // pixels
	MaxHeight     = 4096
	MinWidth      = 64
	MinHeight     = 64
	DefaultWidth  = 960
	DefaultHeight = 540
)

// dpi maps pixels to the points plot works in; 96 makes a 12pt label 16px.
const dpi = 96

// Point is one value. A point with a Label sits on a categorical x axis;
// without one, at the number X. A chart uses one or the other throughout.
type Point struct {
	X     float64
	Label string
	Y     float64
}

// Series is one named line, or one set of bars.
type Series struct {
	Name   string
	Points []Point
}

// Spec describes a chart.
type Spec struct {
	Title  string
	Kind   Kind // default KindLine
	Series []Series
	XLabel string
	YLabel string
	Width  int // pixels; default DefaultWidth
	Height int // pixels; default DefaultHeight
}

// withDefaults fills the zero fields.
func (s Spec) withDefaults() Spec {
	if s.Kind == "" {
		s.Kind = KindLine
	}
	if s.Width == 0 {
		s.Width = DefaultWidth
	}
	if s.Height == 0 {
		s.Height = DefaultHeight
	}
	return s
}

// Validate reports every problem with the spec (after defaults), naming
// the field, e.g. "Series[2].Points[7].Y: must be a finite number".
func (s Spec) Validate() error {
	s = s.withDefaults()
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if s.Kind != KindLine && s.Kind != KindBar {
		add("Kind: %q must be line or bar", s.Kind)
	}
	if s.Width < MinWidth || s.Width > MaxWidth {
		add("Width: %d pixels must be between %d and %d", s.Width, MinWidth, MaxWidth)
	}
	if s.Height < MinHeight || s.Height > MaxHeight {
		add("Height: %d pixels must be between %d and %d", s.Height, MinHeight, MaxHeight)
	}
	for _, f := range []struct{ name, v string }{{"Title", s.Title}, {"XLabel", s.XLabel}, {"YLabel", s.YLabel}} {
		if n := utf8.RuneCountInString(f.v); n > MaxTextLen {
			add("%s: %d characters, at most %d", f.name, n, MaxTextLen)
		}
	}
	if len(s.Series) == 0 {
		add("Series: at least one series is needed")
	}
	if len(s.Series) > MaxSeries {
		add("Series: %d series, at most %d", len(s.Series), MaxSeries)
	}
	total, labelled, numeric := 0, 0, 0
	for i, se := range s.Series {
		if n := utf8.RuneCountInString(se.Name); n > MaxTextLen {
			add("Series[%d].Name: %d characters, at most %d", i, n, MaxTextLen)
		}
		if len(se.Points) == 0 {
			add("Series[%d].Points: at least one point is needed", i)
		}
		total += len(se.Points)
		seen := map[string]bool{}
		for j, p := range se.Points {
			if math.IsNaN(p.Y) || math.IsInf(p.Y, 0) {
				add("Series[%d].Points[%d].Y: must be a finite number", i, j)
			}
			if p.Label != "" {
				labelled++
				if n := utf8.RuneCountInString(p.Label); n > MaxTextLen {
					add("Series[%d].Points[%d].Label: %d characters, at most %d", i, j, n, MaxTextLen)
				}
				if seen[p.Label] {
					add("Series[%d].Points[%d].Label: %q appears twice in the series", i, j, p.Label)
				}
				seen[p.Label] = true
			} else {
				numeric++
				if math.IsNaN(p.X) || math.IsInf(p.X, 0) {
					add("Series[%d].Points[%d].X: must be a finite number", i, j)
				}
			}
		}
	}
	if total > MaxPoints {
		add("Series: %d points in all, at most %d", total, MaxPoints)
	}
	if labelled > 0 && numeric > 0 {
		add("Series: %d points have a label and %d a numeric x; use one kind of x for the whole chart", labelled, numeric)
	}
	if len(errs) == 0 {
		if cats := categories(s); len(cats) > MaxCategories {
			add("Series: %d distinct x values on a categorical axis, at most %d", len(cats), MaxCategories)
		}
	}
	return errors.Join(errs...)
}

// Points is the number of points in the spec.
func (s Spec) Points() int {
	n := 0
	for _, se := range s.Series {
		n += len(se.Points)
	}
	return n
}

// categorical reports whether the x axis holds labels. Bar charts always
// do: a bar per numeric x is a category too.
func categorical(s Spec) bool {
	if s.Kind == KindBar {
		return true
	}
	for _, se := range s.Series {
		for _, p := range se.Points {
			if p.Label != "" {
				return true
			}
		}
	}
	return false
}

// label is a point's category name; numeric x on a bar chart is formatted.
func label(p Point) string {
	if p.Label != "" {
		return p.Label
	}
	return strconv.FormatFloat(p.X, 'g', -1, 64)
}

// categories lists the x categories: labels in order of first appearance
// (the order the model gave them, usually meaningful: months, steps), or
// numeric x values sorted ascending.
func categories(s Spec) []string {
	if !categorical(s) {
		return nil
	}
	labelled := false
	var xs []float64
	var cats []string
	seen := map[string]bool{}
	for _, se := range s.Series {
		for _, p := range se.Points {
			if p.Label != "" {
				labelled = true
			}
			l := label(p)
			if !seen[l] {
				seen[l] = true
				cats = append(cats, l)
				xs = append(xs, p.X)
			}
		}
	}
	if !labelled {
		idx := make([]int, len(cats))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			switch {
			case xs[a] < xs[b]:
				return -1
			case xs[a] > xs[b]:
				return 1
			}
			return 0
		})
		sorted := make([]string, len(cats))
		for i, j := range idx {
			sorted[i] = cats[j]
		}
		cats = sorted
	}
	return cats
}

// palette is Tableau 10: distinct hues that stay apart for colour-blind
// readers. Series past ten reuse a hue with a dash pattern.
var palette = []color.Color{
	color.RGBA{0x4e, 0x79, 0xa7, 0xff}, color.RGBA{0xf2, 0x8e, 0x2b, 0xff},
	color.RGBA{0xe1, 0x57, 0x59, 0xff}, color.RGBA{0x76, 0xb7, 0xb2, 0xff},
	color.RGBA{0x59, 0xa1, 0x4f, 0xff}, color.RGBA{0xed, 0xc9, 0x48, 0xff},
	color.RGBA{0xb0, 0x7a, 0xa1, 0xff}, color.RGBA{0xff, 0x9d, 0xa7, 0xff},
	color.RGBA{0x9c, 0x75, 0x5f, 0xff}, color.RGBA{0xba, 0xb0, 0xac, 0xff},
}

// px converts pixels to plot lengths at our dpi.
func px(n float64) vg.Length { return vg.Length(n) * vg.Inch / dpi }

// Render draws the chart and returns it as a PNG of exactly Width x Height
// pixels.
func Render(spec Spec) ([]byte, error) {
	spec = spec.withDefaults()
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("rendering chart: %w", err)
	}
	p := plot.New()
	p.Title.Text = spec.Title
	p.Title.TextStyle.Font.Size = vg.Points(14)
	p.Title.Padding = px(8)
	p.X.Label.Text = spec.XLabel
	p.Y.Label.Text = spec.YLabel
	grid := plotter.NewGrid()
	grid.Vertical.Width = 0 // horizontal guides only: they help read values
	p.Add(grid)
	p.Legend.Top = true
	p.Legend.Left = true

	var err error
	if spec.Kind == KindBar {
		err = addBars(p, spec)
	} else {
		err = addLines(p, spec)
	}
	if err != nil {
		return nil, fmt.Errorf("rendering chart: %w", err)
	}
	makeLegendRoom(p, spec)

	c := vgimg.NewWith(vgimg.UseWH(px(float64(spec.Width)), px(float64(spec.Height))), vgimg.UseDPI(dpi))
	p.Draw(draw.New(c))
	b, err := encodePNG(c.Image())
	if err != nil {
		return nil, fmt.Errorf("rendering chart: %w", err)
	}
	return b, nil
}

func addLines(p *plot.Plot, spec Spec) error {
	cats := categories(spec)
	index := make(map[string]int, len(cats))
	for i, c := range cats {
		index[c] = i
	}
	for i, se := range spec.Series {
		xys := make(plotter.XYs, len(se.Points))
		for j, pt := range se.Points {
			x := pt.X
			if cats != nil {
				x = float64(index[label(pt)])
			}
			xys[j] = plotter.XY{X: x, Y: pt.Y}
		}
		if cats == nil {
			// A line joins points left to right; models do not always
			// send them in order.
			slices.SortStableFunc(xys, func(a, b plotter.XY) int {
				switch {
				case a.X < b.X:
					return -1
				case a.X > b.X:
					return 1
				}
				return 0
			})
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("series %d: %w", i, err)
		}
		line.LineStyle.Width = px(2)
		line.LineStyle.Color = palette[i%len(palette)]
		if i >= len(palette) {
			line.LineStyle.Dashes = []vg.Length{px(6), px(3)}
		}
		p.Add(line)
		if len(se.Points) == 1 {
			// A one-point line is invisible; mark the point.
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return fmt.Errorf("series %d: %w", i, err)
			}
			sc.GlyphStyle.Color = line.LineStyle.Color
			sc.GlyphStyle.Radius = px(4)
			sc.GlyphStyle.Shape = draw.CircleGlyph{}
			p.Add(sc)
		}
		if se.Name != "" {
			p.Legend.Add(se.Name, line)
		}
	}
	if cats != nil {
		setCategoryTicks(p, cats, spec.Width)
		p.X.Min, p.X.Max = -0.5, float64(len(cats))-0.5
	}
	return nil
}

func addBars(p *plot.Plot, spec Spec) error {
	cats := categories(spec)
	index := make(map[string]int, len(cats))
	for i, c := range cats {
		index[c] = i
	}
	n := len(spec.Series)
	// Share the plotting width (about 85% of the image) between the
	// categories, leave a gap between groups and split the rest between
	// the series' bars.
	slot := 0.85 * float64(spec.Width) / float64(len(cats))
	barPx := min(slot*0.8/float64(n), 80)
	barW := px(math.Max(barPx, 1))
	for i, se := range spec.Series {
		vals := make(plotter.Values, len(cats))
		for _, pt := range se.Points {
			vals[index[label(pt)]] = pt.Y
		}
		bars, err := plotter.NewBarChart(vals, barW)
		if err != nil {
			return fmt.Errorf("series %d: %w", i, err)
		}
		bars.Color = palette[i%len(palette)]
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(float64(i)-float64(n-1)/2) * barW
		p.Add(bars)
		if se.Name != "" {
			p.Legend.Add(se.Name, bars)
		}
	}
	setCategoryTicks(p, cats, spec.Width)
	p.X.Min, p.X.Max = -0.5, float64(len(cats))-0.5
	return nil
}

// makeLegendRoom raises the top of the y axis so the legend, drawn inside
// the data area at the top left, sits above the data instead of over it.
func makeLegendRoom(p *plot.Plot, spec Spec) {
	rows := 0
	for _, se := range spec.Series {
		if se.Name != "" {
			rows++
		}
	}
	if rows == 0 || p.Y.Max <= p.Y.Min {
		return
	}
	const rowPx = 18
	plotPx := 0.75 * float64(spec.Height)
	frac := math.Min(float64(rows)*rowPx/plotPx, 0.6)
	p.Y.Max += (p.Y.Max - p.Y.Min) * frac / (1 - frac)
}

// setCategoryTicks labels the categorical x axis, thinning the labels so
// they do not overlap: about one label per 70 pixels.
func setCategoryTicks(p *plot.Plot, cats []string, width int) {
	room := max(width/70, 2)
	step := (len(cats) + room - 1) / room
	ticks := make([]plot.Tick, 0, len(cats))
	for i, c := range cats {
		t := plot.Tick{Value: float64(i)}
		if i%step == 0 {
			t.Label = c
		}
		ticks = append(ticks, t)
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
}

// encoderPool lets PNG encodes reuse their compressor state: a fresh
// encoder allocates about 850 KB, which dominates a small sparkline.
type encoderPool struct{ p sync.Pool }

func (e *encoderPool) Get() *png.EncoderBuffer {
	b, _ := e.p.Get().(*png.EncoderBuffer)
	return b
}

func (e *encoderPool) Put(b *png.EncoderBuffer) { e.p.Put(b) }

// pngEncoder is safe for concurrent use: each Encode takes its own buffer
// from the pool.
var pngEncoder = &png.Encoder{BufferPool: &encoderPool{}}

func encodePNG(img image.Image) ([]byte, error) {
	var buf bytes.Buffer
	if err := pngEncoder.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encoding png: %w", err)
	}
	return buf.Bytes(), nil
}

// Sparkline limits.
const (
	MaxSparkWidth  = 1024
	MaxSparkHeight = 512
	MinSparkSize   = 8
)

// sparkColor reads on both light and dark themes, which matters because
// the background is transparent.
var sparkColor = color.RGBA{0x4e, 0x79, 0xa7, 0xff}

// Sparkline draws values as a small line with no axes or labels, on a
// transparent background, as a PNG of exactly width x height pixels. The
// last value is marked with a dot. A single value, or all-equal values,
// draw a flat line across the middle.
func Sparkline(values []float64, width, height int) ([]byte, error) {
	switch {
	case len(values) == 0:
		return nil, errors.New("drawing sparkline: values: at least one value is needed")
	case len(values) > MaxPoints:
		return nil, fmt.Errorf("drawing sparkline: values: %d values, at most %d", len(values), MaxPoints)
	case width < MinSparkSize || width > MaxSparkWidth:
		return nil, fmt.Errorf("drawing sparkline: width: %d pixels must be between %d and %d", width, MinSparkSize, MaxSparkWidth)
	case height < MinSparkSize || height > MaxSparkHeight:
		return nil, fmt.Errorf("drawing sparkline: height: %d pixels must be between %d and %d", height, MinSparkSize, MaxSparkHeight)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("drawing sparkline: values[%d]: must be a finite number", i)
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}

	c := vgimg.NewWith(
		vgimg.UseWH(px(float64(width)), px(float64(height))),
		vgimg.UseDPI(dpi),
		vgimg.UseBackgroundColor(color.Transparent),
	)
	lineW := math.Max(1, math.Min(2, float64(height)/10))
	dot := lineW * 1.5
	pad := dot + 0.5 // keep the stroke and the end dot inside the image
	w, h := float64(width)-2*pad, float64(height)-2*pad
	at := func(i int) vg.Point {
		x := pad + w
		if len(values) > 1 {
			x = pad + w*float64(i)/float64(len(values)-1)
		}
		y := pad + h/2
		if hi > lo {
			y = pad + h*(values[i]-lo)/(hi-lo)
		}
		return vg.Point{X: px(x), Y: px(y)}
	}

	var path vg.Path
	if len(values) == 1 {
		path.Move(vg.Point{X: px(pad), Y: at(0).Y})
		path.Line(vg.Point{X: px(pad + w), Y: at(0).Y})
	} else {
		path.Move(at(0))
		for i := 1; i < len(values); i++ {
			path.Line(at(i))
		}
	}
	c.SetColor(sparkColor)
	c.SetLineWidth(px(lineW))
	c.Stroke(path)

	last := at(len(values) - 1)
	var d vg.Path
	d.Move(vg.Point{X: last.X + px(dot), Y: last.Y})
	d.Arc(last, px(dot), 0, 2*math.Pi)
	d.Close()
	c.Fill(d)

	b, err := encodePNG(c.Image())
	if err != nil {
		return nil, fmt.Errorf("drawing sparkline: %w", err)
	}
	return b, nil
}
