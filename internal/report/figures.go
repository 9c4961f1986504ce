package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/sagebench/sagebench/internal/capture"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// maxMetricPlots bounds the recorded-metric panels per run.
const maxMetricPlots = 4

// runFigures builds the figures of one run; prefix keeps IDs unique
// across runs.
func runFigures(r *Run, prefix string) ([]*Figure, error) {
	var figs []*Figure
	cdfs, err := cdfFigures(r, prefix)
	if err != nil {
		return nil, err
	}
	figs = append(figs, cdfs...)
	for _, build := range []func(*Run, string) (*Figure, error){throughputFigure, p99Figure, groupBarFigure, scaleFrontierFigure, turnFigure} {
		f, err := build(r, prefix)
		if err != nil {
			return nil, err
		}
		if f != nil {
			figs = append(figs, f)
		}
	}
	mf, err := metricFigures(r, prefix)
	if err != nil {
		return nil, err
	}
	return append(figs, mf...), nil
}

// cdfFigures draws one latency CDF per label that varies (the first has
// id "cdf", the others "cdf-LABEL"), or one for the whole run.
func cdfFigures(r *Run, prefix string) ([]*Figure, error) {
	dims := groupDimensions(r.Samples)
	if len(dims) == 0 {
		dims = []string{""}
	}
	var out []*Figure
	for i, dim := range dims {
		f, err := cdfFigure(r, dim)
		if err != nil {
			return nil, err
		}
		f.ID = prefix + "cdf"
		if i > 0 {
			f.ID += "-" + dim
		}
		out = append(out, f)
	}
	return out, nil
}

func cdfFigure(r *Run, dim string) (*Figure, error) {
	names, groups := groupSamples(r.Samples, dim)
	by := "all requests"
	if dim != "" {
		by = "by " + dim
	}
	p := newPlot("E2E latency CDF, "+by, "end-to-end latency (ms, log scale)", "fraction of requests ≤ x")
	for i, n := range names {
		if err := addLine(p, i, fmt.Sprintf("%s (n=%d)", n, len(groups[n])), cdfPoints(groups[n])); err != nil {
			return nil, err
		}
	}
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top, p.Legend.Left = false, false // bottom right: a CDF leaves it empty
	logX(p)
	return &Figure{Title: p.Title.Text, Plot: p,
		Caption: "Empirical CDF of end-to-end latency (from the intended send time, so queueing delay counts) of successful requests and transactions, one line per " + orAll(dim) + "."}, nil
}

func orAll(dim string) string {
	if dim == "" {
		return "run (no label varies)"
	}
	return dim
}

// bins splits the run into time bins of width seconds (about 120 bins,
// at least 1 s each).
func bins(samples []Sample) (float64, int) {
	end := 0.0
	for _, s := range samples {
		end = math.Max(end, s.EndS)
	}
	width := math.Max(1, math.Ceil(end/120))
	return width, int(end/width) + 1
}

func throughputFigure(r *Run, prefix string) (*Figure, error) {
	width, n := bins(r.Samples)
	ok, bad := make([]float64, n), make([]float64, n)
	for _, s := range r.Samples {
		i := int(s.EndS / width)
		if s.OK {
			ok[i]++
		} else {
			bad[i]++
		}
	}
	p := newPlot("Throughput and errors over time", "time since start (s)", "per second")
	okXY, badXY := binXYs(ok, width, 1/width), binXYs(bad, width, 1/width)
	if err := addLine(p, 2, "completed/s", okXY); err != nil { // blue, apart from the red errors
		return nil, err
	}
	if err := addErrorLine(p, badXY); err != nil {
		return nil, err
	}
	if err := markEvents(p, r.Events, maxY(okXY, badXY)); err != nil {
		return nil, err
	}
	return &Figure{ID: prefix + "throughput", Title: p.Title.Text, Plot: p,
		Caption: fmt.Sprintf("Successful completions and errors per second in %gs bins, by completion time%s.", width, eventsNote(r.Events))}, nil
}

func eventsNote(events []Event) string {
	if len(events) == 0 {
		return ""
	}
	return "; dashed purple lines mark the drill events when they were performed"
}

func addErrorLine(p *plot.Plot, xys plotter.XYs) error {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	l.Color, l.Width = red, vg.Points(1.5)
	p.Add(l)
	p.Legend.Add("errors/s", l)
	return nil
}

func binXYs(v []float64, width, scale float64) plotter.XYs {
	out := make(plotter.XYs, 0, len(v))
	for i, x := range v {
		if math.IsNaN(x) {
			continue
		}
		out = append(out, plotter.XY{X: (float64(i) + 0.5) * width, Y: x * scale})
	}
	return out
}

func p99Figure(r *Run, prefix string) (*Figure, error) {
	width, n := bins(r.Samples)
	per := make([][]float64, n)
	for _, s := range r.Samples {
		if s.OK {
			i := int(s.EndS / width)
			per[i] = append(per[i], s.E2EMs)
		}
	}
	p50, p99 := make([]float64, n), make([]float64, n)
	for i, v := range per {
		sort.Float64s(v)
		p50[i], p99[i] = quantile(v, 0.5), quantile(v, 0.99)
	}
	p := newPlot("Windowed latency over time", "time since start (s)", "end-to-end latency (ms)")
	p99XY := binXYs(p99, width, 1)
	if err := addLine(p, 0, "p99", p99XY); err != nil {
		return nil, err
	}
	if err := addLine(p, 1, "p50", binXYs(p50, width, 1)); err != nil {
		return nil, err
	}
	if err := markEvents(p, r.Events, maxY(p99XY)); err != nil {
		return nil, err
	}
	return &Figure{ID: prefix + "p99", Title: p.Title.Text, Plot: p,
		Caption: fmt.Sprintf("p99 and p50 end-to-end latency of the requests completing in each %gs bin%s.", width, eventsNote(r.Events))}, nil
}

// turnFigure draws TTFT (p50, p99) and ITL (p50) by turn index of a
// run's multi-turn sessions (nil without sessions).
func turnFigure(r *Run, prefix string) (*Figure, error) {
	if len(r.Turns) < 2 {
		return nil, nil
	}
	var p50, p99, itl plotter.XYs
	for _, s := range r.Turns {
		if s.Count == 0 {
			continue
		}
		x := float64(s.Turn)
		p50, p99 = append(p50, plotter.XY{X: x, Y: s.TTFT.P50}), append(p99, plotter.XY{X: x, Y: s.TTFT.P99})
		itl = append(itl, plotter.XY{X: x, Y: s.ITL.P50})
	}
	p := newPlot("Sessions: latency by turn", "turn of the session", "ms")
	for i, l := range []struct {
		name string
		xys  plotter.XYs
	}{{"TTFT p99", p99}, {"TTFT p50", p50}, {"ITL p50", itl}} {
		if err := addLine(p, i, l.name, l.xys); err != nil {
			return nil, err
		}
	}
	p.X.Min, p.Y.Min = 0.5, 0
	p.Y.Max = 1.3 * maxY(p99, p50, itl) // room for the legend above the lines
	return &Figure{ID: prefix + "turns", Title: p.Title.Text, Plot: p,
		Caption: "TTFT (from the intended send) and inter-token latency of the turns of multi-turn sessions by turn index: a turn carries the conversation so far, so what the prefix cache does not hold grows its prefill."}, nil
}

// groupBarFigure draws p99 E2E per summary group (per tenant for Q3).
func groupBarFigure(r *Run, prefix string) (*Figure, error) {
	gs := r.Record.Summary.Groups
	if len(gs) < 2 {
		return nil, nil
	}
	gs = gs[:min(len(gs), 24)]
	names := make([]string, len(gs))
	vals := make(plotter.Values, len(gs))
	for i, g := range gs {
		names[i] = groupName(g.Labels)
		vals[i] = g.E2E.P99
	}
	p := newPlot("p99 latency per group", "", "p99 end-to-end latency (ms)")
	bars, err := plotter.NewBarChart(vals, vg.Points(min(50, max(4, 300/float64(len(gs))))))
	if err != nil {
		return nil, fmt.Errorf("group bars: %w", err)
	}
	bars.Color = plotutil.Color(0)
	p.Add(bars)
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(gs))-0.4
	if len(gs) > 6 {
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = -1, 0
	}
	return &Figure{ID: prefix + "groups", Title: p.Title.Text, Plot: p,
		Caption: "p99 end-to-end latency of each request group of the run summary (type, tenant, priority, phase): per tenant for Q3."}, nil
}

func groupName(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = labels[k]
	}
	if len(parts) == 0 {
		return "all"
	}
	return strings.Join(parts, "/")
}

// metricFigures draws up to maxMetricPlots recorded target metrics,
// preferring queue depth, utilisation and KV usage.
func metricFigures(r *Run, prefix string) ([]*Figure, error) {
	if r.Metrics == nil {
		return nil, nil
	}
	var figs []*Figure
	for i, ts := range pickSeries(r.Metrics.Series) {
		at, ys := ts.At, ts.Values
		unit := "value"
		if ts.Type == capture.TypeCounter {
			at, ys = ts.Rates()
			unit = "per second"
		}
		xys := make(plotter.XYs, len(ys))
		for j := range ys {
			xys[j] = plotter.XY{X: at[j].Sub(r.Record.StartedAt).Seconds(), Y: ys[j]}
		}
		if r.Record.StartedAt.IsZero() && len(at) > 0 {
			for j := range xys {
				xys[j].X = at[j].Sub(at[0]).Seconds()
			}
		}
		p := newPlot(ts.Key, "time since start (s)", unit)
		if err := addLine(p, i, "", xys); err != nil {
			return nil, err
		}
		figs = append(figs, &Figure{ID: fmt.Sprintf("%smetric%d", prefix, i+1), Title: ts.Key, Plot: p,
			Width: 7 * vg.Inch, Height: 2.4 * vg.Inch,
			Caption: fmt.Sprintf("%s (%s) scraped from %s during the run%s.", ts.Key, ts.Type, ts.Target, rateNote(ts.Type))})
	}
	return figs, nil
}

func rateNote(typ string) string {
	if typ == capture.TypeCounter {
		return ", as a per-second rate between scrapes"
	}
	return ""
}

var preferred = []string{"queue", "depth", "util", "kv", "running", "waiting", "inflight", "in_flight"}

// pickSeries chooses the series worth drawing: preferred names first,
// then any that varies; constant series are left out.
func pickSeries(all []*capture.TimeSeries) []*capture.TimeSeries {
	score := func(ts *capture.TimeSeries) int {
		k := strings.ToLower(ts.Key)
		for _, p := range preferred {
			if strings.Contains(k, p) {
				return 0
			}
		}
		return 1
	}
	var cands []*capture.TimeSeries
	for _, ts := range all {
		if varies(ts.Values) && !strings.HasPrefix(ts.Key, "go_") && !strings.HasPrefix(ts.Key, "process_") {
			cands = append(cands, ts)
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return score(cands[i]) < score(cands[j]) })
	return cands[:min(len(cands), maxMetricPlots)]
}

func varies(v []float64) bool {
	for _, x := range v {
		if x != v[0] {
			return true
		}
	}
	return false
}
