package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Figure is one plot of the report.
type Figure struct {
	ID      string // file-name stem, unique in a report
	Title   string
	Caption string // what the figure shows, for readers and docs
	Plot    *plot.Plot
	Width   vg.Length
	Height  vg.Length
}

// Formats of figure files.
var Formats = []string{"svg", "png"}

// maxCDFPoints bounds the points of one CDF line (page weight).
const maxCDFPoints = 200

// Render draws the figure as svg or png. A panic inside the plotting
// library (it panics on some degenerate data) becomes an error.
func (f *Figure) Render(format string) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("figure %s: drawing failed: %v", f.ID, p)
		}
	}()
	w, h := f.Width, f.Height
	if w == 0 {
		w, h = 7*vg.Inch, 3.6*vg.Inch
	}
	wt, err := f.Plot.WriterTo(w, h, format)
	if err != nil {
		return nil, fmt.Errorf("figure %s: %w", f.ID, err)
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("figure %s: %w", f.ID, err)
	}
	return buf.Bytes(), nil
}

// inlineSVG renders the figure as an <svg> element for an HTML page (the
// XML prolog and comment dropped).
func (f *Figure) inlineSVG() ([]byte, error) {
	b, err := f.Render("svg")
	if err != nil {
		return nil, err
	}
	if i := bytes.Index(b, []byte("<svg")); i > 0 {
		b = b[i:]
	}
	return b, nil
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	return p
}

// addLine adds a styled line with a legend entry (series i picks the
// colour and dash pattern).
func addLine(p *plot.Plot, i int, name string, xys plotter.XYs) error {
	if len(xys) == 0 {
		return nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("line %s: %w", name, err)
	}
	l.Color = plotutil.Color(i)
	l.Dashes = plotutil.Dashes(i / 7)
	l.Width = vg.Points(1.5)
	p.Add(l)
	if name != "" {
		p.Legend.Add(name, l)
	}
	return nil
}

// cdfPoints is the empirical CDF of xs, at most maxCDFPoints points, x
// clamped to be positive for a log axis.
func cdfPoints(xs []float64) plotter.XYs {
	if len(xs) == 0 {
		return nil
	}
	v := append([]float64(nil), xs...)
	sort.Float64s(v)
	n := min(len(v), maxCDFPoints)
	out := make(plotter.XYs, 0, n)
	for i := 0; i < n; i++ {
		j := 0
		if n > 1 {
			j = i * (len(v) - 1) / (n - 1)
		}
		out = append(out, plotter.XY{X: math.Max(v[j], 1e-3), Y: float64(j+1) / float64(len(v))})
	}
	return out
}

// logX makes the x axis logarithmic (values must be positive); an empty
// plot gets the range 1–1000 ms, as a log axis cannot span zero.
func logX(p *plot.Plot) {
	if p.X.Min <= 0 || p.X.Min > p.X.Max {
		p.X.Min, p.X.Max = 1, 1000
	}
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
}

// logTicks labels 1, 2 and 5 of every decade in range (LogTicks labels
// only powers of ten, too few for a latency axis spanning one decade).
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		dec := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * dec
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', 4, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// quantile is the linear-interpolation quantile of sorted v (NaN if empty).
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	h := q * float64(len(v)-1)
	i := int(h)
	if i+1 >= len(v) {
		return v[len(v)-1]
	}
	return v[i] + (h-float64(i))*(v[i+1]-v[i])
}

var red = color.RGBA{R: 200, A: 255}
