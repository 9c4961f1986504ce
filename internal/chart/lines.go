package chart

import (
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Line adds series i as a line (its colour and dash pattern, with
// markers when marked) and returns its legend entry; nil without points.
func Line(p *plot.Plot, i int, name string, xys plotter.XYs, marked bool) ([]LegendEntry, error) {
	if len(xys) == 0 {
		return nil, nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, fmt.Errorf("line %s: %w", name, err)
	}
	l.Color, l.Dashes, l.Width = Color(i), Dashes(i), vg.Points(1.4)
	p.Add(l)
	thumbs := []plot.Thumbnailer{l}
	if marked {
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, fmt.Errorf("markers %s: %w", name, err)
		}
		s.GlyphStyle = draw.GlyphStyle{Shape: Glyph(i), Color: Color(i), Radius: vg.Points(2.8)}
		p.Add(s)
		thumbs = append(thumbs, s)
	}
	if name == "" {
		return nil, nil
	}
	return []LegendEntry{{Label: name, Thumbs: thumbs}}, nil
}

// Plain adds a line in a fixed colour and dash pattern (a reference such
// as ideal scaling, drawn under the data) and returns its legend entry.
func Plain(p *plot.Plot, name string, xys plotter.XYs, ink color.Color, dashes []vg.Length) ([]LegendEntry, error) {
	if len(xys) == 0 {
		return nil, nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, fmt.Errorf("line %s: %w", name, err)
	}
	l.Color, l.Dashes, l.Width = ink, dashes, vg.Points(1.2)
	p.Add(l)
	return []LegendEntry{{Label: name, Thumbs: []plot.Thumbnailer{l}}}, nil
}

// Brackets adds a bracket per point, from Y (the low end) to hi[i] (+Inf:
// open) in series i's colour, and returns the legend entry.
func Brackets(p *plot.Plot, i int, name string, xys plotter.XYs, hi []float64) []LegendEntry {
	var ws whiskers
	for k, q := range xys {
		ws = append(ws, whisker{x: q.X, lo: q.Y, hi: hi[k], ink: Color(i), cap: vg.Points(3)})
	}
	if len(ws) == 0 {
		return nil
	}
	p.Add(ws)
	return []LegendEntry{{Label: name, Thumbs: []plot.Thumbnailer{whisker{ink: Color(i), cap: vg.Points(3)}}}}
}

// CDF is the empirical distribution of xs in at most n points (x
// clamped to be positive for a log axis).
func CDF(xs []float64, n int) plotter.XYs {
	if len(xs) == 0 {
		return nil
	}
	v := append([]float64(nil), xs...)
	sort.Float64s(v)
	n = min(len(v), n)
	out := make(plotter.XYs, 0, n)
	for i := range n {
		j := 0
		if n > 1 {
			j = i * (len(v) - 1) / (n - 1)
		}
		out = append(out, plotter.XY{X: math.Max(v[j], 1e-3), Y: float64(j+1) / float64(len(v))})
	}
	return out
}

// LogX makes p's x axis logarithmic (an empty axis gets 1–1000).
func LogX(p *plot.Plot) {
	if p.X.Min <= 0 || p.X.Min >= p.X.Max {
		p.X.Min, p.X.Max = 1, 1000
	}
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = LogTicks{}
}

// Share gives panels one x range and one y range (the union of theirs):
// panels side by side compare at a glance.
func Share(panels []*plot.Plot, x, y bool) {
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, p := range panels {
		if p == nil {
			continue
		}
		xmin, xmax = math.Min(xmin, p.X.Min), math.Max(xmax, p.X.Max)
		ymin, ymax = math.Min(ymin, p.Y.Min), math.Max(ymax, p.Y.Max)
	}
	for _, p := range panels {
		if p == nil {
			continue
		}
		if x && xmin < xmax {
			p.X.Min, p.X.Max = xmin, xmax
		}
		if y && ymin < ymax {
			p.Y.Min, p.Y.Max = ymin, ymax
		}
	}
}

// Headroom raises the top of p's y axis by frac of its range (room for
// tags and phase names above the data).
func Headroom(p *plot.Plot, frac float64) {
	if r := p.Y.Max - p.Y.Min; r > 0 {
		p.Y.Max += r * frac
	} else {
		p.Y.Max = p.Y.Min + 1
	}
}
