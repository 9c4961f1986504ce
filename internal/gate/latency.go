package gate

import (
	"fmt"
	"math"
	"regexp"
	"sort"

	"github.com/sagebench/sagebench/internal/benchset"
	"github.com/sagebench/sagebench/internal/stats"
)

// evidence finds a benchmark's mean and p99 latency (ms) on either side:
// per-request e2e_ms from requests.jsonl when the run carried it, else
// the benchmark's own metrics (sec/op mean over runs; p99-ms, worst run).
type evidence struct {
	ix        *index
	base, cur *benchset.Set
}

// stat is one number of evidence and where it came from.
type stat struct {
	ok     bool
	value  float64
	source string // kind of evidence; both sides must agree
	detail string
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
	if lat := e.set(base).Latency[name]; len(lat) > 0 {
		return stat{true, mean(lat), "requests", fmt.Sprintf("requests.jsonl e2e_ms, n=%d", len(lat))}
	}
	if c := e.cell(base, name, "sec/op"); c != nil {
		return stat{true, mean(c.Values) * 1e3, "sec/op", fmt.Sprintf("mean time/op over %d runs", len(c.Values))}
	}
	if c := e.cell(base, name, "mean-ms"); c != nil {
		return stat{true, mean(c.Values), "mean-ms", fmt.Sprintf("mean-ms over %d runs", len(c.Values))}
	}
	return stat{}
}

func (e evidence) p99(base bool, name string) stat {
	if lat := e.set(base).Latency[name]; len(lat) > 0 {
		return stat{true, p99(lat), "requests", fmt.Sprintf("requests.jsonl e2e_ms, n=%d", len(lat))}
	}
	if c := e.cell(base, name, "p99-ms"); c != nil {
		return stat{true, c.Values[len(c.Values)-1], "p99-ms", fmt.Sprintf("p99-ms, worst of %d runs", len(c.Values))}
	}
	return stat{}
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
		for n := range s.set.Latency {
			if s.use {
				seen[n] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// checkLimits applies the absolute limits to the current side. A limit
// that matches nothing, or whose statistic has no evidence, is
// inconclusive: a limit that cannot fire is not a pass.
func checkLimits(o *Outcome, e evidence, limits []Limit) {
	names := e.names(false, true)
	for _, l := range limits {
		re := regexp.MustCompile("^(?:" + l.Benchmark + ")$") // checked by Validate
		matched := 0
		for _, n := range names {
			if !re.MatchString(n) {
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
	case !s.ok:
		o.add(Inconclusive, rule, name, "no evidence to check the limit %.4g ms against (no requests.jsonl e2e_ms and no matching metric)", max)
	case s.value > max:
		o.add(Regression, rule, name, "%.4g ms > limit %.4g ms (%s)", s.value, max, s.detail)
	default:
		o.add(Pass, rule, name, "%.4g ms <= limit %.4g ms (%s)", s.value, max, s.detail)
	}
}

// checkTrend applies the trend limits to every benchmark with evidence.
func checkTrend(o *Outcome, e evidence, t TrendRule) {
	type metric struct {
		rule       string
		get        func(bool, string) stat
		pct, floor float64
	}
	for _, m := range []metric{
		{"trend-mean", e.mean, t.MeanPct, t.MeanFloorMs},
		{"trend-p99", e.p99, t.P99Pct, t.P99FloorMs},
	} {
		ok, na := 0, 0
		for _, n := range e.names(true, true) {
			b, c := m.get(true, n), m.get(false, n)
			switch {
			case !b.ok && !c.ok:
				na++
			case !b.ok || !c.ok || b.source != c.source:
				o.add(Inconclusive, m.rule, n, "evidence differs between sides (baseline: %s; current: %s)", orNone(b), orNone(c))
			case trendWorse(b.value, c.value, m.pct, m.floor, t.BaselineFloorMs):
				o.add(Regression, m.rule, n, "%.4g ms -> %.4g ms (%+.1f%%, %+.4g ms): beyond +%.4g%% and floor %.4g ms (baseline floor %.4g ms; %s)",
					b.value, c.value, pctChange(b.value, c.value), c.value-b.value, m.pct, m.floor, t.BaselineFloorMs, c.detail)
			default:
				ok++
			}
		}
		o.add(Pass, m.rule, "all", "%d benchmarks within +%.4g%% or floor %.4g ms; %d without this statistic on either side", ok, m.pct, m.floor, na)
	}
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
