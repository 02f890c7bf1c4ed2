package chart_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/headless/chart"
)

func decode(t *testing.T, b []byte) image.Image {
	t.Helper()
	if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("want PNG signature, got % x", b[:min(8, len(b))])
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("want a decodable PNG: %v", err)
	}
	return img
}

// countColor counts pixels close to c, to check a series was drawn in its
// colour (antialiasing blends edges, so "close" rather than equal).
func countColor(img image.Image, c color.Color) int {
	wr, wg, wb, _ := c.RGBA()
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			if a < 0xf000 {
				continue
			}
			if absDiff(r, wr) < 0x1000 && absDiff(g, wg) < 0x1000 && absDiff(bl, wb) < 0x1000 {
				n++
			}
		}
	}
	return n
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

var (
	blue   = color.RGBA{0x4e, 0x79, 0xa7, 0xff} // first series
	orange = color.RGBA{0xf2, 0x8e, 0x2b, 0xff} // second series
)

func monthly(name string, ys ...float64) chart.Series {
	months := []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun"}
	s := chart.Series{Name: name}
	for i, y := range ys {
		s.Points = append(s.Points, chart.Point{Label: months[i], Y: y})
	}
	return s
}

func TestRenderProducesPNGOfRequestedSize(t *testing.T) {
	many := chart.Series{Name: "noise"}
	for i := range 2000 {
		many.Points = append(many.Points, chart.Point{X: float64(i), Y: math.Sin(float64(i) / 50)})
	}
	tests := []struct {
		name       string
		spec       chart.Spec
		w, h       int
		wantColors []color.Color
	}{
		{
			name: "line categorical two series",
			spec: chart.Spec{Title: "Revenue", Kind: chart.KindLine, Series: []chart.Series{monthly("2024", 1, 3, 2, 5), monthly("2025", 2, 2, 4, 6)}, XLabel: "month", YLabel: "k$", Width: 640, Height: 360},
			w:    640, h: 360,
			wantColors: []color.Color{blue, orange},
		},
		{
			name: "bar grouped",
			spec: chart.Spec{Title: "Tickets", Kind: chart.KindBar, Series: []chart.Series{monthly("open", 4, 8, 1), monthly("closed", 3, 7, 9)}, Width: 500, Height: 300},
			w:    500, h: 300,
			wantColors: []color.Color{blue, orange},
		},
		{
			name: "defaults: line, 960x540",
			spec: chart.Spec{Series: []chart.Series{{Points: []chart.Point{{X: 3, Y: 1}, {X: 1, Y: 2}, {X: 2, Y: -4}}}}},
			w:    chart.DefaultWidth, h: chart.DefaultHeight,
			wantColors: []color.Color{blue},
		},
		{
			name: "bar with numeric x and negatives",
			spec: chart.Spec{Kind: chart.KindBar, Series: []chart.Series{{Points: []chart.Point{{X: 2020, Y: -3}, {X: 2019, Y: 5}}}}, Width: 200, Height: 200},
			w:    200, h: 200,
			wantColors: []color.Color{blue},
		},
		{
			name: "single point, flat values",
			spec: chart.Spec{Series: []chart.Series{{Name: "one", Points: []chart.Point{{X: 1, Y: 7}}}}, Width: 300, Height: 200},
			w:    300, h: 200,
			wantColors: []color.Color{blue},
		},
		{
			name: "2000 points",
			spec: chart.Spec{Title: "Big", Series: []chart.Series{many}, Width: 1200, Height: 400},
			w:    1200, h: 400,
			wantColors: []color.Color{blue},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := chart.Render(tt.spec)
			if err != nil {
				t.Fatalf("want a render, got %v", err)
			}
			img := decode(t, b)
			if got := img.Bounds().Size(); got != (image.Point{X: tt.w, Y: tt.h}) {
				t.Fatalf("want %dx%d pixels, got %dx%d", tt.w, tt.h, got.X, got.Y)
			}
			for _, c := range tt.wantColors {
				if n := countColor(img, c); n < 20 {
					t.Errorf("want the series colour %v drawn, found %d pixels", c, n)
				}
			}
		})
	}
}

func TestRenderRejectsBadInput(t *testing.T) {
	pts := func(n int) []chart.Point {
		p := make([]chart.Point, n)
		for i := range p {
			p[i] = chart.Point{X: float64(i), Y: 1}
		}
		return p
	}
	labels := func(n int) []chart.Point {
		p := make([]chart.Point, n)
		for i := range p {
			p[i] = chart.Point{Label: "c" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + string(rune('a'+i/26%26)), Y: 1}
		}
		return p
	}
	ok := chart.Series{Name: "s", Points: pts(3)}
	tests := []struct {
		name string
		spec chart.Spec
		want string
	}{
		{"no series", chart.Spec{}, "Series: at least one series"},
		{"too many series", chart.Spec{Series: slicesRepeat(ok, 21)}, "Series: 21 series, at most 20"},
		{"too many points", chart.Spec{Series: []chart.Series{{Points: pts(3000)}, {Points: pts(2001)}}}, "Series: 5001 points in all, at most 5000"},
		{"empty series", chart.Spec{Series: []chart.Series{ok, {Name: "e"}}}, "Series[1].Points: at least one point"},
		{"bad kind", chart.Spec{Kind: "pie", Series: []chart.Series{ok}}, `Kind: "pie" must be line or bar`},
		{"NaN y", chart.Spec{Series: []chart.Series{{Points: []chart.Point{{X: 1, Y: math.NaN()}}}}}, "Series[0].Points[0].Y: must be a finite number"},
		{"Inf x", chart.Spec{Series: []chart.Series{{Points: []chart.Point{{X: math.Inf(1), Y: 1}}}}}, "Series[0].Points[0].X: must be a finite number"},
		{"mixed x", chart.Spec{Series: []chart.Series{{Points: []chart.Point{{Label: "a", Y: 1}, {X: 2, Y: 1}}}}}, "use one kind of x"},
		{"duplicate label", chart.Spec{Series: []chart.Series{{Points: []chart.Point{{Label: "a", Y: 1}, {Label: "a", Y: 2}}}}}, `Series[0].Points[1].Label: "a" appears twice`},
		{"too many categories", chart.Spec{Kind: chart.KindBar, Series: []chart.Series{{Points: pts(201)}}}, "201 distinct x values"},
		{"too many labels", chart.Spec{Series: []chart.Series{{Points: labels(300)}}}, "distinct x values on a categorical axis, at most 200"},
		{"long title", chart.Spec{Title: strings.Repeat("t", 201), Series: []chart.Series{ok}}, "Title: 201 characters"},
		{"too wide", chart.Spec{Width: 5000, Series: []chart.Series{ok}}, "Width: 5000 pixels"},
		{"too short", chart.Spec{Height: 10, Series: []chart.Series{ok}}, "Height: 10 pixels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := chart.Render(tt.spec)
			if err == nil {
				t.Fatalf("want an error containing %q, got a %d-byte image", tt.want, len(b))
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want an error containing %q, got %v", tt.want, err)
			}
		})
	}
}

func slicesRepeat(s chart.Series, n int) []chart.Series {
	out := make([]chart.Series, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestSparkline(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		w, h   int
	}{
		{"rising", []float64{1, 2, 3, 5, 8, 13}, 120, 30},
		{"single value", []float64{42}, 60, 20},
		{"flat", []float64{3, 3, 3}, 60, 20},
		{"negative", []float64{-5, 2, -1, 0}, 200, 40},
		{"tiny", []float64{1, 2}, 8, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := chart.Sparkline(tt.values, tt.w, tt.h)
			if err != nil {
				t.Fatalf("want a sparkline, got %v", err)
			}
			img := decode(t, b)
			if got := img.Bounds().Size(); got != (image.Point{X: tt.w, Y: tt.h}) {
				t.Fatalf("want %dx%d pixels, got %dx%d", tt.w, tt.h, got.X, got.Y)
			}
			if _, _, _, a := img.At(0, 0).RGBA(); a != 0 {
				t.Errorf("want a transparent background at (0,0), got alpha %d", a)
			}
			if n := countColor(img, blue); n == 0 {
				t.Errorf("want the line drawn in %v, found no such pixels", blue)
			}
		})
	}
}

func TestSparklineShape(t *testing.T) {
	// A rising series ends top right: the line's rightmost opaque pixels
	// must be in the upper half, and its leftmost in the lower half.
	b, err := chart.Sparkline([]float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 100, 40)
	if err != nil {
		t.Fatal(err)
	}
	img := decode(t, b)
	colY := func(x int) (sum, n int) {
		for y := range 40 {
			if _, _, _, a := img.At(x, y).RGBA(); a > 0x8000 {
				sum += y
				n++
			}
		}
		return sum, n
	}
	ls, ln := colY(4)
	rs, rn := colY(95)
	if ln == 0 || rn == 0 {
		t.Fatalf("want line pixels near both edges, got %d left and %d right", ln, rn)
	}
	if left, right := ls/ln, rs/rn; !(left > 20 && right < 20) {
		t.Fatalf("want a rising line (image y grows down): left y %d should be > 20, right y %d < 20", left, right)
	}
}

func TestSparklineRejectsBadInput(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		w, h   int
		want   string
	}{
		{"empty", nil, 100, 20, "at least one value"},
		{"NaN", []float64{1, math.NaN()}, 100, 20, "values[1]: must be a finite number"},
		{"Inf", []float64{math.Inf(-1)}, 100, 20, "values[0]: must be a finite number"},
		{"too many", make([]float64, 5001), 100, 20, "5001 values, at most 5000"},
		{"too narrow", []float64{1}, 7, 20, "width: 7 pixels"},
		{"too tall", []float64{1}, 100, 513, "height: 513 pixels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := chart.Sparkline(tt.values, tt.w, tt.h)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want an error containing %q, got %v", tt.want, err)
			}
		})
	}
}

// Charts are rendered from concurrent turns; the font cache and plot
// defaults are shared, so this runs under -race.
func TestRenderConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 8 {
		wg.Go(func() {
			_, err := chart.Render(chart.Spec{Title: "c", Kind: []chart.Kind{chart.KindLine, chart.KindBar}[i%2], Series: []chart.Series{monthly("a", 1, 2, 3)}, Width: 200, Height: 150})
			errs <- err
		})
		wg.Go(func() {
			_, err := chart.Sparkline([]float64{1, 3, 2}, 50, 10)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("want concurrent renders to succeed, got %v", err)
		}
	}
}

func BenchmarkRender(b *testing.B) {
	s := chart.Series{Name: "s"}
	for i := range 500 {
		s.Points = append(s.Points, chart.Point{X: float64(i), Y: math.Sin(float64(i) / 20)})
	}
	spec := chart.Spec{Title: "bench", Series: []chart.Series{s}}
	for b.Loop() {
		if _, err := chart.Render(spec); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSparkline(b *testing.B) {
	v := make([]float64, 30)
	for i := range v {
		v[i] = math.Sin(float64(i))
	}
	for b.Loop() {
		if _, err := chart.Sparkline(v, 120, 30); err != nil {
			b.Fatal(err)
		}
	}
}

// The baselines encode a blank image of the same size with the standard
// library's default encoder: the floor any PNG renderer pays, against
// which Render and Sparkline are read as ratios.
func benchmarkBaselinePNG(b *testing.B, w, h int) {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for b.Loop() {
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBaselinePNGEncode960x540(b *testing.B) { benchmarkBaselinePNG(b, 960, 540) }
func BenchmarkBaselinePNGEncode120x30(b *testing.B)  { benchmarkBaselinePNG(b, 120, 30) }

// TestRenderDrawsTitleAndAxisLabels: the title is written across the top
// and the y label up the left edge.
func TestRenderDrawsTitleAndAxisLabels(t *testing.T) {
	dark := func(img image.Image, r image.Rectangle) int {
		n := 0
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				if c := color.GrayModel.Convert(img.At(x, y)).(color.Gray); c.Y < 0x50 { // text and axes (#333), not the series colours
					n++
				}
			}
		}
		return n
	}
	series := []chart.Series{monthly("", 1, 3, 2)}
	top, left := image.Rect(60, 0, 340, 24), image.Rect(0, 40, 24, 200)
	with := decode(t, must(chart.Render(chart.Spec{Title: "Revenue by month", YLabel: "thousands", Series: series, Width: 400, Height: 300})))
	without := decode(t, must(chart.Render(chart.Spec{Series: series, Width: 400, Height: 300})))
	if n := dark(with, top); n < 30 {
		t.Errorf("with a title: want dark text pixels in the top band, got %d", n)
	}
	if n := dark(without, top); n != 0 {
		t.Errorf("without a title: want the top band blank, got %d dark pixels", n)
	}
	// The y tick labels sit at the left edge when there is no y label.
	if n, m := dark(with, left), dark(without, left); n < m+30 {
		t.Errorf("with a y label: want more dark pixels along the left edge than the %d of the tick labels alone, got %d", m, n)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
