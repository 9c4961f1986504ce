package report

import (
	"fmt"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg/draw"
)

// comparisonFigures draws the runs side by side: overlaid E2E CDFs and
// the throughput–p99 frontier (Q4 style: each run one operating point).
func comparisonFigures(runs []*Run) ([]*Figure, error) {
	if len(runs) < 2 {
		return nil, nil
	}
	p := newPlot("E2E latency CDF per run", "end-to-end latency (ms, log scale)", "fraction of requests ≤ x")
	for i, r := range runs {
		var xs []float64
		for _, s := range r.Samples {
			if s.OK {
				xs = append(xs, s.E2EMs)
			}
		}
		if err := addLine(p, i, r.Label(), cdfPoints(xs)); err != nil {
			return nil, err
		}
	}
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top, p.Legend.Left = false, false // bottom right: a CDF leaves it empty
	logX(p)
	cdf := &Figure{ID: "compare-cdf", Title: p.Title.Text, Plot: p,
		Caption: "End-to-end latency CDF of each run, overlaid (successful requests)."}
	fr, err := frontierFigure(runs)
	if err != nil {
		return nil, err
	}
	return []*Figure{cdf, fr}, nil
}

func frontierFigure(runs []*Run) (*Figure, error) {
	p := newPlot("Throughput–latency frontier", "delivered throughput (req/s)", "p99 end-to-end latency (ms)")
	var labels plotter.XYLabels
	for i, r := range runs {
		s := r.Record.Summary
		if math.IsNaN(s.Throughput) || math.IsNaN(s.E2E.P99) {
			continue
		}
		pts := plotter.XYs{{X: s.Throughput, Y: s.E2E.P99}}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, fmt.Errorf("frontier: %w", err)
		}
		sc.GlyphStyle.Color = plotutil.Color(i)
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		sc.GlyphStyle.Radius = 4
		if !r.Valid() {
			sc.GlyphStyle.Shape = draw.CrossGlyph{}
		}
		p.Add(sc)
		labels.XYs = append(labels.XYs, pts[0])
		labels.Labels = append(labels.Labels, " "+r.Label())
	}
	if len(labels.XYs) > 0 {
		l, err := plotter.NewLabels(labels)
		if err != nil {
			return nil, fmt.Errorf("frontier labels: %w", err)
		}
		p.Add(l)
	}
	return &Figure{ID: "compare-frontier", Title: p.Title.Text, Plot: p,
		Caption: "Each run as one point: completed requests per second against p99 end-to-end latency (down and right is better); a cross marks an invalid run."}, nil
}
