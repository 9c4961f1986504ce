package chart

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// rect is a filled rectangle in data coordinates (a bar).
type rect struct {
	x0, x1, y0, y1 float64
	fill           color.Color
	hatch          bool // drawn lighter with an outline (the second of a pair)
}

// rects draws bars.
type rects []rect

var _ plot.DataRanger = rects(nil)

func (rs rects) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, r := range rs {
		pts := []vg.Point{{X: trX(r.x0), Y: trY(r.y0)}, {X: trX(r.x1), Y: trY(r.y0)}, {X: trX(r.x1), Y: trY(r.y1)}, {X: trX(r.x0), Y: trY(r.y1)}}
		fill := r.fill
		if r.hatch {
			fill = lighten(r.fill)
		}
		c.FillPolygon(fill, c.ClipPolygonXY(pts))
		if r.hatch {
			c.StrokeLines(draw.LineStyle{Color: r.fill, Width: vg.Points(0.8)}, c.ClipLinesXY(append(pts, pts[0]))...)
		}
	}
}

func (rs rects) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, r := range rs {
		xmin, xmax = math.Min(xmin, r.x0), math.Max(xmax, r.x1)
		ymin, ymax = math.Min(ymin, math.Min(r.y0, r.y1)), math.Max(ymax, math.Max(r.y0, r.y1))
	}
	return
}

// Thumbnail draws the bar's swatch in a legend.
func (r rect) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}}
	if r.hatch {
		c.FillPolygon(lighten(r.fill), pts)
		c.StrokeLines(draw.LineStyle{Color: r.fill, Width: vg.Points(0.8)}, append(pts, pts[0]))
		return
	}
	c.FillPolygon(r.fill, pts)
}

// lighten mixes c 65 % towards white.
func lighten(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8(float64(v>>8) + 0.65*(255-float64(v>>8))) }
	return color.RGBA{mix(r), mix(g), mix(b), 0xff}
}

// whisker is an interval or a bracket at x, from lo to hi (hi may be
// +Inf: open, drawn to the top of the axis with an arrowhead).
type whisker struct {
	x, lo, hi float64
	ink       color.Color
	cap       vg.Length
}

type whiskers []whisker

var _ plot.DataRanger = whiskers(nil)

func (ws whiskers) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, w := range ws {
		sty := draw.LineStyle{Color: w.ink, Width: vg.Points(1.1)}
		x := trX(w.x)
		lo, hi := trY(w.lo), c.Max.Y
		if !math.IsInf(w.hi, 1) {
			hi = trY(w.hi)
		}
		c.StrokeLine2(sty, x, lo, x, hi)
		c.StrokeLine2(sty, x-w.cap, lo, x+w.cap, lo)
		if math.IsInf(w.hi, 1) {
			c.FillPolygon(w.ink, []vg.Point{{X: x - w.cap, Y: hi - 2*w.cap}, {X: x + w.cap, Y: hi - 2*w.cap}, {X: x, Y: hi}})
		} else {
			c.StrokeLine2(sty, x-w.cap, hi, x+w.cap, hi)
		}
	}
}

func (ws whiskers) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, w := range ws {
		xmin, xmax = math.Min(xmin, w.x), math.Max(xmax, w.x)
		ymin = math.Min(ymin, w.lo)
		if !math.IsInf(w.hi, 1) {
			ymax = math.Max(ymax, w.hi)
		}
		ymax = math.Max(ymax, w.lo)
	}
	return
}

// Thumbnail draws an interval in a legend.
func (w whisker) Thumbnail(c *draw.Canvas) {
	sty := draw.LineStyle{Color: w.ink, Width: vg.Points(1.1)}
	x := (c.Min.X + c.Max.X) / 2
	c.StrokeLine2(sty, x, c.Min.Y, x, c.Max.Y)
	c.StrokeLine2(sty, x-w.cap, c.Min.Y, x+w.cap, c.Min.Y)
	c.StrokeLine2(sty, x-w.cap, c.Max.Y, x+w.cap, c.Max.Y)
}

// HLine is a horizontal line across the panel at Y (an SLO or a
// recovery bound).
type HLine struct {
	Y      float64
	Color  color.Color
	Dashes []vg.Length
}

var _ plot.DataRanger = HLine{}

func (h HLine) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	y := trY(h.Y)
	c.StrokeLine2(draw.LineStyle{Color: h.Color, Width: vg.Points(1.2), Dashes: h.Dashes}, c.Min.X, y, c.Max.X, y)
}

// DataRange keeps Y in view and leaves the x range to the data.
func (h HLine) DataRange() (float64, float64, float64, float64) {
	return math.Inf(1), math.Inf(-1), h.Y, h.Y
}

// Thumbnail draws the line in a legend.
func (h HLine) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(draw.LineStyle{Color: h.Color, Width: vg.Points(1.2), Dashes: h.Dashes}, c.Min.X, y, c.Max.X, y)
}

// Span shades [X0, X1] across the panel's height (a fault, a phase).
type Span struct {
	X0, X1 float64
	Fill   color.Color
}

var _ plot.DataRanger = Span{}

func (s Span) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x0, x1 := max(trX(s.X0), c.Min.X), min(trX(s.X1), c.Max.X)
	if x1 <= x0 {
		return
	}
	c.FillPolygon(s.Fill, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
}

func (s Span) DataRange() (float64, float64, float64, float64) {
	return s.X0, s.X1, math.Inf(1), math.Inf(-1)
}

// Thumbnail draws the shade in a legend.
func (s Span) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.Fill, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
}

// VLine is a vertical line at X across the panel (an event), with an
// optional Tag drawn in a box at the top of the data area.
type VLine struct {
	X     float64
	Tag   string
	Color color.Color
}

// Thumbnail draws the event's tag (or a dashed line) in a legend.
func (v VLine) Thumbnail(c *draw.Canvas) {
	x := (c.Min.X + c.Max.X) / 2
	if v.Tag == "" {
		c.StrokeLine2(draw.LineStyle{Color: v.Color, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}, x, c.Min.Y, x, c.Max.Y)
		return
	}
	drawTag(*c, v.Tag, x, (c.Min.Y+c.Max.Y)/2+tagHeight()/2, v.Color)
}

// Events are vertical lines whose tags are stacked at draw time: a tag
// that would touch its left neighbour goes one row down.
type Events []VLine

var _ plot.DataRanger = Events(nil)

func (es Events) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	var rowEnds []vg.Length // right edge of the last tag in each row
	for _, v := range es {
		x := trX(v.X)
		if x < c.Min.X-0.01 || x > c.Max.X+0.01 {
			continue
		}
		c.StrokeLine2(draw.LineStyle{Color: v.Color, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}, x, c.Min.Y, x, c.Max.Y)
		if v.Tag == "" {
			continue
		}
		w := tagWidth(v.Tag)
		cx := min(max(x, c.Min.X+w/2), c.Max.X-w/2)
		row := 0
		for row < len(rowEnds) && rowEnds[row]+vg.Points(2) > cx-w/2 {
			row++
		}
		if row == len(rowEnds) {
			rowEnds = append(rowEnds, 0)
		}
		rowEnds[row] = cx + w/2
		drawTag(c, v.Tag, cx, c.Max.Y-vg.Points(1)-vg.Length(row)*(tagHeight()+vg.Points(1)), v.Color)
	}
}

func (es Events) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, v := range es {
		xmin, xmax = math.Min(xmin, v.X), math.Max(xmax, v.X)
	}
	return
}

// Phases shade alternate spans and name each at the top of the data
// area when its name fits the span (shortened with an ellipsis, or left
// out when not even that fits).
type Phases []PhaseSpan

// PhasesLow are Phases named at the foot of the panel, for a panel whose
// top carries the tags of drill events.
type PhasesLow []PhaseSpan

var _ plot.DataRanger = PhasesLow(nil)

func (ps PhasesLow) Plot(c draw.Canvas, p *plot.Plot) { plotPhases(c, p, ps, false) }

func (ps PhasesLow) DataRange() (xmin, xmax, ymin, ymax float64) { return Phases(ps).DataRange() }

// PhaseSpan is one named span.
type PhaseSpan struct {
	Name   string
	X0, X1 float64
}

var _ plot.DataRanger = Phases(nil)

func (ps Phases) Plot(c draw.Canvas, p *plot.Plot) { plotPhases(c, p, ps, true) }

// plotPhases shades every other span and names each, at the top of the
// panel or at its foot.
func plotPhases(c draw.Canvas, p *plot.Plot, ps []PhaseSpan, top bool) {
	trX, _ := p.Transforms(&c)
	sty := textStyle(smallSize, Grey)
	sty.XAlign = draw.XCenter
	for i, s := range ps {
		x0, x1 := max(trX(s.X0), c.Min.X), min(trX(s.X1), c.Max.X)
		if x1 <= x0 {
			continue
		}
		if i%2 == 0 {
			c.FillPolygon(PhaseFill, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
		}
		name := fit(s.Name, sty, x1-x0-vg.Points(4))
		if name == "…" || name == "" {
			continue
		}
		y := c.Max.Y - sty.Height("Mg") - vg.Points(1) + sty.FontExtents().Descent
		if !top {
			y = c.Min.Y + vg.Points(1) + sty.FontExtents().Descent
		}
		c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: y}, name)
	}
}

func (ps Phases) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range ps {
		xmin, xmax = math.Min(xmin, s.X0), math.Max(xmax, s.X1)
	}
	return
}

func tagHeight() vg.Length { return textStyle(smallSize, color.Black).Height("8") + vg.Points(3) }

// tagWidth is the width of a tag's box.
func tagWidth(tag string) vg.Length {
	return textStyle(smallSize, color.Black).Width(tag) + vg.Points(4)
}

// drawTag draws tag in a white box with a coloured frame, its top centre
// at (x, top).
func drawTag(c draw.Canvas, tag string, x, top vg.Length, ink color.Color) {
	sty := textStyle(smallSize, ink)
	w, h := tagWidth(tag), tagHeight()
	box := []vg.Point{{X: x - w/2, Y: top - h}, {X: x + w/2, Y: top - h}, {X: x + w/2, Y: top}, {X: x - w/2, Y: top}}
	c.FillPolygon(color.White, box)
	c.StrokeLines(draw.LineStyle{Color: ink, Width: vg.Points(0.8)}, append(box, box[0]))
	sty.XAlign = draw.XCenter
	c.FillText(sty, vg.Point{X: x, Y: top - h + vg.Points(1.5) + sty.FontExtents().Descent}, tag)
}
