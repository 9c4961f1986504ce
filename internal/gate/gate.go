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
}

func (o *Outcome) add(v Verdict, rule, subject, format string, args ...any) {
	o.Findings = append(o.Findings, Finding{Verdict: v, Rule: rule, Subject: subject, Detail: fmt.Sprintf(format, args...)})
	if v == Regression || (v == Inconclusive && o.Verdict == Pass) {
		o.Verdict = v
	}
}

// ErrSameLabel is returned when base and current carry the same label, so
// their results would fall into one column.
var ErrSameLabel = errors.New("base and current must have different labels")

// Evaluate applies p to base and current. A nil set stands for a missing
// input. The error is for misuse only (an invalid policy, equal labels);
// missing or bad evidence is an Inconclusive outcome, never an error.
func Evaluate(base, cur *benchset.Set, p Policy) (*Outcome, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if base != nil && cur != nil && base.Label == cur.Label {
		return nil, ErrSameLabel
	}
	o := &Outcome{}
	if !checkInputs(o, base, cur) {
		return o, nil
	}
	checkUnitMeta(o, base.Units, cur.Units, p)
	results, units := benchset.Combine(base, cur)
	rep, err := stats.Compare(results, units, stats.Options{Alpha: p.Alpha, Confidence: p.Confidence, Ignore: p.Ignore})
	if err != nil {
		o.add(Inconclusive, "compare", "inputs", "%v", err)
		return o, nil
	}
	o.Report = rep
	ix := newIndex(rep, base.Label, cur.Label)
	checkCoverage(o, ix)
	checkExpect(o, ix, p.Expect)
	checkSamples(o, ix, p.Alpha)
	checkDirections(o, ix, units, p)
	checkGeomean(o, ix, units, p)
	ev := evidence{ix: ix, base: base, cur: cur}
	checkLimits(o, ev, p.Limits)
	if !p.Trend.Disabled {
		checkTrend(o, ev, p.Trend)
	}
	if o.Verdict == Pass && len(o.Findings) == 0 {
		o.add(Inconclusive, "evidence", "inputs", "no rule had anything to check")
	}
	return o, nil
}

// checkInputs applies the input rules and reports whether both sides hold
// results to compare.
func checkInputs(o *Outcome, base, cur *benchset.Set) bool {
	ok := true
	for _, side := range []struct {
		name string
		s    *benchset.Set
	}{{"baseline", base}, {"current", cur}} {
		switch {
		case side.s == nil:
			o.add(Inconclusive, "input", side.name, "missing: nothing to compare against")
			ok = false
			continue
		case len(side.s.Results) == 0:
			o.add(Inconclusive, "input", side.name, "%s holds no benchmark results (empty or unreadable)", side.s.Source)
			ok = false
		}
		for _, pr := range side.s.Problems {
			o.add(Inconclusive, "input", side.name, "%s", pr)
		}
		for _, r := range side.s.Runs {
			checkRun(o, side.name, r)
		}
	}
	if base != nil && cur != nil {
		inBase := map[string]bool{}
		for _, r := range base.Runs {
			inBase[r.ID] = true
		}
		for _, r := range cur.Runs {
			if inBase[r.ID] {
				o.add(Inconclusive, "input", "runs", "run %s is on both sides: a run compared with itself is no evidence", r.ID)
			}
		}
	}
	if base != nil && cur != nil && (len(base.Runs) > 0) != (len(cur.Runs) > 0) {
		o.add(Inconclusive, "input", "kinds", "baseline is %s, current is %s: run validity is known on one side only; compare run directories with run directories",
			inputKind(base), inputKind(cur))
	}
	return ok
}

func inputKind(s *benchset.Set) string {
	if len(s.Runs) > 0 {
		return "run directories"
	}
	return "benchmark results without run.json"
}

func checkRun(o *Outcome, side string, r benchset.Run) {
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
}

func newIndex(rep *stats.Report, baseLabel, curLabel string) *index {
	ix := &index{byName: map[string]map[string]pair{}, baseCol: baseLabel, curCol: curLabel}
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
