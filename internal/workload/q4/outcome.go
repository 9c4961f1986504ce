package q4

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload"
)

// Q4's metrics; the per-scale ones are named "engines=<n>.<name>".
var (
	defEfficiency = result.Def{Name: "scaling_efficiency", Unit: result.Ratio, Direction: result.Higher}
	defMaxRate    = result.Def{Name: "max_rate", Unit: result.ReqPerS, Direction: result.Higher}
	defGoodput    = result.Def{Name: "goodput", Unit: result.ReqPerS, Direction: result.Higher}
	defTTFT       = result.Def{Name: "ttft_p99_ms", Unit: result.Ms, Direction: result.Lower}
	defE2E        = result.Def{Name: "e2e_p99_ms", Unit: result.Ms, Direction: result.Lower}
)

// defs are the metrics a q4.target may name.
var defs = []result.Def{defEfficiency}

// scale are one scale's figures.
type scale struct {
	key                        string // engines=<n> or engines=target
	f                          Frontier
	rate, eff, good, ttft, e2e result.Metric
}

// outcome writes the frontier's result — per scale the rate bracket, the
// best probe's figures and the efficiency against one engine; primary:
// the efficiency at the largest scale — with bench lines and rows.
func (q *q4) outcome(out *workload.Outcome, fs []Frontier) {
	out.Bench = []record.BenchLine{}
	var scales []scale
	var base *Frontier
	for i, f := range fs {
		s := scale{key: fmt.Sprintf("engines=%d", f.Engines), f: f}
		if f.Engines == 0 {
			s.key = "engines=target"
		}
		if i == 0 && f.Engines == 1 {
			base = &fs[0]
		}
		s.rate = rateBracket(f)
		s.eff = efficiency(f, base)
		n := f.Best.Requests
		s.good = defGoodput.Measure(f.Best.Goodput, n, "no probe passed")
		s.ttft = defTTFT.Measure(f.Best.TTFTP99, n, "no probe passed")
		s.e2e = defE2E.Measure(f.Best.E2EP99, n, "no probe passed")
		scales = append(scales, s)
		q.benchAndRow(out, s)
	}
	out.Result = q.result(scales)
	out.Result.Tables = append(out.Result.Tables, frontierTable(scales), probeTable(fs))
}

// rateBracket is the highest rate meeting the SLO as a bound: [highest
// pass, lowest failure], open above when nothing failed or the driver
// stopped the search, [0, lowest failure] when nothing passed.
func rateBracket(f Frontier) result.Metric {
	n := len(f.Probes)
	switch {
	case f.DriverBound:
		return defMaxRate.Within(f.MaxRate, math.Inf(1), n, fmt.Sprintf("driver-bound at %.2f req/s: the target's figure is above", f.DriverRate))
	case f.MaxRate == 0 && f.FailRate > 0:
		return defMaxRate.Within(0, f.FailRate, n, "no probed rate met the SLO")
	case f.MaxRate == 0:
		return defMaxRate.NotMeasurable("no probe ran")
	case !f.Bracketed:
		return defMaxRate.Within(f.MaxRate, math.Inf(1), n, "the probe budget ran out before a rate failed")
	}
	return defMaxRate.Within(f.MaxRate, f.FailRate, n, "between the highest passing and the lowest failing rate")
}

// efficiency is rate(n) ÷ (n · rate(1)) from the brackets: its interval
// is what the brackets allow, its value the ratio of their midpoints;
// only a bound (or not measurable) when a bracket is open.
func efficiency(f Frontier, base *Frontier) result.Metric {
	switch {
	case f.Engines <= 0:
		return defEfficiency.NotMeasurable("the target's size is unknown (no scale hook)")
	case base == nil:
		return defEfficiency.NotMeasurable("one engine was not measured first")
	case f.Engines == 1:
		return defEfficiency.NotMeasurable("the baseline scale itself")
	case base.MaxRate <= 0 || base.DriverBound:
		return defEfficiency.NotMeasurable("rate(1) is not bracketed from below")
	case f.MaxRate <= 0:
		return defEfficiency.NotMeasurable(fmt.Sprintf("no rate passed at n = %d", f.Engines))
	}
	n := float64(f.Engines)
	hi1, hiN := base.FailRate, f.FailRate
	lo := f.MaxRate / (n * nonzeroInf(hi1))
	hi := nonzeroInf(hiN) / (n * base.MaxRate)
	probes := max(len(f.Probes)+len(base.Probes), 1)
	if !base.Bracketed || !f.Bracketed || f.DriverBound {
		return defEfficiency.Within(lo, hi, probes, "a rate bracket is open")
	}
	mid := (f.MaxRate + hiN) / 2 / (n * (base.MaxRate + hi1) / 2)
	return defEfficiency.Measure(mid, probes, "").WithInterval(lo, hi).WithReason("the interval is what the two rate brackets allow")
}

// nonzeroInf is v, or +∞ for 0 (no failing rate found).
func nonzeroInf(v float64) float64 {
	if v <= 0 {
		return math.Inf(1)
	}
	return v
}

func (q *q4) benchAndRow(out *workload.Outcome, s scale) {
	f := s.f
	if f.MaxRate > 0 {
		out.Bench = append(out.Bench, record.BenchLine{Name: s.key, N: f.Best.Requests, Values: []record.BenchValue{
			{Value: f.MaxRate, Unit: "max-req/s"}, {Value: f.Best.Goodput, Unit: "goodput-req/s"},
			{Value: f.Best.TTFTP99, Unit: "ttft-p99-ms"}, {Value: f.Best.E2EP99, Unit: "p99-ms"}}})
	}
	row := workload.Row{Config: s.key, DurationSeconds: record.F(q.cfg.Probe.Seconds()), Primary: &s.rate,
		Metadata: map[string]any{"engines": f.Engines, "probes": len(f.Probes), "driver_bound": f.DriverBound, "bracketed": f.Bracketed}}
	if f.MaxRate > 0 {
		row.Throughput, row.LatencyP99, row.SuccessRate = record.F(f.Best.Goodput), record.F(f.Best.E2EP99), record.F(f.Best.Success)
	}
	out.Rows = append(out.Rows, row)
}

// result answers with the efficiency at the largest scale measured.
func (q *q4) result(scales []scale) result.Result {
	var metrics []result.Metric
	for _, s := range scales {
		eff := s.eff
		eff.Name = "efficiency" // per scale; scaling_efficiency is the primary
		for _, m := range []result.Metric{s.rate, eff, s.good, s.ttft, s.e2e} {
			m.Name = s.key + "." + m.Name
			metrics = append(metrics, m)
		}
	}
	if len(scales) == 0 {
		return result.New("not answered: no scale was measured", defEfficiency.NotMeasurable("no scale was measured"))
	}
	last := scales[len(scales)-1]
	primary := last.eff.In("at " + last.key)
	var parts []string
	for _, s := range scales {
		parts = append(parts, fmt.Sprintf("%s: %s", strings.TrimPrefix(s.key, "engines="), result.Short(s.rate)))
	}
	ans := "the highest rate meeting the SLO was " + strings.Join(parts, ", ")
	if primary.State == result.Measured || primary.State == result.Bound {
		ans += fmt.Sprintf(" (engines: rate); scaling efficiency at %s %s", last.key, result.Format(last.eff))
	} else {
		ans += " (engines: rate); scaling efficiency not measurable: " + last.eff.Reason
	}
	return result.New(ans, primary, metrics...)
}

func frontierTable(scales []scale) result.Table {
	t := result.Table{Title: "Frontier", Note: "max rate: [highest passing, lowest failing] probe rate; efficiency rate(n) ÷ (n · rate(1))",
		Columns: []string{"engines", "max rate", "goodput", "p99 TTFT", "p99 E2E", "efficiency", "probes", "verdict"}}
	for _, s := range scales {
		t.AddRow(result.Text(strings.TrimPrefix(s.key, "engines=")), result.Of(s.rate), result.Of(s.good), result.Of(s.ttft),
			result.Of(s.e2e), result.Of(s.eff), result.Textf("%d", len(s.f.Probes)), result.Text(verdict(s.f)))
	}
	return t
}

// probeTable lists every probe once, by scale and then rate.
func probeTable(fs []Frontier) result.Table {
	t := result.Table{Title: "Probes", Columns: []string{"engines", "rate req/s", "requests", "success", "p99 TTFT ms", "p99 E2E ms", "lag p99 ms", "verdict"}}
	for _, f := range fs {
		ps := slices.Clone(f.Probes)
		slices.SortStableFunc(ps, func(a, b Probe) int { return cmp.Compare(a.Rate, b.Rate) })
		for _, p := range ps {
			v := "pass"
			if !p.Pass {
				v = "fail: " + p.Reason
			}
			t.AddRow(result.Text(strconv.Itoa(f.Engines)), result.Textf("%.2f", p.Rate), result.Textf("%d", p.Requests), result.Textf("%.3f", p.Success),
				result.Text(num(p.TTFTP99)), result.Text(num(p.E2EP99)), result.Text(num(p.LagP99)), result.Text(v))
		}
	}
	return t
}

// verdict says how a scale's search ended.
func verdict(f Frontier) string {
	switch {
	case f.DriverBound:
		return fmt.Sprintf("driver-bound at %.2f req/s (no SUT figure above)", f.DriverRate)
	case f.Interrupted:
		return "interrupted"
	case f.MaxRate == 0:
		return "no rate met the SLO"
	case !f.Bracketed:
		return "≥ max rate (probe budget spent before a failure)"
	}
	return "bracketed"
}

func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}
