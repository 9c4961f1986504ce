package answer

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/sagebench/sagebench/internal/chart"
	"github.com/sagebench/sagebench/internal/result"
)

var q4Recipe = recipe{
	title: "Scale frontier: the highest rate meeting the SLO per pool size",
	caption: "For each pool size, the bracket between the highest offered rate whose probe met the SLO (the point) and the lowest that missed it " +
		"(the cap; an arrow when no probe missed). The dashed grey line is ideal linear scaling from one engine's passing rate: " +
		"the gap between it and the measured line is the scaling efficiency.",
	build:  q4Panels,
	height: 2.4 * vg.Inch, // a column figure's legend under a quarter of it
}

// frontierPoint is one pool size's bracket.
type frontierPoint struct {
	n      float64
	lo, hi float64
}

func q4Panels(c Column, key string, _ vg.Length) (panelSet, error) {
	pts, err := frontierPoints(c.Result, key)
	if err != nil {
		return panelSet{}, err
	}
	if len(pts) == 0 {
		return panelSet{why: "the result has no frontier (max rate per pool size)"}, nil
	}
	p := chart.NewPanel("max rate meeting the SLO", "engines", "req/s")
	var leg []chart.LegendEntry
	xs := make([]float64, len(pts))
	for i, q := range pts {
		xs[i] = q.n
	}
	if pts[0].n == 1 && pts[0].lo > 0 {
		ideal := make(plotter.XYs, len(pts))
		for i, q := range pts {
			ideal[i] = plotter.XY{X: q.n, Y: q.n * pts[0].lo}
		}
		e, err := chart.Plain(p, "ideal (n × rate at 1 engine)", ideal, chart.Grey, []vg.Length{vg.Points(5), vg.Points(3)})
		if err != nil {
			return panelSet{}, err
		}
		leg = append(leg, e...)
	}
	var meas plotter.XYs
	var his []float64
	for _, q := range pts {
		meas = append(meas, plotter.XY{X: q.n, Y: q.lo})
		his = append(his, q.hi)
	}
	e, err := chart.Line(p, 0, "measured (highest passing rate)", meas, true)
	if err != nil {
		return panelSet{}, err
	}
	leg = append(leg, e...)
	leg = append(leg, chart.Brackets(p, 0, "bracket up to the lowest failing rate", meas, his)...)
	p.X.Tick.Marker = chart.ValueTicks(xs)
	p.X.Min, p.X.Max = xs[0]-0.3*math.Max(1, xs[len(xs)-1]-xs[0])/float64(len(xs)), xs[len(xs)-1]+0.3*math.Max(1, xs[len(xs)-1]-xs[0])/float64(len(xs))
	p.Y.Min = 0
	return panelSet{panels: []*plot.Plot{p}, legend: leg}, nil
}

// frontierPoints reads the frontier table keyed key (engines, max_rate),
// else the engines=N.max_rate metrics, in pool-size order (numerically);
// a rate not in req/s is an error (the figure's axis).
func frontierPoints(r *result.Result, key string) ([]frontierPoint, error) {
	var out []frontierPoint
	var bad error
	add := func(n string, m result.Metric) {
		if m.Name != "" && m.Unit != result.ReqPerS {
			bad = fmt.Errorf("metric %s in %q on the frontier's req/s axis", m.Name, m.Unit)
		}
		k, err := strconv.ParseFloat(n, 64)
		if err != nil || k <= 0 {
			return
		}
		switch {
		case m.State == result.Bound && m.Interval != nil && m.Interval[0] > 0:
			out = append(out, frontierPoint{n: k, lo: m.Interval[0], hi: m.Interval[1]})
		case m.State == result.Measured:
			hi := m.Value
			if m.Interval != nil {
				hi = m.Interval[1]
			}
			out = append(out, frontierPoint{n: k, lo: m.Value, hi: hi})
		}
	}
	if t, ok := table(r, key, holds("max_rate")); ok {
		rate := column(t, "max_rate")
		for _, row := range t.Rows {
			add(cellText(row, 0), cellMetric(row, rate))
		}
	} else if r != nil && (len(r.Tables) == 0 || legacy(r)) {
		for _, m := range r.Metrics {
			if n, ok := scaleOf(m.Name); ok {
				add(n, m)
			}
		}
	}
	slices.SortFunc(out, func(a, b frontierPoint) int { return cmp.Compare(a.n, b.n) })
	return out, bad
}

// scaleOf reads N from "engines=N.max_rate".
func scaleOf(name string) (string, bool) {
	const pre, suf = "engines=", ".max_rate"
	if len(name) > len(pre)+len(suf) && name[:len(pre)] == pre && name[len(name)-len(suf):] == suf {
		return name[len(pre) : len(name)-len(suf)], true
	}
	return "", false
}
