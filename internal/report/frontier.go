package report

import (
	"regexp"
	"sort"
	"strconv"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// scaleKey matches the Q4 per-scale metrics: engines=N.max_rate.
var scaleKey = regexp.MustCompile(`^engines=(\d+)\.max_rate$`)

// scaleFrontierFigure draws Q4's frontier from the run's result: per
// pool size the highest rate that met the SLO (the low end of its
// bracket), against ideal linear scaling from one engine. Nil when the
// run has no such metrics.
func scaleFrontierFigure(r *Run, prefix string) (*Figure, error) {
	var pts plotter.XYs
	if r.Record.Result == nil {
		return nil, nil
	}
	for _, rm := range r.Record.Result.Metrics {
		m := scaleKey.FindStringSubmatch(rm.Name)
		if m == nil || rm.Interval == nil || rm.Interval[0] <= 0 {
			continue
		}
		v := rm.Interval[0]
		n, err := strconv.Atoi(m[1])
		if err != nil || n <= 0 {
			continue
		}
		pts = append(pts, plotter.XY{X: float64(n), Y: v})
	}
	if len(pts) == 0 {
		return nil, nil
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
	p := newPlot("Scale frontier", "engines", "max rate meeting the SLO (req/s)")
	if err := addLine(p, 2, "measured", pts); err != nil {
		return nil, err
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle.Radius = vg.Points(3)
	p.Add(sc)
	if pts[0].X == 1 {
		ideal := make(plotter.XYs, len(pts))
		for i, q := range pts {
			ideal[i] = plotter.XY{X: q.X, Y: q.X * pts[0].Y}
		}
		if err := addLine(p, 7, "ideal (n × rate at 1 engine)", ideal); err != nil {
			return nil, err
		}
	}
	p.Y.Min = 0
	return &Figure{ID: prefix + "frontier", Title: p.Title.Text, Plot: p,
		Caption: "Q4: for each pool size, the highest offered rate whose probe met the p99 and success SLO (the low end of engines=N.max_rate's bracket), against ideal linear scaling from one engine."}, nil
}
