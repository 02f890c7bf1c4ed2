// Package chart renders charts to PNG on the server, for contexts with no
// client to draw them (Slack, Discord, the terminal, scheduled runs), and
// sparklines for cards. It draws with golang.org/x/image: an anti-aliased
// rasterizer and the Go Regular font, parsed on the first render.
// gonum.org/v1/plot, which drew them before, parsed a dozen fonts in its
// package init, in every process that linked it (the service, and each
// CLI command), whether or not it ever drew a chart.
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
	"image/draw"
	"image/png"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"golang.org/x/image/font"
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

var (
	inkColor  = color.RGBA{0x33, 0x33, 0x33, 0xff} // text and axes
	gridColor = color.RGBA{0xe3, 0xe3, 0xe3, 0xff}
)

// Font sizes in points: 96 dpi makes a 12pt label 16px.
const (
	titleSize = 14
	labelSize = 12 // axis labels and the legend
	tickSize  = 10
)

// axis maps data values to pixels along one direction.
type axis struct {
	lo, hi   float64 // data range shown
	from, to float64 // pixels lo and hi map to
	ticks    []float64
	labels   []string // one per tick ("" draws the tick unlabelled)
	step     float64
}

func (a *axis) px(v float64) float64 {
	if a.hi == a.lo {
		return (a.from + a.to) / 2
	}
	return a.from + (v-a.lo)/(a.hi-a.lo)*(a.to-a.from)
}

// niceStep is a 1, 2 or 5 times a power of ten near span/n.
func niceStep(span float64, n int) float64 {
	if span <= 0 || n < 1 {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

// niceTicks returns the multiples of a nice step within [lo, hi], for about
// n ticks.
func niceTicks(lo, hi float64, n int) (ticks []float64, step float64) {
	step = niceStep(hi-lo, n)
	for v := math.Ceil(lo/step-1e-9) * step; v <= hi+step*1e-9; v += step {
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		ticks = append(ticks, v)
	}
	return ticks, step
}

// formatTick writes v with as many decimals as the step needs.
func formatTick(v, step float64) string {
	if a := math.Abs(v); a >= 1e7 || (a > 0 && a < 1e-4) {
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	dec := 0
	if step < 1 {
		dec = int(math.Ceil(-math.Log10(step) - 1e-9))
		if f := step * math.Pow(10, float64(dec)); math.Abs(f-math.Round(f)) > 1e-6 {
			dec++ // 2.5 steps
		}
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// yRange is the data range of the y axis: every value, zero for bars, and
// room at the top for the legend drawn inside the data area.
func yRange(spec Spec, plotPx float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, se := range spec.Series {
		for _, p := range se.Points {
			lo, hi = math.Min(lo, p.Y), math.Max(hi, p.Y)
		}
	}
	if spec.Kind == KindBar {
		lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	}
	if hi == lo {
		d := math.Max(math.Abs(lo)*0.1, 1)
		lo, hi = lo-d, hi+d
	}
	rows := 0
	for _, se := range spec.Series {
		if se.Name != "" {
			rows++
		}
	}
	if rows > 0 {
		// The legend's rows over the top of the data, at most 60% of it.
		const rowPx = 18
		frac := math.Min((float64(rows)*rowPx+8)/math.Max(plotPx, 1), 0.6)
		hi += (hi - lo) * frac / (1 - frac)
	}
	return lo, hi
}

// Render draws the chart and returns it as a PNG of exactly Width x Height
// pixels.
func Render(spec Spec) ([]byte, error) {
	spec = spec.withDefaults()
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("rendering chart: %w", err)
	}
	titleFace, err := face(titleSize)
	if err != nil {
		return nil, fmt.Errorf("rendering chart: %w", err)
	}
	labelFace, err := face(labelSize)
	if err != nil {
		return nil, fmt.Errorf("rendering chart: %w", err)
	}
	tickFace, err := face(tickSize)
	if err != nil {
		return nil, fmt.Errorf("rendering chart: %w", err)
	}
	W, H := float64(spec.Width), float64(spec.Height)
	img := image.NewRGBA(image.Rect(0, 0, spec.Width, spec.Height))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)

	// The frame: title above, y tick labels and label left, x tick labels
	// and label below; the data area is what is left.
	const pad, gap, tickLen = 8.0, 4.0, 4.0
	top := pad
	if spec.Title != "" {
		top += lineHeight(titleFace) + 2*gap
	}
	bottom := H - pad - lineHeight(tickFace) - tickLen - gap
	if spec.XLabel != "" {
		bottom -= lineHeight(labelFace) + gap
	}
	top = math.Min(top, H/3)
	bottom = math.Max(bottom, top+H/3)

	var y axis
	y.lo, y.hi = yRange(spec, bottom-top)
	// The axis ends on ticks, so the lowest and highest values can be read.
	n := max(int((bottom-top)/50), 2)
	y.step = niceStep(y.hi-y.lo, n)
	y.lo, y.hi = math.Floor(y.lo/y.step+1e-9)*y.step, math.Ceil(y.hi/y.step-1e-9)*y.step
	y.ticks, y.step = niceTicks(y.lo, y.hi, n)
	tickW := 0.0
	for _, v := range y.ticks {
		l := formatTick(v, y.step)
		y.labels = append(y.labels, l)
		tickW = math.Max(tickW, textWidth(tickFace, l))
	}
	left := pad + tickW + tickLen + gap
	if spec.YLabel != "" {
		left += lineHeight(labelFace) + gap
	}
	right := W - pad - 12 // room for the last x label's overhang
	left = math.Min(left, W/3)
	right = math.Max(right, left+W/3)
	y.from, y.to = bottom, top

	x := axis{from: left, to: right}
	cats := categories(spec)
	if cats != nil {
		x.lo, x.hi = -0.5, float64(len(cats))-0.5
		// About one label per 70 pixels, so they do not overlap.
		room := max(spec.Width/70, 2)
		step := (len(cats) + room - 1) / room
		slot := (right - left) / float64(len(cats)) * float64(step)
		for i, c := range cats {
			x.ticks = append(x.ticks, float64(i))
			l := ""
			if i%step == 0 {
				l = fit(tickFace, c, slot-4)
			}
			x.labels = append(x.labels, l)
		}
	} else {
		x.lo, x.hi = math.Inf(1), math.Inf(-1)
		for _, se := range spec.Series {
			for _, p := range se.Points {
				x.lo, x.hi = math.Min(x.lo, p.X), math.Max(x.hi, p.X)
			}
		}
		if x.lo == x.hi {
			x.lo, x.hi = x.lo-1, x.hi+1
		}
		x.ticks, x.step = niceTicks(x.lo, x.hi, max(int((right-left)/90), 2))
		for _, v := range x.ticks {
			x.labels = append(x.labels, formatTick(v, x.step))
		}
	}

	// Horizontal guides only: they help read values.
	grid := &rules{}
	for _, v := range y.ticks {
		py := math.Round(y.px(v))
		grid.rect(left, py, right, py+1)
	}
	grid.paint(img, gridColor)

	if spec.Kind == KindBar {
		drawBars(img, spec, cats, &x, &y)
	} else {
		drawLines(img, spec, cats, &x, &y)
	}

	// Axes, ticks and their labels.
	ink := &rules{}
	ink.rect(left-1, top, left, bottom)
	ink.rect(left-1, bottom, right, bottom+1)
	for i, v := range y.ticks {
		py := math.Round(y.px(v))
		ink.rect(left-1-tickLen, py, left-1, py+1)
		lh := lineHeight(tickFace)
		text(img, tickFace, inkColor, y.labels[i], left-1-tickLen-gap-textWidth(tickFace, y.labels[i]), py-lh/2)
	}
	for i, v := range x.ticks {
		px := math.Round(x.px(v))
		ink.rect(px, bottom+1, px+1, bottom+1+tickLen)
		if l := x.labels[i]; l != "" {
			text(img, tickFace, inkColor, l, px-textWidth(tickFace, l)/2, bottom+1+tickLen+gap/2)
		}
	}
	ink.paint(img, inkColor)

	if spec.Title != "" {
		t := fit(titleFace, spec.Title, W-2*pad)
		text(img, titleFace, inkColor, t, (W-textWidth(titleFace, t))/2, pad)
	}
	if spec.XLabel != "" {
		t := fit(labelFace, spec.XLabel, right-left)
		text(img, labelFace, inkColor, t, (left+right-textWidth(labelFace, t))/2, H-pad-lineHeight(labelFace))
	}
	if spec.YLabel != "" {
		t := fit(labelFace, spec.YLabel, bottom-top)
		textUp(img, labelFace, inkColor, t, pad+lineHeight(labelFace)/2, (top+bottom)/2)
	}
	drawLegend(img, labelFace, spec, left+8, top+4)

	b, err := encodePNG(img)
	if err != nil {
		return nil, fmt.Errorf("rendering chart: %w", err)
	}
	return b, nil
}

func drawLines(img *image.RGBA, spec Spec, cats []string, x, y *axis) {
	index := make(map[string]int, len(cats))
	for i, c := range cats {
		index[c] = i
	}
	for i, se := range spec.Series {
		ps := make([]pt, len(se.Points))
		for j, p := range se.Points {
			xv := p.X
			if cats != nil {
				xv = float64(index[label(p)])
			}
			ps[j] = pt{xv, p.Y}
		}
		if cats == nil {
			// A line joins points left to right; models do not always
			// send them in order.
			slices.SortStableFunc(ps, func(a, b pt) int {
				switch {
				case a.x < b.x:
					return -1
				case a.x > b.x:
					return 1
				}
				return 0
			})
		}
		for j := range ps {
			ps[j] = pt{x.px(ps[j].x), y.px(ps[j].y)}
		}
		s := newShape()
		s.polyline(ps, 2, dashFor(i))
		if len(ps) == 1 {
			// A one-point line is invisible; mark the point.
			s.circle(ps[0], 4)
		}
		s.paint(img, palette[i%len(palette)])
	}
}

// dashFor is series i's dash pattern: solid for the first ten.
func dashFor(i int) []float64 {
	if i >= len(palette) {
		return []float64{6, 3}
	}
	return nil
}

func drawBars(img *image.RGBA, spec Spec, cats []string, x, y *axis) {
	index := make(map[string]int, len(cats))
	for i, c := range cats {
		index[c] = i
	}
	n := len(spec.Series)
	// Leave a gap between groups and split the rest of a category's slot
	// between the series' bars.
	slot := (x.to - x.from) / float64(len(cats))
	barW := math.Max(math.Min(slot*0.8/float64(n), 80), 1)
	zero := y.px(math.Max(y.lo, math.Min(0, y.hi)))
	for i, se := range spec.Series {
		s := newShape()
		off := (float64(i) - float64(n-1)/2) * barW
		for _, p := range se.Points {
			cx := x.px(float64(index[label(p)])) + off
			v := y.px(p.Y)
			s.rect(cx-barW/2, math.Min(v, zero), cx+barW/2, math.Max(v, zero))
		}
		s.paint(img, palette[i%len(palette)])
	}
}

// drawLegend lists the named series at (x, y), inside the data area at
// the top left, where yRange left room above the data.
func drawLegend(img *image.RGBA, f font.Face, spec Spec, x, y float64) {
	const rowPx, sample = 18.0, 20.0
	W := float64(spec.Width)
	for i, se := range spec.Series {
		if se.Name == "" {
			continue
		}
		c := palette[i%len(palette)]
		s := newShape()
		mid := y + rowPx/2
		if spec.Kind == KindBar {
			s.rect(x+sample/2-5, mid-5, x+sample/2+5, mid+5)
		} else {
			s.polyline([]pt{{x, mid}, {x + sample, mid}}, 2, dashFor(i))
		}
		s.paint(img, c)
		name := fit(f, se.Name, W-x-sample-12)
		text(img, f, inkColor, name, x+sample+6, mid-lineHeight(f)/2)
		y += rowPx
	}
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

	img := image.NewRGBA(image.Rect(0, 0, width, height)) // transparent
	lineW := math.Max(1, math.Min(2, float64(height)/10))
	dot := lineW * 1.5
	pad := dot + 0.5 // keep the stroke and the end dot inside the image
	w, h := float64(width)-2*pad, float64(height)-2*pad
	at := func(i int) pt {
		x := pad + w
		if len(values) > 1 {
			x = pad + w*float64(i)/float64(len(values)-1)
		}
		y := pad + h/2
		if hi > lo {
			y = pad + h*(1-(values[i]-lo)/(hi-lo)) // image y grows down
		}
		return pt{x, y}
	}
	ps := make([]pt, len(values))
	for i := range values {
		ps[i] = at(i)
	}
	if len(values) == 1 {
		ps = []pt{{pad, ps[0].y}, {pad + w, ps[0].y}}
	}
	s := newShape()
	s.polyline(ps, lineW, nil)
	s.circle(at(len(values)-1), dot) // the last value
	s.paint(img, sparkColor)

	b, err := encodePNG(img)
	if err != nil {
		return nil, fmt.Errorf("drawing sparkline: %w", err)
	}
	return b, nil
}
