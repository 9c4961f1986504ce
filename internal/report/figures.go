package report

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/sagebench/sagebench/internal/answer"
	"github.com/sagebench/sagebench/internal/capture"
	"github.com/sagebench/sagebench/internal/chart"
	"github.com/sagebench/sagebench/internal/quantile"
)

// countSuffix is a legend label's " (n=123)": per run, so dropped from
// the one legend of runs side by side.
var countSuffix = regexp.MustCompile(` \(n=\d+\)$`)

// maxCDFPoints bounds the points of one CDF line (page weight).
const maxCDFPoints = 200

// maxMetricPlots bounds the recorded-metric figures per run.
const maxMetricPlots = 4

// panelFunc draws one run's panel of a figure and its legend.
type panelFunc func(r *Run, label string) (*plot.Plot, []chart.LegendEntry, error)

// sideBySide builds a figure with one panel per run of the section,
// sharing axes, legends merged by label; nil when no run has data.
func (s *Section) sideBySide(id, title, caption string, shareX bool, build panelFunc) (*Figure, error) {
	f := &Figure{ID: id, Title: title, Caption: caption, Cols: len(s.Runs), Runs: len(s.Runs)}
	seen := map[string]bool{}
	drawn := 0
	for i, r := range s.Runs {
		p, leg, err := build(r, s.Label(i))
		if err != nil {
			return nil, fmt.Errorf("%s of %s: %w", id, r.Label(), err)
		}
		if p != nil {
			drawn++
			if len(s.Runs) > 1 {
				p.Title.Text = s.Label(i)
			}
		}
		f.Panels = append(f.Panels, p)
		for _, e := range leg {
			if len(s.Runs) > 1 { // one entry per series for all runs: each panel is titled by its run
				e.Label = countSuffix.ReplaceAllString(e.Label, "")
			}
			if !seen[e.Label] {
				seen[e.Label] = true
				f.Legend = append(f.Legend, e)
			}
		}
	}
	if drawn == 0 {
		return nil, nil
	}
	if len(s.Runs) > 1 { // the legend is shared by the runs: no counts in it
		f.Caption = strings.ReplaceAll(f.Caption, " (the legend gives n per line)", "")
	}
	chart.Share(f.Panels, shareX, true)
	return f, nil
}

// runFigures are the section's figures after the answer: TTFT, ITL and
// E2E latency CDFs, an E2E CDF per other label that varies, throughput
// and windowed latency over time.
func (s *Section) runFigures() ([]*Figure, error) {
	var all []Sample
	for _, r := range s.Runs {
		all = append(all, r.Samples...)
	}
	dims := groupDimensions(all)
	first := ""
	if len(dims) > 0 {
		first = dims[0]
	}
	specs := []struct {
		id, title, caption string
		build              panelFunc
	}{
		{"ttft-cdf", "Time to first token, CDF" + byText(first), "Empirical CDF of time to first token (from the intended send) of successful streamed requests" + perText(first) + ".", cdfPanel(first, ttftOf, "TTFT (ms, log scale)")},
		{"itl-cdf", "Inter-token latency, CDF" + byText(first), "Empirical CDF of the gaps between streamed tokens (up to 16 gaps per request, evenly spaced; gaps below the left edge, such as tokens that arrived in one write, are drawn at it)" + perText(first) + ".", cdfPanel(first, itlOf, "inter-token latency (ms, log scale)")},
		{"e2e-cdf", "End-to-end latency, CDF" + byText(first), "Empirical CDF of end-to-end latency (from the intended send, so queueing and schedule lag count) of successful requests and transactions" + perText(first) + ".", cdfPanel(first, e2eOf, "end-to-end latency (ms, log scale)")},
	}
	for _, d := range dims[min(1, len(dims)):] {
		specs = append(specs, struct {
			id, title, caption string
			build              panelFunc
		}{"e2e-cdf-" + d, "End-to-end latency, CDF by " + d, "Empirical CDF of end-to-end latency of successful requests, one line per " + d + ".", cdfPanel(d, e2eOf, "end-to-end latency (ms, log scale)")})
	}
	var out []*Figure
	for _, sp := range specs {
		f, err := s.sideBySide(sp.id, sp.title, sp.caption, true, sp.build)
		if err != nil {
			return nil, err
		}
		if f != nil {
			out = append(out, f)
		}
	}
	ts, err := s.timeFigures()
	return append(out, ts...), err
}

func byText(dim string) string {
	if dim == "" {
		return ""
	}
	return " by " + dim
}

func perText(dim string) string {
	if dim == "" {
		return ", all requests of the run in one line"
	}
	return ", one line per " + dim + " (the legend gives n per line)"
}

// sampleValues picks what a CDF draws of a sample.
type sampleValues func(s Sample, out []float64) []float64

func e2eOf(s Sample, out []float64) []float64 { return append(out, s.E2EMs) }

func ttftOf(s Sample, out []float64) []float64 {
	if s.TTFTMs > 0 {
		out = append(out, s.TTFTMs)
	}
	return out
}

func itlOf(s Sample, out []float64) []float64 {
	for _, g := range s.ITLMs {
		out = append(out, float64(g))
	}
	return out
}

// cdfPanel draws a CDF per value of dim of what pick takes of the
// successful samples.
func cdfPanel(dim string, pick sampleValues, xlabel string) panelFunc {
	return func(r *Run, _ string) (*plot.Plot, []chart.LegendEntry, error) {
		names, groups := groupValues(r.Samples, dim, pick)
		if len(names) == 0 {
			return nil, nil, nil
		}
		p := chart.NewPanel("", xlabel, "fraction ≤ x")
		var leg []chart.LegendEntry
		floor := logFloor(groups)
		for i, n := range names {
			e, err := chart.Line(p, i, fmt.Sprintf("%s (n=%d)", n, len(groups[n])), chart.CDF(floorAt(groups[n], floor), maxCDFPoints), false)
			if err != nil {
				return nil, nil, err
			}
			leg = append(leg, e...)
		}
		p.Y.Min, p.Y.Max = 0, 1
		chart.LogX(p)
		return p, leg, nil
	}
}

// logFloor is the left edge of a log axis for values: the 1st
// percentile of the positive values ÷ 2 (zeros, such as tokens that
// arrived in one write, sit at the edge rather than decades away).
func logFloor(groups map[string][]float64) float64 {
	var pos []float64
	for _, v := range groups {
		for _, x := range v {
			if x > 0 {
				pos = append(pos, x)
			}
		}
	}
	if len(pos) == 0 {
		return 1e-3
	}
	sort.Float64s(pos)
	return math.Max(quantileOf(pos, 0.01)/2, 1e-3)
}

// floorAt is v with every value below floor raised to it.
func floorAt(v []float64, floor float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Max(x, floor)
	}
	return out
}

// groupValues splits what pick takes of the successful samples by dim:
// phases in the order they ran, priorities from critical to background,
// other labels in natural order.
func groupValues(samples []Sample, dim string, pick sampleValues) ([]string, map[string][]float64) {
	groups := map[string][]float64{}
	first := map[string]float64{}
	for _, s := range samples {
		if !s.OK {
			continue
		}
		k := "all"
		if dim != "" {
			k = s.Labels.Get(dim)
			if k == "" {
				k = "(none)"
			}
		}
		if t, ok := first[k]; !ok || s.DueS < t {
			first[k] = s.DueS
		}
		if v := pick(s, groups[k]); len(v) > 0 {
			groups[k] = v
		}
	}
	names := make([]string, 0, len(groups))
	for k := range groups {
		names = append(names, k)
	}
	numbered := sameSkeleton(names)
	sort.Slice(names, func(i, j int) bool {
		a, b := names[i], names[j]
		switch dim {
		case "phase":
			if first[a] != first[b] && !numbered {
				return first[a] < first[b]
			}
		case "priority":
			if ra, rb := priorityRank(a), priorityRank(b); ra != rb {
				return ra < rb
			}
		}
		return naturalLess(a, b)
	})
	return names, groups
}

// sameSkeleton reports names that differ only in their numbers
// ("n1@4.00", "n2@12.00": Q4's probes), which read best in numeric
// order rather than the order they ran.
func sameSkeleton(names []string) bool {
	skel := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' || r == '.' {
				return -1
			}
			return r
		}, s)
	}
	for _, n := range names {
		if skel(n) != skel(names[0]) || skel(n) == n {
			return false
		}
	}
	return len(names) > 1
}

// priorityRank orders the priority classes from the most urgent.
func priorityRank(p string) int {
	for i, q := range []string{"critical", "high", "normal", "low", "background"} {
		if p == q {
			return i
		}
	}
	return 5
}

// timeFigures are throughput and windowed latency over time, with the
// phases shaded and named and the drill events marked.
func (s *Section) timeFigures() ([]*Figure, error) {
	marks := ""
	phases, events := false, false
	for _, r := range s.Runs {
		phases = phases || len(r.phases) > 1
		for _, e := range r.events {
			events = events || e.AtS != nil
		}
	}
	switch {
	case phases && events:
		marks = "; shaded spans are the phases (named at the foot), numbered dashed lines the drill events (listed in the legend)"
	case phases:
		marks = "; shaded spans are the phases, named at the top"
	case events:
		marks = "; numbered dashed lines are the drill events, listed in the legend"
	}
	var out []*Figure
	for _, sp := range []struct {
		id, title, caption string
		build              panelFunc
	}{
		{"throughput", "Throughput and errors over time", "Successful completions and errors per second in bins, by completion time" + marks + ".", throughputPanel},
		{"latency", "Windowed latency over time", "p50 and p99 end-to-end latency of the requests completing in each bin (the bins of the throughput figure)" + marks + ".", latencyPanel},
	} {
		f, err := s.sideBySide(sp.id, sp.title, sp.caption, true, sp.build)
		if err != nil {
			return nil, err
		}
		if f != nil {
			f.RowHeight = 2 * chart.PageWidth / 7
			out = append(out, f)
		}
	}
	return out, nil
}

// bins splits the run into about 120 bins of a round width (1, 2, 5 ×
// 10^k s, at least 1 s).
func bins(samples []Sample) (float64, int) {
	end := 0.0
	for _, s := range samples {
		end = math.Max(end, s.EndS)
	}
	width := 1.0
	for _, w := range []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000} {
		width = w
		if end/w <= 120 {
			break
		}
	}
	return width, int(end/width) + 1
}

func throughputPanel(r *Run, _ string) (*plot.Plot, []chart.LegendEntry, error) {
	if len(r.Samples) == 0 {
		return nil, nil, nil
	}
	width, n := bins(r.Samples)
	ok, bad := make([]float64, n), make([]float64, n)
	for _, s := range r.Samples {
		i := min(max(int(s.EndS/width), 0), n-1)
		if s.OK {
			ok[i]++
		} else {
			bad[i]++
		}
	}
	return timePanel(r, "per second", func(p *plot.Plot) ([]chart.LegendEntry, error) {
		leg, err := chart.Line(p, 0, fmt.Sprintf("completed/s (%s s bins)", chart.Number(width, 0)), binXYs(ok, width, 1/width), false)
		if err != nil {
			return nil, err
		}
		e, err := chart.Plain(p, "errors/s", binXYs(bad, width, 1/width), chart.ErrorInk, nil)
		return append(leg, e...), err
	})
}

// timePanel is a panel over the run's time: its phases, what add draws,
// its events.
func timePanel(r *Run, ylabel string, add func(*plot.Plot) ([]chart.LegendEntry, error)) (*plot.Plot, []chart.LegendEntry, error) {
	p := chart.NewPanel("", "time since start (s)", ylabel)
	leg := phaseMarks(p, r, len(r.events) > 0)
	e, err := add(p)
	if err != nil {
		return nil, nil, err
	}
	leg = append(leg, e...)
	leg = append(leg, answer.MarkEvents(p, nil, r.events)...)
	p.Y.Min = 0
	chart.Headroom(p, 0.15)
	return p, leg, nil
}

func latencyPanel(r *Run, _ string) (*plot.Plot, []chart.LegendEntry, error) {
	if len(r.Samples) == 0 {
		return nil, nil, nil
	}
	width, n := bins(r.Samples)
	p50, p99 := binnedE2E(r.Samples, width, n)
	return timePanel(r, "end-to-end latency (ms)", func(p *plot.Plot) ([]chart.LegendEntry, error) {
		var leg []chart.LegendEntry
		top := 0.0
		for i, q := range []struct {
			name string
			v    []float64
		}{{"p99", p99}, {"p50", p50}} {
			xys := binXYs(q.v, width, 1) // a +∞ bin is no point of the line
			for _, xy := range xys {
				top = math.Max(top, xy.Y)
			}
			e, err := chart.Line(p, i, q.name, xys, false)
			if err != nil {
				return nil, err
			}
			leg = append(leg, e...)
		}
		var failed []float64
		for i, v := range p99 {
			if math.IsInf(v, 1) {
				failed = append(failed, (float64(i)+0.5)*width)
			}
		}
		return append(leg, answer.FailedMarks(p, failed, math.Max(top, 1), "p99")...), nil
	})
}

// binnedE2E are the E2E p50 and p99 of the samples per bin of width s
// (n bins, by when each ended — a failure with no end by when it was
// due), a failed request counting +∞: a bin's quantile is +Inf when
// failures reach its rank, NaN when the bin is empty.
func binnedE2E(samples []Sample, width float64, n int) (p50, p99 []float64) {
	per := make([][]float64, n)
	for _, s := range samples {
		at, v := s.EndS, s.E2EMs
		if !s.OK {
			v = math.Inf(1)
			if at <= 0 {
				at = s.DueS
			}
		}
		i := min(max(int(at/width), 0), n-1)
		per[i] = append(per[i], v)
	}
	p50, p99 = make([]float64, n), make([]float64, n)
	for i, v := range per {
		sort.Float64s(v)
		p50[i], p99[i] = quantileOf(v, 0.5), quantileOf(v, 0.99)
	}
	return p50, p99
}

// phaseMarks shades and names the run's phases when there are several,
// naming them at the panel's foot when its top carries event tags.
func phaseMarks(p *plot.Plot, r *Run, events bool) []chart.LegendEntry {
	spans := r.phases
	if len(spans) < 2 {
		return nil
	}
	if events {
		p.Add(chart.PhasesLow(spans))
	} else {
		p.Add(chart.Phases(spans))
	}
	return []chart.LegendEntry{{Label: "phase (alternate shading)", Thumbs: []plot.Thumbnailer{chart.Span{Fill: chart.PhaseFill}}}}
}

// phaseSpans cuts the run into its phases in the order they were due:
// each from its first intended send to the next phase's (the last to
// the last completion).
func phaseSpans(samples []Sample) []chart.PhaseSpan {
	s := append([]Sample(nil), samples...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].DueS < s[j].DueS })
	var out []chart.PhaseSpan
	end := 0.0
	for _, x := range s {
		end = math.Max(end, x.EndS)
		if len(out) == 0 || out[len(out)-1].Name != x.Labels.Phase {
			if len(out) > 0 {
				out[len(out)-1].X1 = x.DueS
			}
			out = append(out, chart.PhaseSpan{Name: x.Labels.Phase, X0: x.DueS})
		}
	}
	if len(out) > 0 {
		out[len(out)-1].X1 = end
	}
	if len(out) > 60 || len(out) == 1 && out[0].Name == "" {
		return nil // interleaved beyond reading, or no phases
	}
	return out
}

func binXYs(v []float64, width, scale float64) plotter.XYs {
	out := make(plotter.XYs, 0, len(v))
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		out = append(out, plotter.XY{X: (float64(i) + 0.5) * width, Y: x * scale})
	}
	return out
}

// quantileOf is the q-quantile of sorted v by the one definition
// (quantile.Definition; NaN if empty).
func quantileOf(v []float64, q float64) float64 { return quantile.OfSorted(v, q) }

// scrapedFigures draw up to maxMetricPlots recorded target metrics per
// run, preferring queue depth, utilisation and KV usage.
func (s *Section) scrapedFigures() ([]*Figure, error) {
	var figs []*Figure
	for i, r := range s.Runs {
		if r.Metrics == nil {
			continue
		}
		for k, ts := range pickSeries(r.Metrics.Series) {
			f, err := metricFigure(r, ts)
			if err != nil {
				return nil, err
			}
			f.ID = fmt.Sprintf("%s%smetric%d", s.prefix(), runPrefix(s, i), k+1)
			figs = append(figs, f)
		}
	}
	return figs, nil
}

func runPrefix(s *Section, i int) string {
	if len(s.Runs) == 1 {
		return ""
	}
	return s.Label(i) + "-"
}

func metricFigure(r *Run, ts *capture.TimeSeries) (*Figure, error) {
	at, ys := ts.At, ts.Values
	unit := "value"
	if ts.Type == capture.TypeCounter {
		at, ys = ts.Rates()
		unit = "per second"
	}
	xys := make(plotter.XYs, len(ys))
	for j := range ys {
		if r.Record.StartedAt.IsZero() {
			xys[j] = plotter.XY{X: at[j].Sub(at[0]).Seconds(), Y: ys[j]}
		} else {
			xys[j] = plotter.XY{X: at[j].Sub(r.Record.StartedAt).Seconds(), Y: ys[j]}
		}
	}
	p := chart.NewPanel("", "time since start (s)", unit)
	if _, err := chart.Line(p, 0, "", xys, false); err != nil {
		return nil, err
	}
	return &Figure{Title: ts.Key, Panels: []*plot.Plot{p}, RowHeight: 1.8 * chart.PageWidth / 7,
		Caption: fmt.Sprintf("%s (%s) scraped from %s during %s%s.", ts.Key, ts.Type, ts.Target, r.Label(), rateNote(ts.Type))}, nil
}

func rateNote(typ string) string {
	if typ == capture.TypeCounter {
		return ", as a per-second rate between scrapes"
	}
	return ""
}

var preferred = []string{"queue", "depth", "util", "kv", "running", "waiting", "inflight", "in_flight"}

// pickSeries chooses the series worth drawing: preferred names first,
// then any that varies; constant series and Go runtime or process
// metrics are left out.
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
