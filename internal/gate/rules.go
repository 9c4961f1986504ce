package gate

import (
	"fmt"
	"math"
	"strings"

	"github.com/sagebench/sagebench/internal/stats"
	"golang.org/x/perf/benchfmt"
)

// checkCoverage fails closed on a benchmark present on one side only.
func checkCoverage(o *Outcome, ix *index) {
	for _, p := range ix.pairs {
		switch {
		case p.base == nil && p.cur == nil:
		case p.base == nil:
			o.add(Inconclusive, "coverage", p.subject(), "missing in the baseline (present in current, n=%d%s)", len(p.cur.Values), configNote(p.table))
		case p.cur == nil:
			o.add(Inconclusive, "coverage", p.subject(), "missing in current (present in the baseline, n=%d%s)", len(p.base.Values), configNote(p.table))
		}
	}
}

// symbolOf is the benchmark function a row name belongs to: the name up to
// the first '/', without the -GOMAXPROCS suffix and the Benchmark prefix.
func symbolOf(name string) string {
	sym, _, _ := strings.Cut(name, "/")
	if i := strings.LastIndexByte(sym, '-'); i > 0 && strings.Trim(sym[i+1:], "0123456789") == "" {
		sym = sym[:i]
	}
	return strings.TrimPrefix(sym, "Benchmark")
}

// checkExpect fails closed on an expected symbol missing on either side.
func checkExpect(o *Outcome, ix *index, expect []string) {
	for _, sym := range expect {
		want := strings.TrimPrefix(sym, "Benchmark")
		inBase, inCur := false, false
		for _, p := range ix.pairs {
			if symbolOf(p.row.Name) != want && p.row.Name != want {
				continue
			}
			inBase = inBase || p.base != nil
			inCur = inCur || p.cur != nil
		}
		switch {
		case !inBase && !inCur:
			o.add(Inconclusive, "expect", sym, "expected benchmark missing in the baseline and in current")
		case !inBase:
			o.add(Inconclusive, "expect", sym, "expected benchmark missing in the baseline")
		case !inCur:
			o.add(Inconclusive, "expect", sym, "expected benchmark missing in current")
		default:
			o.add(Pass, "expect", sym, "present on both sides")
		}
	}
}

// checkSamples fails closed where the sample sizes make significance at
// alpha impossible, so a "~" would mean nothing.
func checkSamples(o *Outcome, ix *index, alpha float64) {
	need := MinSamples(alpha)
	short := 0
	for _, p := range ix.pairs {
		if p.base == nil || p.cur == nil || p.table.Assumption == "exact" {
			continue
		}
		n1, n2 := len(p.base.Values), len(p.cur.Values)
		if minP := MinAttainableP(n1, n2); minP > alpha {
			short++
			o.add(Inconclusive, "samples", p.subject(),
				"n=%d+%d: smallest attainable Mann-Whitney p=%.4g > alpha %v; need >= %d samples per side",
				n1, n2, minP, alpha, need)
		}
	}
	if short == 0 && len(ix.pairs) > 0 {
		o.add(Pass, "samples", "all", "every benchmark can reach alpha %v (>= %d samples per side suffice)", alpha, need)
	}
}

// checkDirections fails closed on a significant change in a unit whose
// direction is unknown, and lists significant changes for the worse.
func checkDirections(o *Outcome, ix *index, meta benchfmt.UnitMetadataMap, p Policy) {
	for _, pr := range ix.pairs {
		if pr.base == nil || pr.cur == nil || !pr.cur.Significant() {
			continue
		}
		dir := direction(pr.table.Unit, meta, p)
		switch {
		case dir == stats.Unknown:
			o.add(Inconclusive, "direction", pr.subject(),
				"significant change %s (p=%.3g) in a unit of unknown direction; declare it under units: in the policy",
				pr.cur.Delta, pr.cur.P)
		case stats.Worse(dir, pr.base.Center, pr.cur.Center):
			o.Findings = append(o.Findings, Finding{Verdict: Pass, Note: true, Rule: "change", Subject: pr.subject(),
				Detail: fmt.Sprintf("significantly worse, %s (median %.4g -> %.4g, p=%.3g); the geomean, limit and trend rules judge it",
					pr.cur.Delta, pr.base.Center, pr.cur.Center, pr.cur.P)})
		}
	}
}

// checkGeomean fails a significant geomean regression beyond the
// threshold: over the benchmarks present on both sides, the geomean of
// the median ratios where the change is significant (1 where it is not).
func checkGeomean(o *Outcome, ix *index, meta benchfmt.UnitMetadataMap, p Policy) {
	seen := false
	for _, t := range o.Report.Tables {
		if !p.geomeanUnit(t.Unit) {
			continue
		}
		seen = true
		geomeanTable(o, ix, t, direction(t.Unit, meta, p), p)
	}
	if !seen {
		o.add(Inconclusive, "geomean", strings.Join(p.Geomean.Units, ","),
			"no results in these units on both sides: nothing to judge; set geomean.units in the policy")
	}
}

func geomeanTable(o *Outcome, ix *index, t *stats.Table, dir int, p Policy) {
	subject := "geomean " + t.Unit + configSuffix(t)
	var sig, all []float64
	worse := 0
	for _, pr := range ix.pairs {
		if pr.table != t || pr.base == nil || pr.cur == nil {
			continue
		}
		r := ratio(pr.base.Center, pr.cur.Center)
		if math.IsNaN(r) {
			o.add(Inconclusive, "geomean", pr.subject(), "ratio undefined (base median 0, current %v)", pr.cur.Center)
			continue
		}
		all = append(all, r)
		if pr.cur.Significant() {
			sig = append(sig, r)
			if stats.Worse(dir, pr.base.Center, pr.cur.Center) {
				worse++
			}
		} else {
			sig = append(sig, 1)
		}
	}
	if len(all) == 0 {
		o.add(Inconclusive, "geomean", subject, "no benchmark present on both sides")
		return
	}
	gSig, gAll := geo(sig), geo(all)
	if math.IsNaN(gSig) || math.IsNaN(gAll) {
		o.add(Inconclusive, "geomean", subject, "undefined: a median is 0 on one side")
		return
	}
	reg := worsening(dir, gSig)
	detail := fmt.Sprintf("%+.2f%% over %d benchmarks counting significant changes at alpha %v (%d worse; all changes %+.2f%%), threshold %+.2f%%",
		(gSig-1)*100, len(all), p.Alpha, worse, (gAll-1)*100, p.Geomean.ThresholdPct)
	switch {
	case dir == stats.Unknown:
		o.add(Inconclusive, "geomean", subject, "unit has no known direction; declare it under units: in the policy")
	case reg > p.Geomean.ThresholdPct:
		o.add(Regression, "geomean", subject, "worse by %.2f%%: %s", reg, detail)
	case worsening(dir, gAll) > p.Geomean.ThresholdPct:
		o.add(Inconclusive, "geomean", subject, "too noisy to decide: the medians moved %.2f%% for the worse, beyond the threshold, but not significantly at alpha %v; rerun with a larger count or on a quieter machine (%s)",
			worsening(dir, gAll), p.Alpha, detail)
	default:
		o.add(Pass, "geomean", subject, "%s", detail)
	}
}

func configSuffix(t *stats.Table) string {
	for _, kv := range t.Config {
		if kv.Key == "pkg" && kv.Value != "" {
			return " (" + kv.Value + ")"
		}
	}
	return ""
}

func ratio(base, cur float64) float64 {
	switch {
	case base == cur:
		return 1
	case base == 0:
		return math.NaN()
	}
	return cur / base
}

func geo(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		if x <= 0 {
			return math.NaN()
		}
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(xs)))
}

// worsening is how much worse, in percent, a geomean ratio g is for a unit
// of direction dir (negative when better).
func worsening(dir int, g float64) float64 {
	if dir == stats.HigherIsBetter {
		return (1 - g) * 100
	}
	return (g - 1) * 100
}

// configNote names the file configuration of a table, which splits
// benchmarks when the two sides differ in it (e.g. cpu: on two machines).
func configNote(t *stats.Table) string {
	var kv []string
	for _, c := range t.Config {
		if v := strings.TrimSpace(c.Value); v != "" {
			kv = append(kv, c.Key+": "+v)
		}
	}
	if len(kv) == 0 {
		return ""
	}
	return ", configuration " + strings.Join(kv, ", ") + "; keys that differ only by machine can be set under ignore: in the policy"
}
