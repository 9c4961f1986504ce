package gate

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/sagebench/sagebench/internal/stats"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"
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
	return strings.TrimPrefix(trimProcs(sym), "Benchmark")
}

// trimProcs drops the -GOMAXPROCS suffix go test appends to a name.
func trimProcs(name string) string {
	if i := strings.LastIndexByte(name, '-'); i > 0 && i < len(name)-1 && strings.Trim(name[i+1:], "0123456789") == "" {
		return name[:i]
	}
	return name
}

// nameForms are the spellings a benchmark name can be written in by a
// policy or a flag: with or without the Benchmark prefix and the
// -GOMAXPROCS suffix.
func nameForms(name string) []string {
	bare := strings.TrimPrefix(name, "Benchmark")
	forms := []string{bare, "Benchmark" + bare}
	if t := trimProcs(bare); t != bare {
		forms = append(forms, t, "Benchmark"+t)
	}
	return forms
}

// expectMatches reports whether the row name satisfies an expect entry:
// a benchmark function (Encode, BenchmarkEncode), a full name with or
// without -N, or a prefix ending in '/' (BenchmarkAggregateParallel/).
func expectMatches(name, want string) bool {
	w := trimProcs(strings.TrimPrefix(want, "Benchmark"))
	bare := trimProcs(strings.TrimPrefix(name, "Benchmark"))
	if strings.HasSuffix(want, "/") {
		return strings.HasPrefix(bare+"/", strings.TrimPrefix(want, "Benchmark"))
	}
	return symbolOf(name) == w || bare == w
}

// checkExpect fails closed on an expected benchmark missing on either
// side (on current alone when there is no baseline).
func checkExpect(o *Outcome, ix *index, expect []string, withBase bool) {
	for _, sym := range expect {
		inBase, inCur := !withBase, false
		for _, p := range ix.pairs {
			if !expectMatches(p.row.Name, sym) {
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
		case !withBase:
			o.add(Pass, "expect", sym, "present in current")
		default:
			o.add(Pass, "expect", sym, "present on both sides")
		}
	}
}

// checkSamples fails closed where the sample sizes make significance at
// alpha impossible, so a "~" would mean nothing.
func checkSamples(o *Outcome, ix *index, alpha float64) {
	need := MinSamples(alpha)
	short, judged := 0, 0
	for _, p := range ix.pairs {
		if p.base == nil || p.cur == nil {
			continue
		}
		judged++
		if p.table.Assumption == "exact" {
			// An exact unit is summarised by one value; if its values
			// vary, that value hides the rest.
			if varies(p.base.Values) || varies(p.cur.Values) {
				short++
				ix.unsure[p.subject()] = true
				b, c := p.base.Values, p.cur.Values
				sc := benchunit.CommonScale([]float64{b[0], b[len(b)-1], c[0], c[len(c)-1]}, benchunit.ClassOf(p.table.Unit))
				o.add(Inconclusive, "samples", p.subject(),
					"declared assume=exact but the values vary (baseline %s..%s, current %s..%s)",
					sc.Format(b[0]), sc.Format(b[len(b)-1]), sc.Format(c[0]), sc.Format(c[len(c)-1]))
			}
			continue
		}
		n1, n2 := len(p.base.Values), len(p.cur.Values)
		if minP := MinAttainableP(n1, n2); minP > alpha {
			short++
			ix.unsure[p.subject()] = true
			o.add(Inconclusive, "samples", p.subject(),
				"n=%d+%d: smallest attainable Mann-Whitney p=%.4g > alpha %v; need >= %d samples per side",
				n1, n2, minP, alpha, need)
		}
	}
	switch {
	case judged == 0:
		o.note("samples", "all", "not evaluated: no benchmark is present on both sides")
	case short == 0:
		o.add(Pass, "samples", "all", "every benchmark can reach alpha %v (>= %d samples per side suffice)", alpha, need)
	}
}

// varies reports whether the sorted values xs are not all equal.
func varies(xs []float64) bool { return len(xs) > 0 && xs[0] != xs[len(xs)-1] }

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
			sc := benchunit.CommonScale([]float64{pr.base.Center, pr.cur.Center}, benchunit.ClassOf(pr.table.Unit))
			o.note("change", pr.subject(), "significantly worse, %s (median %s -> %s, p=%.3g); the geomean, limit and trend rules judge it",
				pr.cur.Delta, sc.Format(pr.base.Center), sc.Format(pr.cur.Center), pr.cur.P)
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
	// The headline is the geomean of the medians the table shows; the rule
	// counts only the significant part of it.
	detail := fmt.Sprintf("medians %+.2f%% over %d benchmarks (the table's geomean); counting only changes significant at alpha %v: %+.2f%% (%d worse), threshold %+.2f%%",
		(gAll-1)*100, len(all), p.Alpha, (gSig-1)*100, worse, p.Geomean.ThresholdPct)
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

// checkUnitMeta fails closed on unit metadata (Unit X better=… assume=…
// lines) that would decide the verdict from the input's word instead of
// evidence: the two sides declaring different values for one unit, the
// current side alone declaring a direction, or an input reversing the
// built-in direction of a unit the gate knows (a benchmark can print such
// a line). The policy's units: is the place to override a direction.
func checkUnitMeta(o *Outcome, base, cur benchfmt.UnitMetadataMap, p Policy) {
	keys := map[benchfmt.UnitMetadataKey]bool{}
	for _, m := range []benchfmt.UnitMetadataMap{base, cur} {
		for k := range m {
			keys[k] = true
		}
	}
	sorted := make([]benchfmt.UnitMetadataKey, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Slice(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		return a.Unit < b.Unit || (a.Unit == b.Unit && a.Key < b.Key)
	})
	for _, k := range sorted {
		b, c := base[k], cur[k]
		if b != nil && c != nil && b.Value != c.Value {
			o.taint("the inputs' unit declarations contradict")
			o.add(Inconclusive, "units", k.Unit+" "+k.Key, "baseline says %s, current says %s", b.Value, c.Value)
			continue
		}
		if k.Key != "better" || p.declares(k.Unit) {
			continue
		}
		if b == nil && stats.Direction(k.Unit, nil) == stats.Unknown {
			// The side under test would decide which way is worse.
			o.taint("the inputs' unit declarations contradict")
			o.add(Inconclusive, "units", k.Unit, "current input alone declares %s better=%s; declare it under units: in the policy",
				unitName(c), c.Value)
			continue
		}
		for _, sd := range []struct {
			side string
			m    *benchfmt.UnitMetadata
		}{{"baseline", b}, {"current", c}} {
			side, m := sd.side, sd.m
			if m == nil {
				continue
			}
			builtin := stats.Direction(k.Unit, nil)
			declared := stats.Direction(k.Unit, benchfmt.UnitMetadataMap{k: m})
			if builtin != stats.Unknown && declared != builtin {
				o.taint("the inputs' unit declarations contradict")
				o.add(Inconclusive, "units", k.Unit, "%s input declares %s better=%s against its built-in direction; declare it under units: in the policy if that is meant",
					side, unitName(m), m.Value)
			}
		}
	}
}

// taint marks the evidence as unable to make a regression, keeping the
// first reason.
func (o *Outcome) taint(why string) {
	if o.tainted == "" {
		o.tainted = why
	}
}

func unitName(m *benchfmt.UnitMetadata) string {
	if m.OrigUnit != "" {
		return m.OrigUnit
	}
	return m.Unit
}
