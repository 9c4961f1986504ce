package answer

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/sagebench/sagebench/internal/chart"
	"github.com/sagebench/sagebench/internal/drill"
	"github.com/sagebench/sagebench/internal/result"
)

var timelineRecipe = recipe{
	title: "Windowed p99 and throughput through the drill",
	caption: "Top: p99 of the recovery metric of the requests due in each window (plotted at the window's start), the recovery bound dashed; " +
		"bottom: completed requests per second. Shaded spans are faults (kill until restart, pause until resume, slowdown until it ends); " +
		"numbered dashed lines are the events, listed in the legend (in a narrow figure, at the end of this caption); a diamond on the bound marks when the p99 was back within it for the hold time (recovery), a cross that it never was.",
	build:    func(c Column, _ string, w vg.Length) (panelSet, error) { return timelinePanels(c, w) },
	shareX:   true,
	timeline: true,
	height:   1.7 * vg.Inch,
}

// recoveryRule is the recovery rule's metric (ttft_p99, e2e_p99, …) and
// bound in ms, from the result's recovery_bound_<metric>_ms metric.
func recoveryRule(r *result.Result) (metric string, bound float64, ok bool) {
	if r == nil {
		return "", 0, false
	}
	for _, m := range r.Metrics {
		if rest, found := strings.CutPrefix(m.Name, drill.RecoveryBoundPrefix); found && m.State == result.Measured {
			return strings.TrimSuffix(rest, "_ms"), m.Value, m.Value > 0
		}
	}
	return "", 0, false
}

// timelinePanels draws a drill's two panels at width w; narrower than a
// page, its events are listed in the caption rather than the legend (a
// column figure's legend would take a third of its height).
func timelinePanels(c Column, w vg.Length) (panelSet, error) {
	if len(c.Windows) == 0 {
		return panelSet{why: "the run directory has no windowed series (windows.jsonl)"}, nil
	}
	metric, bound, hasBound := recoveryRule(c.Result)
	name, pick := "p99 TTFT", func(w Window) *float64 { return w.TTFTP99 }
	if strings.HasPrefix(metric, "e2e") {
		name, pick = "p99 E2E", func(w Window) *float64 { return w.E2EP99 }
	}
	top := chart.NewPanel("windowed "+name, "", "ms")
	bottom := chart.NewPanel("throughput", "time since start (s)", "req/s")
	var leg []chart.LegendEntry
	spans := FaultSpans(c.Events, c.EndS)
	for _, p := range []*plot.Plot{top, bottom} {
		for _, s := range spans {
			p.Add(chart.Span{X0: s[0], X1: s[1], Fill: chart.SpanFill})
		}
	}
	if len(spans) > 0 {
		leg = append(leg, chart.LegendEntry{Label: "fault", Thumbs: []plot.Thumbnailer{chart.Span{Fill: chart.SpanFill}}})
	}
	e, err := segments(top, 0, name, c.Windows, pick)
	if err != nil {
		return panelSet{}, err
	}
	leg = append(leg, e...)
	leg = append(leg, failedWindows(top, c.Windows, pick, bound)...)
	tput := func(w Window) *float64 { v := w.Throughput; return &v }
	if e, err = segments(bottom, 2, "throughput", c.Windows, tput); err != nil {
		return panelSet{}, err
	}
	leg = append(leg, e...)
	if hasBound {
		leg = append(leg, boundLine(top, bound, "recovery bound"))
	}
	evLeg := MarkEvents(top, []*plot.Plot{bottom}, c.Events)
	note := ""
	if w < chart.PageWidth {
		note = eventNote(c.Events)
	} else {
		leg = append(leg, evLeg...)
	}
	leg = append(leg, recoveryMarks(top, c.Events, bound, c.EndS)...)
	top.Y.Min, bottom.Y.Min = 0, 0
	if lo, hi, ok := loadSpan(c.Windows); ok { // one time axis for both panels: the drill's load
		top.X.Min, top.X.Max, bottom.X.Min, bottom.X.Max = lo, hi, lo, hi
	}
	chart.Headroom(top, 0.22)
	return panelSet{panels: []*plot.Plot{top, bottom}, legend: leg, note: note}, nil
}

// failedWindows marks at the top of the p99 panel each window whose p99
// is +∞ (failures at its rank): a failure is drawn, not left as a gap or
// as the successes' figure.
func failedWindows(p *plot.Plot, ws []Window, pick func(Window) *float64, bound float64) []chart.LegendEntry {
	top := bound
	for _, w := range ws {
		if v := pick(w); v != nil && !math.IsNaN(*v) && !math.IsInf(*v, 0) {
			top = math.Max(top, *v)
		}
	}
	var xs []float64
	for _, w := range ws {
		if v := pick(w); v != nil && math.IsInf(*v, 1) {
			xs = append(xs, w.StartS)
		}
	}
	return FailedMarks(p, xs, top, "p99")
}

// FailedMarks marks at height top of p each x where a quantile (named
// q, "p99") is +∞ — failed requests reached its rank, a failure counting
// +∞ — so that a failure is drawn, not left as a gap or as the
// successes' figure; it returns the legend entry (none when nothing is
// marked).
func FailedMarks(p *plot.Plot, xs []float64, top float64, q string) []chart.LegendEntry {
	if len(xs) == 0 || top <= 0 {
		return nil
	}
	pts := make(plotter.XYs, len(xs))
	for i, x := range xs {
		pts[i] = plotter.XY{X: x, Y: top}
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return nil
	}
	s.GlyphStyle = draw.GlyphStyle{Shape: draw.TriangleGlyph{}, Color: eventInk, Radius: vg.Points(3)}
	p.Add(s)
	return []chart.LegendEntry{{Label: q + " +∞ (failures at its rank)", Thumbs: []plot.Thumbnailer{s}}}
}

// eventNote lists the numbered events for a caption: "Events: 1 kill
// llm-1 at 10.3 s; 2 …".
func eventNote(events []Event) string {
	var parts []string
	for _, e := range events {
		if e.AtS != nil {
			parts = append(parts, fmt.Sprintf("%d %s at %s s", e.Seq+1, e.Label(), chart.Number(*e.AtS, 1)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Events: " + strings.Join(parts, "; ") + "."
}

// loadSpan is from the first window with requests (the windows before it
// cover what ran before the drill's load, a capacity probe say) to the
// last window's start.
func loadSpan(ws []Window) (lo, hi float64, ok bool) {
	for _, w := range ws {
		if w.Throughput > 0 || w.TTFTP99 != nil || w.E2EP99 != nil {
			lo, ok = w.StartS, true
			break
		}
	}
	if !ok {
		return 0, 0, false
	}
	hi = ws[len(ws)-1].StartS
	return lo, hi, hi > lo
}

// segments draws the windows' values as lines broken where a window has
// none.
func segments(p *plot.Plot, i int, name string, ws []Window, pick func(Window) *float64) ([]chart.LegendEntry, error) {
	var legend []chart.LegendEntry
	var cur plotter.XYs
	flush := func() error {
		if len(cur) == 0 {
			return nil
		}
		e, err := chart.Line(p, i, name, cur, false)
		if len(legend) == 0 {
			legend = e
		}
		cur = nil
		return err
	}
	for _, w := range ws {
		v := pick(w)
		if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) { // +∞: failedWindows marks it
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		cur = append(cur, plotter.XY{X: w.StartS, Y: *v})
	}
	return legend, flush()
}

// FaultSpans pairs each fault with what ends it: kill → restart, pause
// → resume, slowdown → the next slowdown of the same target (its end);
// an unended fault lasts to end.
func FaultSpans(events []Event, end float64) [][2]float64 {
	closer := map[string]string{"kill": "restart", "pause": "resume", "slowdown": "slowdown"}
	var out [][2]float64
	for i, e := range events {
		stop, ok := closer[e.Action]
		if !ok || e.AtS == nil || (e.Action == "slowdown" && isSlowdownEnd(events, i)) {
			continue
		}
		to := math.Max(end, *e.AtS)
		for _, f := range events[i+1:] {
			if f.Action == stop && f.Target == e.Target && f.AtS != nil {
				to = *f.AtS
				break
			}
		}
		out = append(out, [2]float64{*e.AtS, to})
	}
	return out
}

// isSlowdownEnd reports whether events[i] ends an earlier slowdown of
// its target (the factor-1 undo).
func isSlowdownEnd(events []Event, i int) bool {
	open := false
	for _, e := range events[:i] {
		if e.Action == "slowdown" && e.Target == events[i].Target && e.AtS != nil {
			open = !open
		}
	}
	return open
}

// maxEventEntries bounds the events named in a legend (the rest are
// counted in one entry; the events table lists them all).
const maxEventEntries = 10

// MarkEvents draws each performed event as a dashed line on tagged
// (numbered by its sequence) and on each of plain (unnumbered), and
// returns a legend entry per event.
func MarkEvents(tagged *plot.Plot, plain []*plot.Plot, events []Event) []chart.LegendEntry {
	var tags, lines chart.Events
	var leg []chart.LegendEntry
	for _, e := range events {
		if e.AtS == nil {
			continue
		}
		v := chart.VLine{X: *e.AtS, Tag: itoa(e.Seq + 1), Color: eventInk}
		tags, lines = append(tags, v), append(lines, chart.VLine{X: *e.AtS, Color: eventInk})
		if len(leg) < maxEventEntries {
			leg = append(leg, chart.LegendEntry{Label: fmt.Sprintf("%s at %s s", e.Label(), chart.Number(*e.AtS, 1)), Thumbs: []plot.Thumbnailer{v}})
		}
	}
	if n := len(tags) - len(leg); n > 0 {
		leg = append(leg, chart.LegendEntry{Label: fmt.Sprintf("and %d more events (see the events table)", n)})
	}
	if len(tags) > 0 {
		tagged.Add(tags)
		for _, p := range plain {
			p.Add(lines)
		}
	}
	return leg
}

// recoveryMarks draws, at the bound's level, a thin line from each
// event to its recovery and a diamond there (a cross at the end of the
// run for never).
func recoveryMarks(p *plot.Plot, events []Event, bound, end float64) []chart.LegendEntry {
	var rec, never plotter.XYs
	for _, e := range events {
		if e.AtS == nil || e.Recovery == nil {
			continue
		}
		to, state := recoveryAt(e, end)
		switch state {
		case result.Measured:
			rec = append(rec, plotter.XY{X: to, Y: bound})
		case result.Never:
			never = append(never, plotter.XY{X: to, Y: bound})
		default:
			continue
		}
		if l, err := plotter.NewLine(plotter.XYs{{X: *e.AtS, Y: bound}, {X: to, Y: bound}}); err == nil {
			l.Color, l.Width = eventInk, vg.Points(1.4)
			p.Add(l)
		}
	}
	var leg []chart.LegendEntry
	for _, g := range []struct {
		pts   plotter.XYs
		shape draw.GlyphDrawer
		label string
	}{{rec, diamond{}, "recovered (back within the bound)"}, {never, draw.CrossGlyph{}, "never recovered"}} {
		if len(g.pts) == 0 {
			continue
		}
		s, err := plotter.NewScatter(g.pts)
		if err != nil {
			continue
		}
		s.GlyphStyle = draw.GlyphStyle{Shape: g.shape, Color: eventInk, Radius: vg.Points(3.5)}
		p.Add(s)
		leg = append(leg, chart.LegendEntry{Label: g.label, Thumbs: []plot.Thumbnailer{s}})
	}
	return leg
}

// seconds is a recovery metric in seconds.
func seconds(m result.Metric) float64 {
	if m.Unit == result.Ms {
		return m.Value / 1000
	}
	return m.Value
}

// eventInk is the colour of events and recoveries (black: the palette's
// colours belong to the series).
var eventInk = chart.Color(6)

// recoveryAt is when e's fault was back within the bound: its recovery
// counted from the fault's end (its start for an instantaneous one), or
// the end of the run for never; with the recovery's state.
func recoveryAt(e Event, end float64) (float64, result.State) {
	m := *e.Recovery
	from := *e.AtS
	if e.EndS != nil { // a fault with a duration recovers from its end
		from = *e.EndS
	}
	switch m.State {
	case result.Measured:
		return from + seconds(m), m.State
	case result.Never:
		return math.Max(end, *e.AtS), m.State
	}
	return 0, m.State
}

// diamond is a filled diamond glyph.
type diamond struct{}

func (diamond) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	c.FillPolygon(sty.Color, []vg.Point{{X: pt.X, Y: pt.Y + r}, {X: pt.X + r, Y: pt.Y}, {X: pt.X, Y: pt.Y - r}, {X: pt.X - r, Y: pt.Y}})
}
