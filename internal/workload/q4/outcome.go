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
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/workload"
)

// Q4's metrics; the per-scale ones are named "engines=<n>.<name>".
var (
	defEfficiency = result.Def{Name: "scaling_efficiency", Unit: result.Ratio, Direction: result.Higher}
	defMaxRate    = result.Def{Name: "max_rate", Unit: result.ReqPerS, Direction: result.Higher}
	defGoodput    = result.Def{Name: "goodput", Unit: result.ReqPerS, Direction: result.Higher}
	defProbes     = result.Def{Name: "trials", Unit: result.Count, Direction: result.Lower}
)

// quantileDefs are the per-scale TTFT and E2E quantile metrics at q
// (ttft_p99_ms at the p99).
func quantileDefs(q float64) (ttft, e2e result.Def) {
	n := strings.ReplaceAll(quantileName(q), ".", "_")
	return result.Def{Name: "ttft_p" + n + "_ms", Unit: result.Ms, Direction: result.Lower},
		result.Def{Name: "e2e_p" + n + "_ms", Unit: result.Ms, Direction: result.Lower}
}

// defs are the metrics a q4.target may name.
var defs = []result.Def{defEfficiency}

// scale are one scale's figures.
type scale struct {
	key                                string // engines=<n>
	f                                  Frontier
	rate, eff, good, ttft, e2e, trials result.Metric
}

// outcome writes the frontier's result — per scale the rate bracket, the
// best probe's figures and the efficiency against one engine; primary:
// the efficiency at the largest scale — with bench lines and rows.
func (q *q4) outcome(out *workload.Outcome, fs []Frontier) {
	out.Bench = []record.BenchLine{}
	var scales []scale
	var base *Frontier
	dt, de := quantileDefs(q.cfg.SLO.Quantile)
	for i, f := range fs {
		s := scale{key: fmt.Sprintf("engines=%d", f.Engines), f: f}
		if i == 0 {
			base = &fs[0]
		}
		s.rate = q.rateBracket(f)
		s.eff = efficiency(f, base, q.rateBracket)
		n := f.Best.Requests
		s.good = defGoodput.Measure(f.Best.Goodput, n, "no probe passed")
		s.ttft = dt.Measure(f.Best.TTFTQ, n, "no probe passed")
		s.e2e = de.Measure(f.Best.E2EQ, n, "no probe passed")
		s.trials = defProbes.Measure(float64(f.Trials), max(len(f.Probes), 1), "")
		scales = append(scales, s)
		q.benchAndRow(out, s)
	}
	out.Result = q.result(scales)
	out.Result.Tables = append(out.Result.Tables, q.frontierTable(scales), q.probeTable(fs))
}

// rateBracket is the highest rate meeting the SLO as a bound: [highest
// pass, lowest failure], open above when nothing failed or the driver
// stopped the search, [0, lowest failure] when nothing passed. Its
// reason says whether the bracket is within the precision.
func (q *q4) rateBracket(f Frontier) result.Metric {
	n := f.Trials
	switch {
	case f.DriverBound && f.MaxRate == 0:
		return defMaxRate.NotMeasurable(fmt.Sprintf("driver-bound at %.2f req/s before any rate passed: the harness, not the target, limited the search", f.DriverRate))
	case f.DriverBound:
		return defMaxRate.Within(f.MaxRate, math.Inf(1), n, fmt.Sprintf("driver-bound at %.2f req/s: the target's figure is above", f.DriverRate))
	case f.MaxRate == 0 && f.FailRate > 0:
		return defMaxRate.Within(0, f.FailRate, n, "no probed rate met the SLO")
	case f.MaxRate == 0:
		return defMaxRate.NotMeasurable("no rate was decided (every probe ran out undecided, or none ran)")
	case f.Bracketed && f.MaxRate >= f.FailRate:
		return defMaxRate.NotMeasurable(fmt.Sprintf("the verdicts contradict: %.2f req/s passed above a failure at %.2f req/s (each verdict holds at 95 %%)", f.MaxRate, f.FailRate))
	case !f.Bracketed:
		return defMaxRate.Within(f.MaxRate, math.Inf(1), n, "the probe budget ran out before a rate failed")
	case !f.Precise:
		return defMaxRate.Within(f.MaxRate, f.FailRate, n, fmt.Sprintf("the probe budget ran out at %.0f %% of the bracket, not the %g %% asked for", 100*(f.FailRate-f.MaxRate)/f.FailRate, 100*q.cfg.Precision))
	}
	return defMaxRate.Within(f.MaxRate, f.FailRate, n, fmt.Sprintf("between the highest passing and the lowest failing rate, within %g %%", 100*q.cfg.Precision))
}

// efficiency is rate(n) ÷ (n ÷ n₁ · rate(n₁)) from the two rate
// brackets as rateBracket states them (so never from a probe a bracket
// left out, like a driver-bound one): a bound whose interval is what the
// brackets allow — the frontier is only bracketed, so the efficiency is
// too; a midpoint would be a number no probe measured — open above when
// a bracket is, not measurable when either bracket is missing or the
// baseline's has no lower end.
func efficiency(f Frontier, base *Frontier, rate func(Frontier) result.Metric) result.Metric {
	switch {
	case base == nil || base.Engines <= 0:
		return defEfficiency.NotMeasurable("no baseline scale was measured")
	case f.Engines == base.Engines:
		return defEfficiency.NotMeasurable(fmt.Sprintf("the baseline scale itself (one scale only: its frontier is engines=%d.max_rate)", f.Engines))
	}
	rb, rf := rate(*base), rate(f)
	switch {
	case rb.State != result.Bound || !(rb.Interval[0] > 0):
		return defEfficiency.NotMeasurable(fmt.Sprintf("rate(%d) is not bracketed from below: %s", base.Engines, result.Format(rb)))
	case rf.State != result.Bound:
		return defEfficiency.NotMeasurable(fmt.Sprintf("rate(%d): %s", f.Engines, result.Format(rf)))
	}
	n := float64(f.Engines) / float64(base.Engines)
	lo, hi := rf.Interval[0]/(n*rb.Interval[1]), rf.Interval[1]/(n*rb.Interval[0])
	probes := max(f.Trials+base.Trials, 1)
	why := fmt.Sprintf("what the brackets of n = %d and n = %d allow", base.Engines, f.Engines)
	switch {
	case math.IsInf(rb.Interval[1], 1) || math.IsInf(rf.Interval[1], 1):
		why = "a rate bracket is open: " + why
	case lo > 1:
		why += "; superlinear: a larger pool queues less at the same load under a tail SLO, or the smaller scale's probes were disturbed (a loaded machine) — read it with the probes' driver lag"
	}
	return defEfficiency.Within(lo, hi, probes, why)
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
			{Value: f.Best.TTFTQ, Unit: "ttft-p" + quantileName(q.cfg.SLO.Quantile) + "-ms"}, {Value: f.Best.E2EQ, Unit: "p" + quantileName(q.cfg.SLO.Quantile) + "-ms"}}})
	}
	row := workload.Row{Config: s.key, DurationSeconds: record.F(f.Best.Seconds), Primary: &s.rate,
		Metadata: map[string]any{"engines": f.Engines, "probes": len(f.Probes), "trials": f.Trials, "driver_bound": f.DriverBound,
			"bracketed": f.Bracketed, "precise": f.Precise, "quantile": q.cfg.SLO.Quantile}}
	// the row's latency is the passing probe's SLO quantile when it is
	// the p99 (failures +∞); its other columns are not measured
	p99 := summary.DefE2EP99.NotMeasurable("the SLO quantile is p" + quantileName(q.cfg.SLO.Quantile) + ", not the p99")
	if f.MaxRate > 0 {
		row.Throughput, row.SuccessRate = record.F(f.Best.Goodput), record.F(f.Best.Success)
		if q.cfg.SLO.Quantile == 0.99 {
			p99 = summary.DefE2EP99.Measure(f.Best.E2EQ, f.Best.Requests, "no request")
			if math.IsInf(f.Best.E2EQ, 1) {
				p99 = summary.DefE2EP99.Never("failed requests reached the p99's rank (a failure counts +∞)")
			}
		}
	} else if q.cfg.SLO.Quantile == 0.99 {
		p99 = summary.DefE2EP99.NotMeasurable("no rate met the SLO")
	}
	row.SetLatency(p99)
	out.Rows = append(out.Rows, row)
}

// result answers with the efficiency at the largest scale measured.
func (q *q4) result(scales []scale) result.Result {
	var metrics []result.Metric
	for _, s := range scales {
		eff := s.eff
		eff.Name = "efficiency" // per scale; scaling_efficiency is the primary
		for _, m := range []result.Metric{s.rate, eff, s.good, s.ttft, s.e2e, s.trials} {
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
	ans := fmt.Sprintf("the highest %s rate meeting the SLO (p%s TTFT ≤ %v, E2E ≤ %v) was ", q.cfg.Arrivals, quantileName(q.cfg.SLO.Quantile), q.cfg.SLO.TTFT, q.cfg.SLO.E2E) + strings.Join(parts, ", ")
	if primary.State == result.Measured || primary.State == result.Bound {
		ans += fmt.Sprintf(" (engines: rate); scaling efficiency at %s %s", last.key, result.Short(last.eff))
	} else {
		ans += " (engines: rate); scaling efficiency not measurable: " + last.eff.Reason
	}
	return result.New(ans, primary, metrics...)
}

func (q *q4) frontierTable(scales []scale) result.Table {
	qn := "p" + quantileName(q.cfg.SLO.Quantile)
	t := result.Table{Key: TableFrontier, Title: "Frontier", Note: fmt.Sprintf("max rate: [highest passing, lowest failing] probe rate, bisected to %g %%; efficiency rate(n) ÷ (n ÷ n₁ · rate(n₁)), its interval what the brackets allow", 100*q.cfg.Precision),
		Columns: []string{"engines", "max rate", "goodput", qn + " TTFT", qn + " E2E", "efficiency", "trials", "verdict"}}
	for _, s := range scales {
		t.AddRow(result.Text(strings.TrimPrefix(s.key, "engines=")), result.Of(s.rate), result.Of(s.good), result.Of(s.ttft),
			result.Of(s.e2e), result.Of(s.eff), result.Textf("%d", s.f.Trials), result.Text(verdict(s.f)))
	}
	return t
}

// probeTable lists every probe once, by scale and then rate (numbers,
// not text).
func (q *q4) probeTable(fs []Frontier) result.Table {
	qn := "p" + quantileName(q.cfg.SLO.Quantile)
	t := result.Table{Key: TableProbes, Title: "Probes", Note: q.rule(),
		Columns: []string{"engines", "rate req/s", "realized req/s", "trials", "s each", "requests", "success", qn + " TTFT ms", qn + " E2E ms", "lag p99 ms", "service ms", "verdict"}}
	for _, f := range fs {
		ps := slices.Clone(f.Probes)
		slices.SortStableFunc(ps, func(a, b Probe) int { return cmp.Compare(a.Rate, b.Rate) })
		for _, p := range ps {
			v := "pass"
			switch {
			case p.Undecided:
				v = p.Reason
			case !p.Pass:
				v = "fail: " + p.Reason
			case p.Reason != "":
				v += " (" + p.Reason + ")"
			}
			if p.Trials > 1 {
				v += fmt.Sprintf(" (%d trials pooled: the first hung on sampling)", p.Trials)
			}
			t.AddRow(result.Text(strconv.Itoa(f.Engines)), result.Textf("%.2f", p.Rate), result.Textf("%.2f", p.Realized), result.Textf("%d", p.Trials), result.Textf("%.1f", p.Seconds),
				result.Textf("%d", p.Requests), result.Textf("%.3f", p.Success), result.Text(num(p.TTFTQ)), result.Text(num(p.E2EQ)),
				result.Text(num(p.LagP99)), result.Text(num(p.ServiceMs)), result.Text(v))
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
	case !f.Precise:
		return "bracketed, wider than the precision (probe budget spent)"
	}
	return "bracketed"
}

func num(v float64) string {
	if math.IsInf(v, 1) {
		return "∞"
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}
