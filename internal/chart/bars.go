package chart

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/sagebench/sagebench/internal/result"
)

// BarSeries is one series of a grouped bar panel: a metric per category
// (a zero Metric, without a name, where the series has none).
type BarSeries struct {
	Name    string
	Metrics []result.Metric
	// Color is the series' colour index; Light draws it lighter with an
	// outline (the second of a pair, e.g. "alone" beside "contended").
	Color int
	Light bool
}

// Bars draws series as grouped bars over categories on p and returns the
// legend entries: one per series, and one for each kind of mark a state
// needs (interval, bracket, never, not measurable) that occurs. A
// measured metric is a bar with its interval as a whisker; a bound is a
// bracket without a bar (an open end runs to the top with an arrow);
// never is an arrow at the top of the axis; not measurable is a grey ×
// on the baseline.
func Bars(p *plot.Plot, categories []string, series []BarSeries) []LegendEntry {
	n := max(len(series), 1)
	slot := 0.8 / float64(n)
	var bars rects
	var ivs, brackets whiskers
	var nevers, nms plotter.XYs
	var legend []LegendEntry
	top := 0.0
	for j, s := range series {
		sw := rect{fill: Color(s.Color), hatch: s.Light}
		legend = append(legend, LegendEntry{Label: s.Name, Thumbs: []plot.Thumbnailer{sw}})
		for i, m := range s.Metrics {
			if i >= len(categories) || m.Name == "" {
				continue
			}
			x := float64(i) - 0.4 + slot*(float64(j)+0.5)
			switch m.State {
			case result.Measured:
				bars = append(bars, rect{x0: x - slot*0.42, x1: x + slot*0.42, y0: 0, y1: m.Value, fill: sw.fill, hatch: s.Light})
				top = math.Max(top, m.Value)
				if iv := m.Interval; iv != nil && isFinite(iv[0]) && isFinite(iv[1]) {
					ivs = append(ivs, whisker{x: x, lo: iv[0], hi: iv[1], ink: color.Black, cap: vg.Points(2.5)})
					top = math.Max(top, iv[1])
				}
			case result.Bound:
				if iv := m.Interval; iv != nil {
					brackets = append(brackets, whisker{x: x, lo: math.Max(iv[0], 0), hi: iv[1], ink: sw.fill, cap: vg.Points(3)})
					top = math.Max(top, iv[0])
					if isFinite(iv[1]) {
						top = math.Max(top, iv[1])
					}
				}
			case result.Never:
				nevers = append(nevers, plotter.XY{X: x})
			default:
				nms = append(nms, plotter.XY{X: x})
			}
		}
	}
	p.Add(bars, ivs, brackets)
	legend = append(legend, stateMarks(p, top, ivs, brackets, nevers, nms)...)
	categoryAxis(p, categories)
	p.Y.Min = 0
	return legend
}

// stateMarks draws never and not-measurable marks (they need the axis
// top) and returns the legend entries of every special mark used.
func stateMarks(p *plot.Plot, top float64, ivs, brackets whiskers, nevers, nms plotter.XYs) []LegendEntry {
	var out []LegendEntry
	if len(ivs) > 0 {
		out = append(out, LegendEntry{Label: "95 % CI", Thumbs: []plot.Thumbnailer{whisker{ink: color.Black, cap: vg.Points(2.5)}}})
	}
	if len(brackets) > 0 {
		out = append(out, LegendEntry{Label: "bracket (bound)", Thumbs: []plot.Thumbnailer{whisker{ink: Grey, cap: vg.Points(3)}}})
	}
	if top <= 0 {
		top = 1
	}
	if len(nevers) > 0 {
		for i := range nevers {
			nevers[i].Y = top * 1.05
		}
		out = append(out, LegendEntry{Label: "never (within the run)", Thumbs: []plot.Thumbnailer{addGlyphs(p, nevers, draw.TriangleGlyph{}, ErrorInk)}})
	}
	if len(nms) > 0 {
		out = append(out, LegendEntry{Label: "not measurable", Thumbs: []plot.Thumbnailer{addGlyphs(p, nms, draw.CrossGlyph{}, Grey)}})
	}
	return out
}

func addGlyphs(p *plot.Plot, pts plotter.XYs, g draw.GlyphDrawer, ink color.Color) *plotter.Scatter {
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return nil
	}
	s.GlyphStyle = draw.GlyphStyle{Shape: g, Color: ink, Radius: vg.Points(3.5)}
	p.Add(s)
	return s
}

// categoryAxis labels the integers 0..n-1 with the categories and hides
// tick marks (a category panel has no vertical grid: NewCategoryPanel).
func categoryAxis(p *plot.Plot, categories []string) {
	ticks := make([]plot.Tick, len(categories))
	for i, c := range categories {
		ticks[i] = plot.Tick{Value: float64(i), Label: c}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Tick.Length = 0
	p.X.Min, p.X.Max = -0.5, float64(len(categories))-0.5
}

// fitCategories turns the category labels of p vertical when they would
// not fit side by side in a data area about w wide (vertical, their
// boxes are as narrow as a line of text).
func fitCategories(p *plot.Plot, w vg.Length) {
	ticks, ok := p.X.Tick.Marker.(plot.ConstantTicks)
	if !ok || len(ticks) == 0 {
		return
	}
	sty := p.X.Tick.Label
	widest := vg.Length(0)
	for _, t := range ticks {
		widest = max(widest, sty.Width(t.Label))
	}
	if widest+vg.Points(6) <= w/vg.Length(len(ticks)) {
		p.X.Tick.Label.Rotation = 0
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XCenter, draw.YTop
		return
	}
	p.X.Tick.Label.Rotation = math.Pi / 2
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
}
