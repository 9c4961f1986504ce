package answer

import (
	"math"
	"strings"
	"testing"

	"github.com/sagebench/sagebench/internal/chart"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload/q2"
	"github.com/sagebench/sagebench/internal/workload/q4"
)

var (
	ttft = result.Def{Name: "critical_ttft_p99_ms", Unit: result.Ms, Direction: result.Lower}
	slo  = result.Def{Name: "critical_slo_attainment", Unit: result.Fraction, Direction: result.Higher}
)

func policies(rows ...[3]float64) *result.Result {
	t := result.Table{Key: q2.TablePolicies, Title: "Policies", Columns: []string{"policy", "critical p99 TTFT", "critical SLO attainment"}}
	for i, r := range rows {
		t.AddRow(result.Text([]string{"fifo", "priority", "slo_aware"}[i]), result.Of(ttft.Measure(r[0], 10, "")), result.Of(slo.Measure(r[1], 10, "")))
	}
	res := result.New("an answer", ttft.Measure(rows[0][0], 10, ""))
	res.Tables = []result.Table{t}
	return &res
}

// TestEveryQDegradesToAMessage: a run without a result, or with a
// result lacking what the recipe needs, gets a "not measurable" figure
// saying why, never an error.
func TestEveryQDegradesToAMessage(t *testing.T) {
	bare := result.New("not answered", ttft.NotMeasurable("nothing ran"))
	for _, q := range []string{"Q1", "Q2", "Q3", "Q4", "Q5", "Q6", "Q7", "Q8"} {
		for _, c := range []Column{{Label: "nil"}, {Label: "bare", Result: &bare}} {
			f, err := Figure(q, []Column{c}, 0)
			if err != nil || len(f.Panels) != 0 || !strings.HasPrefix(f.Message, "Not measurable: ") {
				t.Errorf("%s %s: %v, %d panels, message %q: want the reason", q, c.Label, err, len(f.Panels), f.Message)
			}
			if _, err := f.Render("svg"); err != nil {
				t.Error(err)
			}
		}
	}
}

// TestQ2SideBySideSharesAxes: two runs' panels share their y range and
// carry the runs' labels; a not measurable cell is marked, not drawn as 0.
func TestQ2SideBySideSharesAxes(t *testing.T) {
	a, b := policies([3]float64{2000, 0.5}, [3]float64{100, 1}), policies([3]float64{900, 0.7}, [3]float64{50, 1})
	b.Tables[0].Rows[1][1] = result.Of(ttft.NotMeasurable("no critical request"))
	f, err := Figure("q2", []Column{{Label: "run1", Result: a}, {Label: "run2", Result: b}}, 0)
	if err != nil || f.Cols != 2 || len(f.Panels) != 4 {
		t.Fatalf("%v: %d cols, %d panels; want 2 columns of 2 panels", err, f.Cols, len(f.Panels))
	}
	if f.Panels[0].Y.Max != f.Panels[1].Y.Max || f.Panels[0].Y.Max < 2000 {
		t.Errorf("y ranges %v and %v: want one shared range covering 2,000 ms", f.Panels[0].Y.Max, f.Panels[1].Y.Max)
	}
	if !strings.HasPrefix(f.Panels[1].Title.Text, "run2: ") {
		t.Errorf("panel title %q, want the run's label", f.Panels[1].Title.Text)
	}
	labels := ""
	for _, e := range f.Legend {
		labels += e.Label + "|"
	}
	if !strings.Contains(labels, "not measurable") {
		t.Errorf("legend %q lacks the not measurable mark", labels)
	}
	for _, p := range f.CheckText(0) {
		t.Error(p)
	}
}

func TestFaultSpans(t *testing.T) {
	at := func(s float64) *float64 { return &s }
	ev := []Event{
		{Seq: 0, Action: "kill", Target: "a", AtS: at(4)}, {Seq: 1, Action: "restart", Target: "a", AtS: at(6)},
		{Seq: 2, Action: "pause", Target: "b", AtS: at(11)}, {Seq: 3, Action: "resume", Target: "b", AtS: at(14)},
		{Seq: 4, Action: "slowdown", Target: "a", AtS: at(18)}, {Seq: 5, Action: "slowdown", Target: "a", AtS: at(22)},
		{Seq: 6, Action: "policy", Target: "fifo", AtS: at(23)}, {Seq: 7, Action: "kill", Target: "c", AtS: at(25)},
		{Seq: 8, Action: "kill", Target: "d"}, // not performed: no span
	}
	got := FaultSpans(ev, 30)
	want := [][2]float64{{4, 6}, {11, 14}, {18, 22}, {25, 30}}
	if len(got) != len(want) {
		t.Fatalf("spans %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("span %d %v, want %v", i, got[i], want[i])
		}
	}
}

// TestPool: the valid repetitions are averaged (the invalid one left
// out), table cells matched by their row's text, with an interval.
func TestPool(t *testing.T) {
	reps := []Rep{
		{Result: policies([3]float64{100, 1}, [3]float64{10, 1}), Valid: true},
		{Result: policies([3]float64{300, 0.5}, [3]float64{30, 1}), Valid: true},
		{Result: policies([3]float64{9000, 0}, [3]float64{9000, 0}), Valid: false},
	}
	p := Pool(reps, 0.95)
	if p.Primary.State != result.Measured || math.Abs(p.Primary.Value-math.Sqrt(100*300)) > 1e-9 || p.Primary.Interval == nil {
		t.Fatalf("primary %+v: want the geometric mean √(100·300) of the two valid runs with its interval", p.Primary)
	}
	c := p.Tables[0].Rows[1][1].Metric
	if c == nil || math.Abs(c.Value-math.Sqrt(10*30)) > 1e-9 || c.N != 2 || math.IsNaN(c.Interval[0]) {
		t.Errorf("pooled cell %+v: want priority's geometric mean √(10·30) over 2", c)
	}
	if err := p.Check(); err != nil {
		t.Error(err)
	}
	if Pool(nil, 0.95) != nil {
		t.Error("pooling nothing gave a result")
	}
}

// TestQ4Frontier: brackets per pool size in numeric order, ticks at the
// sizes only, an open bracket drawn to the top, ideal scaling from one
// engine under the data.
func TestQ4Frontier(t *testing.T) {
	rate := result.Def{Name: "max_rate", Unit: result.ReqPerS, Direction: result.Higher}
	tb := result.Table{Key: q4.TableFrontier, Title: "Frontier", Columns: []string{"engines", "max rate"}}
	for _, r := range []struct {
		n      string
		lo, hi float64
	}{{"4", 30, math.Inf(1)}, {"1", 10, 11}, {"2", 18, 20}} {
		tb.AddRow(result.Text(r.n), result.Of(rate.Within(r.lo, r.hi, 5, "")))
	}
	res := result.New("frontier", rate.Within(30, math.Inf(1), 5, ""))
	res.Tables = []result.Table{tb}
	f, err := Figure("Q4", []Column{{Result: &res}}, 0)
	if err != nil || len(f.Panels) != 1 {
		t.Fatalf("%v, %q: want the frontier", err, f.Message)
	}
	var ticks []string
	for _, tk := range f.Panels[0].X.Tick.Marker.Ticks(f.Panels[0].X.Min, f.Panels[0].X.Max) {
		ticks = append(ticks, tk.Label)
	}
	if strings.Join(ticks, " ") != "1 2 4" {
		t.Errorf("x ticks %v, want the pool sizes 1 2 4 only", ticks)
	}
	if got, err := frontierPoints(&res, q4.TableFrontier); err != nil || len(got) != 3 || got[0].n != 1 || got[2].n != 4 || !math.IsInf(got[2].hi, 1) {
		t.Errorf("points %+v, want 1, 2, 4 with the open bracket last", got)
	}
	if f.Legend[0].Label != "ideal (n × rate at 1 engine)" {
		t.Errorf("legend %q first: want the ideal line, drawn under the data", f.Legend[0].Label)
	}
	svg, err := f.Render("svg")
	if err != nil || len(svg) == 0 {
		t.Error(err)
	}
	for _, p := range f.CheckText(0) {
		t.Error(p)
	}
}

// TestRecoveryCountsFromTheFaultsEnd: a kill at 19.2 s restarted at
// 22.2 s whose recovery_ms is 2,040 (counted from the restart, as the
// drill measures it) is back within the bound at 24.24 s, not 21.24 s;
// an instantaneous event's recovery counts from the event; never is
// drawn at the end of the run.
func TestRecoveryCountsFromTheFaultsEnd(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	rec := result.Def{Name: "recovery_ms", Unit: result.Ms, Direction: result.Lower}
	for _, tc := range []struct {
		name  string
		e     Event
		at    float64
		state result.State
	}{
		{"kill until restart", Event{AtS: f(19.2), EndS: f(22.2), Recovery: ptrTo(rec.Measure(2040, 1, ""))}, 24.24, result.Measured},
		{"instantaneous", Event{AtS: f(10), Recovery: ptrTo(rec.Measure(500, 1, ""))}, 10.5, result.Measured},
		{"never", Event{AtS: f(10), Recovery: ptrTo(rec.Never("never back"))}, 30, result.Never},
	} {
		at, state := recoveryAt(tc.e, 30)
		if math.Abs(at-tc.at) > 1e-9 || state != tc.state {
			t.Errorf("%s: recovery at %v (%s), want %v (%s)", tc.name, at, state, tc.at, tc.state)
		}
	}
}

func ptrTo(m result.Metric) *result.Metric { return &m }

// TestAxisRefusesAnotherUnit: a metric whose unit is not its axis's is
// an error, never drawn — the SLO attainment fractions once drawn on the
// victim's "p99 TTFT (ms)" axis of Q3 are refused.
func TestAxisRefusesAnotherUnit(t *testing.T) {
	frac := result.Def{Name: "victim_slo_attainment", Unit: result.Fraction, Direction: result.Higher}
	ms := result.Def{Name: "victim_ttft_p99_contended_ms", Unit: result.Ms, Direction: result.Lower}
	for _, tc := range []struct {
		name string
		unit string
		m    result.Metric
		ok   bool
	}{
		{"ms on ms", result.Ms, ms.Measure(120, 10, ""), true},
		{"fraction on %", "%", frac.Measure(0.5, 10, ""), true},
		{"fraction on ms", result.Ms, frac.Measure(0.5, 10, ""), false},
		{"ms on %", "%", ms.Measure(120, 10, ""), false},
	} {
		_, err := categoryAxis("p", tc.unit).bars([]string{"fifo"}, []chart.BarSeries{{Name: "s", Metrics: []result.Metric{tc.m}}})
		if (err == nil) != tc.ok {
			t.Errorf("%s: error %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

// TestFailedWindowsAreDrawn: a window whose p99 is +∞ (failures at its
// rank) is marked on the p99 panel, in the legend too; without one
// nothing is added.
func TestFailedWindowsAreDrawn(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	inf := math.Inf(1)
	ws := []Window{
		{StartS: 0, EndS: 1, Throughput: 10, TTFTP99: f(80)},
		{StartS: 1, EndS: 2, Throughput: 2, TTFTP99: f(inf)},
		{StartS: 2, EndS: 3, Throughput: 0, TTFTP99: f(inf)}, // everything failed
		{StartS: 3, EndS: 4, Throughput: 10, TTFTP99: f(120)},
	}
	pick := func(w Window) *float64 { return w.TTFTP99 }
	p := chart.NewPanel("windowed p99 TTFT", "", "ms")
	leg := failedWindows(p, ws, pick, 100)
	if len(leg) != 1 || !strings.Contains(leg[0].Label, "+∞") {
		t.Fatalf("legend %+v, want one entry for failed windows", leg)
	}
	xmin, xmax, ymin, ymax := p.X.Min, p.X.Max, p.Y.Min, p.Y.Max // what p.Add took from the marks
	if xmin != 1 || xmax != 2 || ymin != 120 || ymax != 120 {
		t.Errorf("marks over x [%v, %v], y [%v, %v]; want x [1, 2] at the panel's top 120", xmin, xmax, ymin, ymax)
	}
	p = chart.NewPanel("p", "", "ms")
	if _, err := segments(p, 0, "p99", ws, pick); err != nil {
		t.Fatal(err)
	}
	if p.Y.Max != 120 {
		t.Errorf("the line reached %v: a +∞ window is a marker, not a point of the line", p.Y.Max)
	}
	ws[1].TTFTP99, ws[2].TTFTP99 = f(95), nil
	if leg := failedWindows(chart.NewPanel("p", "", "ms"), ws, pick, 100); leg != nil {
		t.Errorf("no failed window drew %+v", leg)
	}
}
