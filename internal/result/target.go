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

// Outcome is a target's judgement, in the gate's vocabulary.
type Outcome string

// The three outcomes of a target.
const (
	// Met: the metric's whole interval (or bracket) clears the target.
	Met Outcome = "met"
	// Missed: the whole interval is on the wrong side, or the metric is
	// missing or not measurable (fails closed): exit 6.
	Missed Outcome = "missed"
	// Inconclusive: the interval straddles the target; the reason says
	// what sample would decide: exit 4.
	Inconclusive Outcome = "inconclusive"
)

// Verdict is the judgement of one target.
type Verdict struct {
	Metric  string  `json:"metric"`
	Op      string  `json:"op"` // "<=" or ">="
	Bound   float64 `json:"bound"`
	Met     bool    `json:"met"` // Outcome == Met
	Outcome Outcome `json:"outcome"`
	Reason  string  `json:"reason"`
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

// Judge returns the verdict of each target on r, in name order, judged
// on the metric's interval, not its point: a measured metric with an
// interval is met when the whole interval clears the bound, missed when
// the whole interval is on the wrong side and inconclusive when it
// straddles the bound; a measured metric without an interval is judged
// on its value; a bound on its bracket; a never metric is a time that
// did not arrive within the run and counts as +∞ (never recovered
// misses "recovery ≤ 10 s"; never violated meets "time to violation ≥
// 60 s"). The judgement fails closed: a metric that is missing or not
// measurable misses its target.
func Judge(r Result, t Targets) []Verdict {
	var out []Verdict
	for _, name := range t.names() {
		m, ok := r.Metric(name)
		v := Verdict{Metric: name, Bound: t[name], Op: "<=", Outcome: Missed}
		if ok && m.Direction == Higher {
			v.Op = ">="
		}
		switch {
		case !ok:
			v.Reason = "the run has no metric " + name
		case m.State == NotMeasurable:
			v.Reason = "not measurable, so not verified: " + m.Reason
		default:
			v.Outcome = judge(m, v.Op, v.Bound)
			v.Reason = fmt.Sprintf("%s %s, target %s %s", name, Format(m), v.Op, FormatValue(v.Bound, m.Unit))
			if v.Outcome == Inconclusive {
				v.Reason += ": inconclusive, the interval straddles the target; " + decides(m, v.Bound)
			}
		}
		v.Met = v.Outcome == Met
		out = append(out, v)
	}
	return out
}

// judge places m's span against "op bound".
func judge(m Metric, op string, bound float64) Outcome {
	lo, hi := span(m)
	good, bad := hi <= bound, lo > bound
	if op == ">=" {
		good, bad = lo >= bound, hi < bound
	}
	switch {
	case good:
		return Met
	case bad:
		return Missed
	}
	return Inconclusive
}

// decides says what sample would decide a straddling target: an
// interval's half-width shrinks as 1/√n, so n·(half-width ÷ distance)²
// samples would put it on one side, if the value stayed where it is.
func decides(m Metric, bound float64) string {
	lo, hi := span(m)
	if m.State != Measured || m.N <= 0 || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return "a larger sample would decide it"
	}
	d := math.Abs(m.Value - bound)
	if d == 0 {
		return "the value sits on the target: no sample size decides it"
	}
	h := hi - m.Value // the side of the interval that faces the bound
	if bound < m.Value {
		h = m.Value - lo
	}
	need := int(math.Ceil(float64(m.N)*(h/d)*(h/d) - 1e-9))
	return fmt.Sprintf("about %d samples instead of %d would decide it, if the value held", need, m.N)
}

// span is the range m's value may be in: its interval, its value, its
// bracket, or +∞ for never.
func span(m Metric) (lo, hi float64) {
	switch m.State {
	case Never:
		return math.Inf(1), math.Inf(1)
	case Bound:
		return m.Interval[0], m.Interval[1]
	}
	if iv := m.Interval; iv != nil {
		return math.Min(iv[0], m.Value), math.Max(iv[1], m.Value)
	}
	return m.Value, m.Value
}
