package gate

import (
	"fmt"
	"math"
	"regexp"
	"sort"

	"github.com/sagebench/sagebench/internal/benchset"
	"github.com/sagebench/sagebench/internal/stats"
	"golang.org/x/perf/benchunit"
)

// evidence finds a benchmark's mean and p99 latency (ms) on either side:
// per-request e2e_ms from requests.jsonl when the run carried it, then
// the statistics a pytest-benchmark JSON declares (p99 from its per-round
// data), else the benchmark's own metrics (sec/op mean over runs; p99-ms,
// worst run). base is nil when there is no baseline.
type evidence struct {
	ix        *index
	base, cur *benchset.Set
}

// stat is one number of evidence and where it came from. A stat that is
// not ok but has a why is "not evaluable": the input lacks what the rule
// needs, and says how to get it.
type stat struct {
	ok     bool
	value  float64
	source string // kind of evidence; both sides must agree
	detail string
	why    string
}

func (e evidence) set(base bool) *benchset.Set {
	if base {
		return e.base
	}
	return e.cur
}

func (e evidence) cell(base bool, name, unit string) *stats.Cell {
	p, ok := e.ix.byName[name][unit]
	if !ok {
		return nil
	}
	if base {
		return p.base
	}
	return p.cur
}

func (e evidence) mean(base bool, name string) stat {
	s := e.set(base)
	if s == nil {
		return stat{}
	}
	if lat := s.Latency[name]; len(lat) > 0 {
		return requestsMean(lat)
	}
	if sum, ok := s.Summaries[name]; ok {
		return stat{ok: true, value: sum.MeanMs, source: "pytest", detail: fmt.Sprintf("pytest-benchmark stats.mean, rounds=%d", sum.Rounds)}
	}
	if c := e.cell(base, name, "sec/op"); c != nil {
		return stat{ok: true, value: mean(c.Values) * 1e3, source: "sec/op", detail: fmt.Sprintf("mean time/op over %d runs", len(c.Values))}
	}
	if c := e.cell(base, name, "mean-ms"); c != nil {
		return stat{ok: true, value: mean(c.Values), source: "mean-ms", detail: fmt.Sprintf("mean-ms over %d runs", len(c.Values))}
	}
	return stat{}
}

func (e evidence) p99(base bool, name string) stat {
	s := e.set(base)
	if s == nil {
		return stat{}
	}
	if lat := s.Latency[name]; len(lat) > 0 {
		return stat{ok: true, value: p99(lat), source: "requests", detail: "requests.jsonl e2e_ms, " + failedOf(lat)}
	}
	if sum, ok := s.Summaries[name]; ok {
		if len(sum.DataMs) == 0 {
			return stat{source: "pytest", why: "not evaluable: the pytest-benchmark JSON has no stats.data to compute a p99 from (pytest-benchmark has no p99 of its own); write it with --benchmark-json, which always includes the per-round data, or save runs with --benchmark-save-data"}
		}
		return stat{ok: true, value: p99(sum.DataMs), source: "pytest", detail: fmt.Sprintf("pytest-benchmark stats.data, n=%d", len(sum.DataMs))}
	}
	if c := e.cell(base, name, "p99-ms"); c != nil {
		if runs := e.runs(base, name); len(c.Values) < runs {
			return stat{source: "p99-ms", why: fmt.Sprintf("not evaluable: %d of %d runs have no p99-ms (failures counted as +∞ moved or reached its rank), so the worst run's p99 is unknown; give the runs' requests.jsonl", runs-len(c.Values), runs)}
		}
		return stat{ok: true, value: c.Values[len(c.Values)-1], source: "p99-ms", detail: fmt.Sprintf("p99-ms, worst of %d runs", len(c.Values))}
	}
	return stat{}
}

// runs is how many runs of name a side holds: the most values any of
// its units has (a run leaves a metric out rather than print a wrong
// one, e.g. p99-ms when failures reach its rank, so one unit's count is
// not the runs').
func (e evidence) runs(base bool, name string) int {
	n := 0
	for unit := range e.ix.byName[name] {
		if c := e.cell(base, name, unit); c != nil {
			n = max(n, len(c.Values))
		}
	}
	return n
}

// requestsMean is the mean E2E of the successes among lat (a failed
// request is +Inf there): a mean has no failure rule of its own, so it
// is the successes', and the detail says how many failed; with none
// succeeded there is no mean to judge.
func requestsMean(lat []float64) stat {
	ok := make([]float64, 0, len(lat))
	for _, x := range lat {
		if !math.IsInf(x, 1) {
			ok = append(ok, x)
		}
	}
	if len(ok) == 0 {
		return stat{source: "requests", why: fmt.Sprintf("not evaluable: all %d requests failed, so there is no mean latency", len(lat))}
	}
	return stat{ok: true, value: mean(ok), source: "requests", detail: "requests.jsonl e2e_ms of the successes, " + failedOf(lat)}
}

// failedOf says n and how many of lat failed (+Inf: counted as +∞).
func failedOf(lat []float64) string {
	failed := 0
	for _, x := range lat {
		if math.IsInf(x, 1) {
			failed++
		}
	}
	if failed == 0 {
		return fmt.Sprintf("n=%d", len(lat))
	}
	return fmt.Sprintf("n=%d, %d failed counted as +∞", len(lat), failed)
}

// mean sums x/n rather than dividing the sum, which overflows to +Inf for
// huge latencies (and +Inf compares as "no growth" against +Inf).
func mean(xs []float64) float64 {
	n, s := float64(len(xs)), 0.0
	for _, x := range xs {
		s += x / n
	}
	return s
}

// p99 is the nearest-rank 99th percentile.
func p99(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(math.Ceil(0.99*float64(len(s)))) - 1
	return s[max(i, 0)]
}

// names lists every benchmark name known on the chosen sides, sorted.
func (e evidence) names(base, cur bool) []string {
	seen := map[string]bool{}
	for n, units := range e.ix.byName {
		for _, p := range units {
			if (base && p.base != nil) || (cur && p.cur != nil) {
				seen[n] = true
			}
		}
	}
	for _, s := range []struct {
		use bool
		set *benchset.Set
	}{{base, e.base}, {cur, e.cur}} {
		if !s.use || s.set == nil {
			continue
		}
		for n := range s.set.Latency {
			seen[n] = true
		}
		for n := range s.set.Summaries {
			seen[n] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// limitMatches reports whether a limit's benchmark matches name: written
// exactly, as an expect entry matches it; as a regex: (re, anchored) in
// any of name's spellings (with or without Benchmark and -GOMAXPROCS).
func limitMatches(re *regexp.Regexp, expr, name string) bool {
	if re == nil {
		return expectMatches(name, expr)
	}
	for _, f := range nameForms(name) {
		if re.MatchString(f) {
			return true
		}
	}
	return false
}

// checkLimits applies the absolute limits to the current side. A limit
// that matches nothing, or whose statistic has no evidence, is
// inconclusive: a limit that cannot fire is not a pass.
func checkLimits(o *Outcome, e evidence, limits []Limit) {
	names := e.names(false, true)
	for _, l := range limits {
		re, _ := l.pattern() // checked by Validate
		matched := 0
		for _, n := range names {
			if !limitMatches(re, l.Benchmark, n) {
				continue
			}
			matched++
			if l.MaxMeanMs > 0 {
				limitOne(o, "limit-mean", n, e.mean(false, n), l.MaxMeanMs)
			}
			if l.MaxP99Ms > 0 {
				limitOne(o, "limit-p99", n, e.p99(false, n), l.MaxP99Ms)
			}
		}
		if matched == 0 {
			o.add(Inconclusive, "limit", l.Benchmark, "matches no benchmark in current")
		}
	}
}

func limitOne(o *Outcome, rule, name string, s stat, max float64) {
	switch {
	case s.why != "":
		o.add(Inconclusive, rule, name, "limit %.4g ms %s", max, s.why)
	case !s.ok:
		o.add(Inconclusive, rule, name, "no evidence to check the limit %.4g ms against (no requests.jsonl e2e_ms, pytest-benchmark stats and no matching metric)", max)
	case s.value > max:
		o.add(Regression, rule, name, "%.4g ms > limit %.4g ms (%s)", s.value, max, s.detail)
	default:
		o.add(Pass, rule, name, "%.4g ms <= limit %.4g ms (%s)", s.value, max, s.detail)
	}
}

// trendMetric is one statistic the trend rule limits.
type trendMetric struct {
	rule  string
	get   func(bool, string) stat
	pct   float64
	floor func(TrendFloor) float64
}

func (e evidence) trendMetrics(t TrendRule) []trendMetric {
	return []trendMetric{
		{"trend-mean", e.mean, t.MeanPct, func(f TrendFloor) float64 { return f.MeanMs }},
		{"trend-p99", e.p99, t.P99Pct, func(f TrendFloor) float64 { return f.P99Ms }},
	}
}

// floorUnit is the unit of a kind of evidence whose floors apply to it.
func floorUnit(source string) string {
	if source == "sec/op" {
		return "sec/op"
	}
	return "ms"
}

// checkTrend applies the trend limits to every benchmark with evidence. A
// metric that no benchmark has on both sides is a note, never a pass.
func checkTrend(o *Outcome, e evidence, t TrendRule) {
	for _, m := range e.trendMetrics(t) {
		ok, na, judged := 0, 0, 0
		for _, n := range e.names(true, true) {
			b, c := m.get(true, n), m.get(false, n)
			fl := t.Floors[floorUnit(c.source)]
			floor := m.floor(fl)
			switch {
			case b.why != "" || c.why != "":
				judged++
				o.add(Inconclusive, m.rule, n, "%s", firstWhy(b, c))
			case b.ok && c.ok && math.IsInf(b.value, 1) && math.IsInf(c.value, 1):
				judged++
				o.add(Inconclusive, m.rule, n, "+∞ on both sides (failed requests reach the quantile's rank): no change can be judged (baseline: %s; current: %s)", b.detail, c.detail)
			case !b.ok && !c.ok:
				na++
			case !b.ok || !c.ok || b.source != c.source:
				judged++
				o.add(Inconclusive, m.rule, n, "evidence differs between sides (baseline: %s; current: %s)", orNone(b), orNone(c))
			case trendWorse(b.value, c.value, m.pct, floor, fl.BaselineMs) && !e.settled(n, c.source):
				judged++
				bs, cs := showPair(b, c)
				o.add(Inconclusive, m.rule, n, "%s -> %s (%+.1f%%) is beyond +%.4g%%, but the time/op samples cannot show it is a change (too few samples, varying exact values or not significant at alpha); rerun with a larger count",
					bs, cs, pctChange(b.value, c.value), m.pct)
			case trendWorse(b.value, c.value, m.pct, floor, fl.BaselineMs):
				judged++
				bs, cs := showPair(b, c)
				o.add(Regression, m.rule, n, "%s -> %s (%+.1f%%): beyond +%.4g%% and floor %.4g ms (baseline floor %.4g ms; %s)",
					bs, cs, pctChange(b.value, c.value), m.pct, floor, fl.BaselineMs, c.detail)
			default:
				judged++
				ok++
			}
		}
		switch {
		case judged == 0:
			o.note(m.rule, "all", "not evaluated: no benchmark has this statistic on both sides (%d without it)", na)
		case ok > 0:
			o.add(Pass, m.rule, "all", "%d benchmarks within +%.4g%% (or their unit's floor); %d without this statistic on either side", ok, m.pct, na)
		}
	}
}

// showPair renders a baseline and current value in the unit of their
// evidence: milliseconds, or seconds per op scaled as the comparison
// table shows them (99.95ns, not 9.995e-05 ms).
func showPair(b, c stat) (string, string) {
	if c.source != "sec/op" {
		return fmt.Sprintf("%.4g ms", b.value), fmt.Sprintf("%.4g ms", c.value)
	}
	sc := benchunit.CommonScale([]float64{b.value / 1e3, c.value / 1e3}, benchunit.Decimal)
	return sc.Format(b.value/1e3) + "s", sc.Format(c.value/1e3) + "s"
}

// settled reports whether a trend in evidence of kind source for name is
// a change: Go benchmark time/op, a sample of noisy runs, must show a
// significant change in samples that can reach alpha. Latency evidence
// (per request or per round) is judged by the contract's rule alone.
func (e evidence) settled(name, source string) bool {
	if source != "sec/op" {
		return true
	}
	p, ok := e.ix.byName[name]["sec/op"]
	return ok && p.base != nil && p.cur != nil && !e.ix.unsure[p.subject()] && p.cur.Significant()
}

// missingBaseline is the trend rule without a baseline: skipped with a
// note, or inconclusive, as trend.missing_baseline says.
func missingBaseline(o *Outcome, t TrendRule) {
	for _, rule := range []string{"trend-mean", "trend-p99"} {
		if t.MissingBaseline == MissingFail {
			o.add(Inconclusive, rule, "all", "no baseline to compare with (trend.missing_baseline: fail)")
			continue
		}
		o.note(rule, "all", "not evaluated: no baseline (trend.missing_baseline: skip)")
	}
}

func firstWhy(b, c stat) string {
	if b.why != "" {
		return "baseline " + b.why
	}
	return "current " + c.why
}

func orNone(s stat) string {
	if !s.ok {
		return "none"
	}
	return s.detail
}

// trendWorse is the contract's trend rule: growth beyond pct counts only
// when it also exceeds the absolute floor; below the baseline floor the
// absolute floor alone decides.
func trendWorse(base, cur, pct, floor, baseFloor float64) bool {
	delta := cur - base
	if delta <= floor {
		return false
	}
	if base < baseFloor {
		return true
	}
	return pctChange(base, cur) > pct+1e-9 // exactly +pct is within
}

func pctChange(base, cur float64) float64 {
	if base == 0 {
		return math.Inf(1)
	}
	return (cur/base - 1) * 100
}
