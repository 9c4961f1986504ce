package gate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sagebench/sagebench/internal/benchset"
	"github.com/sagebench/sagebench/internal/stats"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"
)

// Verdict is the decision of the gate.
type Verdict int

// Verdicts, from best to the one that needs a human.
const (
	Pass Verdict = iota
	Inconclusive
	Regression
)

func (v Verdict) String() string {
	switch v {
	case Pass:
		return "pass"
	case Regression:
		return "regression"
	}
	return "inconclusive"
}

// Finding is one rule's conclusion about one subject, with its numbers.
type Finding struct {
	Verdict Verdict `json:"-"`
	Note    bool    `json:"note,omitempty"` // information only, decides nothing
	Rule    string  `json:"rule"`
	Subject string  `json:"subject"`
	Detail  string  `json:"detail"`
}

// String renders the finding as one verdict line.
func (f Finding) String() string {
	v := strings.ToUpper(f.Verdict.String())
	if f.Note {
		v = "NOTE"
	}
	return fmt.Sprintf("%-12s %-12s %s: %s", v, f.Rule, f.Subject, f.Detail)
}

// Outcome is the verdict, every finding behind it and the comparison.
type Outcome struct {
	Verdict  Verdict
	Findings []Finding
	Report   *stats.Report // nil when the inputs could not be compared

	// tainted says why the evidence cannot make a regression (a run on
	// either side invalid or incomplete, unit declarations that
	// contradict); "" when it can. Such evidence is inconclusive at worst.
	tainted string
}

func (o *Outcome) add(v Verdict, rule, subject, format string, args ...any) {
	o.Findings = append(o.Findings, Finding{Verdict: v, Rule: rule, Subject: subject, Detail: fmt.Sprintf(format, args...)})
	if v == Regression || (v == Inconclusive && o.Verdict == Pass) {
		o.Verdict = v
	}
}

// note records a finding that decides nothing: a rule that evaluated
// nothing, or information beside the verdict.
func (o *Outcome) note(rule, subject, format string, args ...any) {
	o.Findings = append(o.Findings, Finding{Verdict: Pass, Note: true, Rule: rule, Subject: subject, Detail: fmt.Sprintf(format, args...)})
}

// finish settles the verdict: tainted evidence is never a regression, and
// an outcome no rule decided is inconclusive.
func (o *Outcome) finish() {
	if o.tainted != "" && o.Verdict == Regression {
		for i, f := range o.Findings {
			if f.Verdict == Regression {
				o.Findings[i].Verdict = Inconclusive
				o.Findings[i].Detail = "would be a regression, but " + o.tainted + ": " + f.Detail
			}
		}
		o.Verdict = Inconclusive
	}
	for _, f := range o.Findings {
		if !f.Note {
			return
		}
	}
	o.add(Inconclusive, "evidence", "inputs", "no rule had anything to check")
}

// ErrSameLabel is returned when base and current carry the same label, so
// their results would fall into one column.
var ErrSameLabel = errors.New("base and current must have different labels")

// Evaluate applies p to base and current. A nil set stands for a missing
// input: a missing baseline leaves the absolute rules (limits, expect) to
// judge current, skips the trend rule as trend.missing_baseline says and
// keeps the geomean rule fail-closed. The error is for misuse only (an
// invalid policy, equal labels); missing or bad evidence is an
// Inconclusive outcome, never an error.
func Evaluate(base, cur *benchset.Set, p Policy) (*Outcome, error) {
	if base != nil && cur != nil && base.Label == cur.Label {
		return nil, ErrSameLabel
	}
	return evaluate(base, cur, p, false)
}

// EvaluateCurrent applies the absolute rules of p (limits and expected
// benchmarks) to cur alone, as a repository's first change must be gated
// before any baseline exists. The relative rules are not evaluated: the
// geomean rule is a note and the trend rule follows
// trend.missing_baseline. A policy with no absolute rule is inconclusive.
func EvaluateCurrent(cur *benchset.Set, p Policy) (*Outcome, error) {
	return evaluate(nil, cur, p, true)
}

func evaluate(base, cur *benchset.Set, p Policy, alone bool) (*Outcome, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	o := &Outcome{}
	baseOK, curOK := checkInputs(o, base, cur, alone)
	if curOK {
		if !baseOK {
			base = nil
		}
		judge(o, base, cur, p, alone)
	}
	o.finish()
	return o, nil
}

// judge runs every rule past the input rules; base is nil when there is
// no baseline to compare with.
func judge(o *Outcome, base, cur *benchset.Set, p Policy, alone bool) {
	sets, baseLabel := []*benchset.Set{cur}, ""
	if base != nil {
		sets, baseLabel = []*benchset.Set{base, cur}, base.Label
		checkUnitMeta(o, base.Units, cur.Units, p)
	}
	results, units := benchset.Combine(sets...)
	rep, err := stats.Compare(results, units, stats.Options{Alpha: p.Alpha, Confidence: p.Confidence, Ignore: p.Ignore})
	if err != nil {
		o.add(Inconclusive, "compare", "inputs", "%v", err)
		return
	}
	o.Report = rep
	ix := newIndex(rep, baseLabel, cur.Label)
	if base != nil {
		checkCoverage(o, ix)
	}
	checkExpect(o, ix, p.Expect, base != nil)
	if base != nil {
		checkSamples(o, ix, p.Alpha)
		checkDirections(o, ix, units, p)
		checkGeomean(o, ix, units, p)
	} else if alone {
		o.note("geomean", strings.Join(p.Geomean.Units, ","), "not evaluated: one input, so only the absolute rules (limits, expect) judge it")
	} else {
		o.add(Inconclusive, "geomean", strings.Join(p.Geomean.Units, ","), "no baseline: a relative change cannot be judged (the geomean rule stays fail-closed)")
	}
	ev := evidence{ix: ix, base: base, cur: cur}
	checkLimits(o, ev, p.Limits)
	switch {
	case p.Trend.Disabled:
	case base == nil:
		missingBaseline(o, p.Trend)
	default:
		checkTrend(o, ev, p.Trend)
	}
	if alone && len(p.Limits) == 0 && len(p.Expect) == 0 {
		o.add(Inconclusive, "evidence", "policy", "one input and no limits or expect in the policy: nothing absolute to check; add limits: or --expect, or pass BASE")
	}
}

// checkInputs applies the input rules and reports whether each side holds
// results to judge. alone means no baseline was asked for.
func checkInputs(o *Outcome, base, cur *benchset.Set, alone bool) (baseOK, curOK bool) {
	baseOK, curOK = true, true
	for _, side := range []struct {
		name string
		s    *benchset.Set
		ok   *bool
	}{{"baseline", base, &baseOK}, {"current", cur, &curOK}} {
		switch {
		case side.s == nil && alone && side.name == "baseline":
			*side.ok = false
			continue
		case side.s == nil:
			o.add(Inconclusive, "input", side.name, "missing: nothing to compare against")
			*side.ok = false
			continue
		case len(side.s.Results) == 0:
			o.add(Inconclusive, "input", side.name, "%s holds no benchmark results (empty or unreadable)", side.s.Source)
			*side.ok = false
		}
		for _, pr := range side.s.Problems {
			o.add(Inconclusive, "input", side.name, "%s", pr)
		}
		for _, r := range side.s.Runs {
			checkRun(o, side.name, r)
		}
	}
	if base != nil && cur != nil {
		checkPairing(o, base, cur)
	}
	var sides []*benchset.Set
	for _, s := range []*benchset.Set{base, cur} {
		if s != nil {
			sides = append(sides, s)
		}
	}
	if err := benchset.CheckWorkloads(sides...); err != nil {
		o.add(Inconclusive, "input", "workload", "%v", err)
	}
	return baseOK, curOK
}

// checkPairing fails closed on a run on both sides and on sides of
// different kinds.
func checkPairing(o *Outcome, base, cur *benchset.Set) {
	inBase := map[string]bool{}
	for _, r := range base.Runs {
		inBase[r.ID] = true
	}
	for _, r := range cur.Runs {
		if inBase[r.ID] {
			o.add(Inconclusive, "input", "runs", "run %s is on both sides: a run compared with itself is no evidence", r.ID)
		}
	}
	if (len(base.Runs) > 0) != (len(cur.Runs) > 0) {
		o.add(Inconclusive, "input", "kinds", "baseline is %s, current is %s: run validity is known on one side only; compare run directories with run directories",
			inputKind(base), inputKind(cur))
	}
}

func inputKind(s *benchset.Set) string {
	if len(s.Runs) > 0 {
		return "run directories"
	}
	return "benchmark results without run.json"
}

func checkRun(o *Outcome, side string, r benchset.Run) {
	if !r.Complete || !r.Valid || len(r.Reasons) > 0 {
		o.taint("a run on either side is invalid or incomplete")
	}
	if !r.Complete {
		o.add(Inconclusive, "run-valid", side, "run %s (%s) is incomplete (interrupted)", r.ID, r.Dir)
	}
	if r.Valid && len(r.Reasons) > 0 {
		// The runner sets valid exactly when there is no reason: an
		// edited or foreign run.json.
		o.add(Inconclusive, "run-valid", side, "run %s (%s) is marked valid but lists reasons it is not: %s", r.ID, r.Dir, strings.Join(r.Reasons, "; "))
	}
	if !r.Valid {
		reasons := strings.Join(r.Reasons, "; ")
		if reasons == "" {
			reasons = "no reason given"
		}
		o.add(Inconclusive, "run-valid", side, "run %s (%s) is marked invalid: %s", r.ID, r.Dir, reasons)
	}
}

// pair is one benchmark and unit with its base and current cells.
type pair struct {
	table *stats.Table
	row   *stats.Row
	base  *stats.Cell
	cur   *stats.Cell
}

func (p pair) subject() string { return p.row.Name + " " + p.table.Unit }

// index gives the rules the comparison by benchmark and unit.
type index struct {
	pairs   []pair
	byName  map[string]map[string]pair // name → tidied unit → pair
	baseCol string
	curCol  string
	// unsure holds the subjects whose samples cannot reach alpha or whose
	// exact values vary: no change in them is evidence.
	unsure map[string]bool
}

func newIndex(rep *stats.Report, baseLabel, curLabel string) *index {
	ix := &index{byName: map[string]map[string]pair{}, baseCol: baseLabel, curCol: curLabel, unsure: map[string]bool{}}
	for _, t := range rep.Tables {
		bi, ci := colIndex(t, baseLabel), colIndex(t, curLabel)
		for _, r := range t.Rows {
			pr := pair{table: t, row: r}
			if bi >= 0 {
				pr.base = r.Cells[bi]
			}
			if ci >= 0 {
				pr.cur = r.Cells[ci]
			}
			ix.pairs = append(ix.pairs, pr)
			if ix.byName[r.Name] == nil {
				ix.byName[r.Name] = map[string]pair{}
			}
			ix.byName[r.Name][t.Unit] = pr
		}
	}
	return ix
}

func colIndex(t *stats.Table, label string) int {
	for i, c := range t.Columns {
		if c == label {
			return i
		}
	}
	return -1
}

// declares reports whether the policy's units: names unit (in any form
// that tidies to it).
func (p Policy) declares(unit string) bool {
	for u := range p.Units {
		if _, tu := benchunit.Tidy(1, u); tu == unit || u == unit {
			return true
		}
	}
	return false
}

// direction of unit: the policy's declaration, else the input's, else the
// built-in table.
func direction(unit string, meta benchfmt.UnitMetadataMap, p Policy) int {
	for u, d := range p.Units {
		if _, tu := benchunit.Tidy(1, u); tu != unit && u != unit {
			continue
		}
		if d == HigherIsBetter {
			return stats.HigherIsBetter
		}
		return stats.LowerIsBetter
	}
	return stats.Direction(unit, meta)
}
