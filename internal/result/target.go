package result

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Targets hold a Q's metrics to bounds: metric name → bound. A metric's
// direction says which side passes: lower is better → value ≤ bound,
// higher is better → value ≥ bound. (Config key qN.target.)
type Targets map[string]float64

// Verdict is the judgement of one target.
type Verdict struct {
	Metric string  `json:"metric"`
	Op     string  `json:"op"` // "<=" or ">="
	Bound  float64 `json:"bound"`
	Met    bool    `json:"met"`
	Reason string  `json:"reason"`
}

// Validate reports a target that names no metric of defs or whose bound
// is not finite or outside the metric's domain; key is the config key of
// the targets (e.g. "q5.target").
func (t Targets) Validate(key string, defs []Def) error {
	for _, name := range t.names() {
		i := slices.IndexFunc(defs, func(d Def) bool { return d.Name == name })
		if i < 0 {
			known := make([]string, len(defs))
			for j, d := range defs {
				known[j] = d.Name
			}
			return fmt.Errorf("%s.%s: no such metric; targets can be set on %s", key, name, strings.Join(known, ", "))
		}
		dom, _ := DomainOf(defs[i].Unit)
		if b := t[name]; !dom.Contains(b) {
			return fmt.Errorf("%s.%s: %v is outside the metric's domain %s (%s)", key, name, b, dom, defs[i].Unit)
		}
	}
	return nil
}

func (t Targets) names() []string {
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Judge returns the verdict of each target on r, in name order. The
// judgement fails closed: a metric that is not measurable, or missing,
// misses its target; a bound passes only when its whole interval does;
// a never metric is a time that did not arrive within the run and counts
// as +∞ (never recovered misses "recovery ≤ 10 s"; never violated passes
// "time to violation ≥ 60 s").
func Judge(r Result, t Targets) []Verdict {
	var out []Verdict
	for _, name := range t.names() {
		m, ok := r.Metric(name)
		v := Verdict{Metric: name, Bound: t[name], Op: "<="}
		if ok && m.Direction == Higher {
			v.Op = ">="
		}
		switch {
		case !ok:
			v.Reason = "the run has no metric " + name
		case m.State == NotMeasurable:
			v.Reason = "not measurable, so not verified: " + m.Reason
		default:
			lo, hi := span(m)
			worst := hi
			if m.Direction == Higher {
				worst = lo
			}
			v.Met = (v.Op == "<=" && worst <= v.Bound) || (v.Op == ">=" && worst >= v.Bound)
			v.Reason = fmt.Sprintf("%s %s, target %s %s", name, Format(m), v.Op, FormatValue(v.Bound, m.Unit))
		}
		out = append(out, v)
	}
	return out
}

// span is the range m's value may be in: its value, its bracket, or
// +∞ for never.
func span(m Metric) (lo, hi float64) {
	switch m.State {
	case Never:
		return math.Inf(1), math.Inf(1)
	case Bound:
		return m.Interval[0], m.Interval[1]
	}
	return m.Value, m.Value
}
