package chart

import (
	"bytes"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/sagebench/sagebench/internal/result"
)

func labels(ticks []plot.Tick) string {
	var out []string
	for _, t := range ticks {
		if t.Label != "" {
			out = append(out, t.Label)
		}
	}
	return strings.Join(out, " ")
}

func TestTicks(t *testing.T) {
	tests := []struct {
		name   string
		ticker plot.Ticker
		lo, hi float64
		want   string
	}{
		{"seconds: round steps, no 2.50", Ticks{}, 0, 24.7, "0 5 10 15 20"},
		{"thousands separated", Ticks{}, 0, 5000, "0 1,000 2,000 3,000 4,000 5,000"},
		{"fractions: the step's decimals", Ticks{}, 0, 0.9, "0.0 0.2 0.4 0.6 0.8"},
		{"log: 1, 2 and 5", LogTicks{}, 3, 300, "5 10 20 50 100 200"},
		{"log: denser under three labels", LogTicks{}, 110, 900, "200 300 500"},
		{"log: decades only when wide", LogTicks{}, 1, 1e5, "1 10 100 1,000 10,000 100,000"},
		{"pool sizes: only the values", ValueTicks{1, 2, 4}, 0.5, 4.5, "1 2 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := labels(tt.ticker.Ticks(tt.lo, tt.hi)); got != tt.want {
				t.Errorf("labels %q, want %q", got, tt.want)
			}
		})
	}
	if (LogTicks{}).Ticks(0, 10) != nil {
		t.Error("a log range from 0 has no ticks")
	}
}

// TestThinnedTicksKeepPowersOfTen: on a narrow axis the labels that
// would touch are dropped, the decades kept first.
func TestThinnedTicksKeepPowersOfTen(t *testing.T) {
	p := NewPanel("", "x", "y")
	LogX(p)
	th := thinned{base: LogTicks{}, scale: plot.LogScale{}, width: vg.Points(70), style: p.X.Tick.Label}
	if got := labels(th.Ticks(10, 5000)); got != "10 100 1,000" {
		t.Errorf("narrow labels %q, want the decades", got)
	}
}

// figure is a panel with bars and a line, for the render tests.
func figure(t *testing.T, legend string) *Figure {
	p := NewCategoryPanel("bars", "ms")
	leg := Bars(p, []string{"fifo", "priority"}, []BarSeries{{Name: legend, Metrics: []result.Metric{
		{Name: "x", Unit: result.Ms, State: result.Measured, Value: 10, Interval: &[2]float64{8, 12}},
		{Name: "x", Unit: result.Ms, State: result.Never, Reason: "never"},
	}}})
	q := NewPanel("line", "s", "req/s")
	e, err := Line(q, 1, "line", plotter.XYs{{X: 0, Y: 1}, {X: 10, Y: 3}}, true)
	if err != nil {
		t.Fatal(err)
	}
	return &Figure{ID: "f", Panels: []*plot.Plot{p, q}, Legend: append(leg, e...)}
}

func TestRenderIsDeterministic(t *testing.T) {
	for _, format := range []string{"svg", "pdf"} {
		a, err := figure(t, "series").Render(format)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := figure(t, "series").Render(format)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two renderings of one figure differ", format)
		}
	}
	svg, _ := figure(t, "series").Render("svg")
	if !bytes.Contains(svg, []byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")) {
		t.Error("the SVG does not name Liberation Sans with its metric-compatible fallbacks")
	}
}

// TestCheckTextFindsCollisions: a clean figure passes; a legend label
// too long for the figure is shortened, not clipped; labels drawn on top
// of each other are caught.
func TestCheckTextFindsCollisions(t *testing.T) {
	if p := figure(t, "series").CheckText(0); len(p) != 0 {
		t.Errorf("clean figure: %v", p)
	}
	long := figure(t, strings.Repeat("a very long legend label ", 20))
	if p := long.CheckText(ColumnWidth); len(p) != 0 {
		t.Errorf("long legend label: %v", p)
	}
	f := figure(t, "series")
	l, _ := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: 5, Y: 2}, {X: 5, Y: 2}}, Labels: []string{"on top", "of each other"}})
	f.Panels[1].Add(l)
	if p := f.CheckText(0); len(p) != 1 || !strings.Contains(p[0], "overlap") {
		t.Errorf("overlapping labels: %v, want one overlap", p)
	}
}

func TestMessageFigureWraps(t *testing.T) {
	f := &Figure{ID: "m", Message: "Not measurable: " + strings.Repeat("a reason that goes on ", 30)}
	if p := f.CheckText(ColumnWidth); len(p) != 0 {
		t.Errorf("message: %v", p)
	}
}
