package chart

import (
	"fmt"
	"image"
	"image/color"
	"math"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// TextBox is where one text element of a figure is drawn, in points
// from the figure's bottom-left corner.
type TextBox struct {
	Text string
	Box  vg.Rectangle
}

// affine is a 2-D transform: x' = a·x + c·y + e, y' = b·x + d·y + f.
type affine struct{ a, b, c, d, e, f float64 }

func (m affine) mul(n affine) affine {
	return affine{
		a: m.a*n.a + m.c*n.b, b: m.b*n.a + m.d*n.b,
		c: m.a*n.c + m.c*n.d, d: m.b*n.c + m.d*n.d,
		e: m.a*n.e + m.c*n.f + m.e, f: m.b*n.e + m.d*n.f + m.f,
	}
}

func (m affine) apply(x, y float64) (float64, float64) {
	return m.a*x + m.c*y + m.e, m.b*x + m.d*y + m.f
}

// textRecorder is a canvas that draws nothing and records the box of
// every string filled, through the transforms in force.
type textRecorder struct {
	w, h  vg.Length
	m     affine
	stack []affine
	boxes []TextBox
}

var _ vg.CanvasSizer = (*textRecorder)(nil)

func newTextRecorder(w, h vg.Length) *textRecorder {
	return &textRecorder{w: w, h: h, m: affine{a: 1, d: 1}}
}

func (r *textRecorder) Size() (vg.Length, vg.Length)        { return r.w, r.h }
func (r *textRecorder) SetLineWidth(vg.Length)              {}
func (r *textRecorder) SetLineDash([]vg.Length, vg.Length)  {}
func (r *textRecorder) SetColor(color.Color)                {}
func (r *textRecorder) Stroke(vg.Path)                      {}
func (r *textRecorder) Fill(vg.Path)                        {}
func (r *textRecorder) DrawImage(vg.Rectangle, image.Image) {}
func (r *textRecorder) Push()                               { r.stack = append(r.stack, r.m) }
func (r *textRecorder) Pop() {
	if n := len(r.stack); n > 0 {
		r.m, r.stack = r.stack[n-1], r.stack[:n-1]
	}
}
func (r *textRecorder) Rotate(rad float64) {
	s, c := math.Sincos(rad)
	r.m = r.m.mul(affine{a: c, b: s, c: -s, d: c})
}
func (r *textRecorder) Translate(pt vg.Point) {
	r.m = r.m.mul(affine{a: 1, d: 1, e: float64(pt.X), f: float64(pt.Y)})
}
func (r *textRecorder) Scale(x, y float64) { r.m = r.m.mul(affine{a: x, d: y}) }

// FillString records the string's box: its advance width from pt, and
// the font's ascent above and descent below the baseline.
func (r *textRecorder) FillString(f font.Face, pt vg.Point, text string) {
	if text == "" || f.Font.Size == 0 {
		return
	}
	ext := f.Extents()
	x0, x1 := float64(pt.X), float64(pt.X+f.Width(text))
	y0, y1 := float64(pt.Y-ext.Descent), float64(pt.Y+ext.Ascent)
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, c := range [][2]float64{{x0, y0}, {x1, y0}, {x0, y1}, {x1, y1}} {
		x, y := r.m.apply(c[0], c[1])
		minX, maxX, minY, maxY = math.Min(minX, x), math.Max(maxX, x), math.Min(minY, y), math.Max(maxY, y)
	}
	r.boxes = append(r.boxes, TextBox{Text: text, Box: vg.Rectangle{
		Min: vg.Point{X: vg.Length(minX), Y: vg.Length(minY)}, Max: vg.Point{X: vg.Length(maxX), Y: vg.Length(maxY)}}})
}

// TextBoxes draws the figure at width w (0: its own) on a recording
// canvas and returns every text element's box.
func (f *Figure) TextBoxes(w vg.Length) []TextBox {
	w, h := f.Size(w)
	rec := newTextRecorder(w, h)
	f.draw(draw.New(rec))
	return rec.boxes
}

// slack is how far two boxes may touch or a box may leave the canvas
// before it counts (font boxes include the line gap's share).
const slack = 0.75

// CheckText draws the figure at width w and returns a description of
// every pair of text elements that overlap and every text element that
// is clipped by the figure's edge; none when the layout is clean.
func (f *Figure) CheckText(w vg.Length) []string {
	w, h := f.Size(w)
	boxes := f.TextBoxes(w)
	var out []string
	for i, a := range boxes {
		if a.Box.Min.X < -slack || a.Box.Min.Y < -slack || a.Box.Max.X > w+slack || a.Box.Max.Y > h+slack {
			out = append(out, fmt.Sprintf("figure %s: %q is clipped (box %.1f,%.1f–%.1f,%.1f on a %.0f×%.0f pt canvas)",
				f.ID, a.Text, a.Box.Min.X, a.Box.Min.Y, a.Box.Max.X, a.Box.Max.Y, w, h))
		}
		for _, b := range boxes[i+1:] {
			if overlap(a.Box, b.Box) {
				out = append(out, fmt.Sprintf("figure %s: %q and %q overlap", f.ID, a.Text, b.Text))
			}
		}
	}
	return out
}

func overlap(a, b vg.Rectangle) bool {
	return a.Min.X+slack < b.Max.X && b.Min.X+slack < a.Max.X && a.Min.Y+slack < b.Max.Y && b.Min.Y+slack < a.Max.Y
}
