package chart

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// The drawing primitives: anti-aliased fills, strokes and text on an RGBA
// image. Shapes of one colour are rasterized together, so where a line's
// segments and joins overlap the colour is laid once, not darkened.

// regular is the Go Regular font, parsed on the first chart: a process
// that never draws one never pays for it.
var regular = sync.OnceValues(func() (*opentype.Font, error) {
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return nil, fmt.Errorf("parsing the chart font: %w", err)
	}
	return f, nil
})

// face is the font at size points (at the chart's dpi). A face keeps
// buffers of its own, so each render makes its faces.
func face(size float64) (font.Face, error) {
	f, err := regular()
	if err != nil {
		return nil, err
	}
	fc, err := opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: dpi, Hinting: font.HintingFull})
	if err != nil {
		return nil, fmt.Errorf("making the chart font face: %w", err)
	}
	return fc, nil
}

type pt struct{ x, y float64 }

// shape collects polygons to fill in one colour.
type shape struct {
	polys [][]pt
}

func newShape() *shape { return &shape{} }

// poly adds a closed polygon. Every polygon goes in one orientation: the
// rasterizer sums signed coverage, so a clockwise and a counter-clockwise
// polygon over the same pixels would cancel out.
func (s *shape) poly(ps ...pt) {
	if len(ps) < 3 {
		return
	}
	area := 0.0
	for i, p := range ps {
		q := ps[(i+1)%len(ps)]
		area += p.x*q.y - q.x*p.y
	}
	if area < 0 {
		for i, j := 0, len(ps)-1; i < j; i, j = i+1, j-1 {
			ps[i], ps[j] = ps[j], ps[i]
		}
	}
	s.polys = append(s.polys, ps)
}

func (s *shape) rect(x0, y0, x1, y1 float64) {
	s.poly(pt{x0, y0}, pt{x1, y0}, pt{x1, y1}, pt{x0, y1})
}

func (s *shape) circle(c pt, r float64) {
	const n = 20
	ps := make([]pt, n)
	for i := range ps {
		a := 2 * math.Pi * float64(i) / n
		ps[i] = pt{c.x + r*math.Cos(a), c.y + r*math.Sin(a)}
	}
	s.poly(ps...)
}

// segment adds the straight stroke from a to b, w wide.
func (s *shape) segment(a, b pt, w float64) {
	dx, dy := b.x-a.x, b.y-a.y
	l := math.Hypot(dx, dy)
	if l == 0 {
		return
	}
	nx, ny := -dy/l*w/2, dx/l*w/2
	s.poly(pt{a.x + nx, a.y + ny}, pt{b.x + nx, b.y + ny}, pt{b.x - nx, b.y - ny}, pt{a.x - nx, a.y - ny})
}

// polyline adds the stroke through ps, w wide, with round joins when it
// is thick; dash, when set, is the on and off lengths of a dashed line.
func (s *shape) polyline(ps []pt, w float64, dash []float64) {
	if len(dash) == 2 {
		s.dashed(ps, w, dash[0], dash[1])
		return
	}
	for i := 1; i < len(ps); i++ {
		s.segment(ps[i-1], ps[i], w)
	}
	// Round joins only where a gap at a bend would show: overlapping
	// shapes add up their anti-aliased edges, so a join on a thin line
	// reads as a dot.
	if w > 2.5 {
		for i := 1; i < len(ps)-1; i++ {
			s.circle(ps[i], w/2)
		}
	}
}

func (s *shape) dashed(ps []pt, w, on, off float64) {
	drawing, left := true, on
	for i := 1; i < len(ps); i++ {
		a, b := ps[i-1], ps[i]
		l := math.Hypot(b.x-a.x, b.y-a.y)
		for pos := 0.0; pos < l; {
			step := min(left, l-pos)
			if drawing {
				f0, f1 := pos/l, (pos+step)/l
				s.segment(pt{a.x + (b.x-a.x)*f0, a.y + (b.y-a.y)*f0}, pt{a.x + (b.x-a.x)*f1, a.y + (b.y-a.y)*f1}, w)
			}
			pos += step
			left -= step
			if left <= 0 {
				drawing = !drawing
				left = map[bool]float64{true: on, false: off}[drawing]
			}
		}
	}
}

// paint lays the shape onto img in c. Only the shape's bounding box is
// rasterized: a line or a legend sample costs its own area, not the image's.
func (s *shape) paint(img *image.RGBA, c color.Color) {
	if len(s.polys) == 0 {
		return
	}
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, ps := range s.polys {
		for _, p := range ps {
			x0, y0, x1, y1 = math.Min(x0, p.x), math.Min(y0, p.y), math.Max(x1, p.x), math.Max(y1, p.y)
		}
	}
	box := image.Rect(int(math.Floor(x0)), int(math.Floor(y0)), int(math.Ceil(x1)), int(math.Ceil(y1))).Intersect(img.Bounds())
	if box.Empty() {
		return
	}
	z := vector.NewRasterizer(box.Dx(), box.Dy())
	ox, oy := float64(box.Min.X), float64(box.Min.Y)
	for _, ps := range s.polys {
		z.MoveTo(float32(ps[0].x-ox), float32(ps[0].y-oy))
		for _, p := range ps[1:] {
			z.LineTo(float32(p.x-ox), float32(p.y-oy))
		}
		z.ClosePath()
	}
	z.Draw(img, box, image.NewUniform(c), image.Point{})
}

// rules are axis-aligned lines and ticks: rectangles snapped to whole
// pixels and filled without anti-aliasing, which keeps them sharp and costs
// only their own pixels.
type rules struct{ rs []image.Rectangle }

func (r *rules) rect(x0, y0, x1, y1 float64) {
	px := func(v float64) int { return int(math.Round(v)) }
	rr := image.Rect(px(x0), px(y0), px(x1), px(y1))
	if rr.Dx() == 0 {
		rr.Max.X++
	}
	if rr.Dy() == 0 {
		rr.Max.Y++
	}
	r.rs = append(r.rs, rr)
}

func (r *rules) paint(img *image.RGBA, c color.Color) {
	u := image.NewUniform(c)
	for _, rr := range r.rs {
		draw.Draw(img, rr, u, image.Point{}, draw.Over)
	}
}

// textWidth is s's advance in pixels.
func textWidth(f font.Face, s string) float64 {
	return float64(font.MeasureString(f, s)) / 64
}

// lineHeight is the height of a line of f in pixels.
func lineHeight(f font.Face) float64 {
	m := f.Metrics()
	return float64(m.Ascent+m.Descent) / 64
}

// text draws s with its top left corner at (x, y).
func text(img *image.RGBA, f font.Face, c color.Color, s string, x, y float64) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: f,
		Dot: fixed.Point26_6{X: fixed.Int26_6(x * 64), Y: fixed.Int26_6(y*64) + f.Metrics().Ascent}}
	d.DrawString(s)
}

// textUp draws s turned a quarter to the left (reading bottom to top),
// centred on (cx, cy): the y axis label.
func textUp(img *image.RGBA, f font.Face, c color.Color, s string, cx, cy float64) {
	w, h := int(math.Ceil(textWidth(f, s))), int(math.Ceil(lineHeight(f)))
	if w <= 0 || h <= 0 {
		return
	}
	flat := image.NewRGBA(image.Rect(0, 0, w, h))
	text(flat, f, c, s, 0, 0)
	up := image.NewRGBA(image.Rect(0, 0, h, w))
	for y := range h {
		for x := range w {
			up.SetRGBA(y, w-1-x, flat.RGBAAt(x, y))
		}
	}
	at := image.Pt(int(math.Round(cx-float64(h)/2)), int(math.Round(cy-float64(w)/2)))
	draw.Draw(img, up.Bounds().Add(at), up, image.Point{}, draw.Over)
}

// fit shortens s with an ellipsis until it is at most w pixels wide.
func fit(f font.Face, s string, w float64) string {
	if textWidth(f, s) <= w {
		return s
	}
	r := []rune(s)
	for len(r) > 0 {
		r = r[:len(r)-1]
		if t := string(r) + "…"; textWidth(f, t) <= w {
			return t
		}
	}
	return ""
}
