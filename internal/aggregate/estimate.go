package aggregate

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/aclements/go-moremath/stats"

	"github.com/sagebench/sagebench/internal/result"
)

// Sample is one repetition's value of a metric.
type Sample struct {
	Metric result.Metric
	// Valid is the repetition's validity: an invalid repetition's value
	// never enters an estimate.
	Valid bool
}

// Excluded counts the repetitions left out of an estimate, by why.
type Excluded struct {
	Invalid       int `json:"invalid"`
	Bound         int `json:"bound"`
	Never         int `json:"never"`
	NotMeasurable int `json:"not_measurable"`
}

// Total is the number of repetitions left out.
func (x Excluded) Total() int { return x.Invalid + x.Bound + x.Never + x.NotMeasurable }

// String lists the exclusions, e.g. "1 never, 1 invalid excluded"; empty
// when none.
func (x Excluded) String() string {
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{x.Never, "never"}, {x.Bound, "only bracketed"}, {x.NotMeasurable, "not measurable"}, {x.Invalid, "invalid"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ") + " excluded"
}

// Interval methods (docs/records.md states each with its assumption).
const (
	// MethodT: Student's t interval of the mean of a signed quantity.
	MethodT = "student-t"
	// MethodTDomain: the same intersected with the metric's domain (a
	// positive quantity with a zero among its values).
	MethodTDomain = "student-t within the domain"
	// MethodLogT: Student's t on the logarithms of a positive quantity,
	// back-transformed: an interval of the geometric mean (the point),
	// positive and right-skewed like latencies are.
	MethodLogT = "student-t on the log scale (geometric mean)"
	// MethodLogRatioT: a signed relative change in % as a ratio
	// 1 + x/100, on the log scale: the interval stays in (−100 %, ∞).
	MethodLogRatioT = "student-t on the log ratio, in (−100 %, ∞)"
	// MethodWilson: a fraction pooled over the requests of the
	// repetitions, Wilson score interval; widened by the overdispersion
	// φ = χ²/(R−1) when the repetitions disagree more than binomial
	// sampling explains (quasi-binomial).
	MethodWilson = "pooled Wilson"
	// MethodOne: one repetition, its own interval.
	MethodOne = "the repetition's own interval"
)

// Estimate is one metric over repetitions.
type Estimate struct {
	Name      string           `json:"name"`
	Unit      string           `json:"unit"`
	Direction result.Direction `json:"direction"`
	// State is measured when every valid repetition that said something
	// measured the metric (not_measurable ones are left out); never when
	// every valid one said never; bound when the valid ones bracketed it
	// or disagree in state ("never in 2 of 3; 4.0 s in 1": Interval holds
	// every repetition's value or bracket, a never counting as +∞);
	// otherwise not_measurable.
	State result.State `json:"state"`
	N     int          `json:"n"` // repetitions measured
	// Mean is the point estimate of Method: the arithmetic mean (t), the
	// geometric mean (log scale) or the pooled proportion (Wilson).
	Mean     *float64    `json:"mean"`
	Median   *float64    `json:"median"`
	Stddev   *float64    `json:"stddev"`   // sample standard deviation, from 2 values on
	Interval *[2]float64 `json:"interval"` // of the point at the confidence level; nil when nothing supports one
	Method   string      `json:"interval_method,omitempty"`
	Values   []float64   `json:"values"`
	Excluded Excluded    `json:"excluded"`
	Reason   string      `json:"reason,omitempty"`
}

// Metric returns e as a result metric: the point with its interval, or
// e's state.
func (e Estimate) Metric() result.Metric {
	d := result.Def{Name: e.Name, Unit: e.Unit, Direction: e.Direction}
	switch e.State {
	case result.Measured:
		m := d.Measure(*e.Mean, e.N, "")
		m.Interval, m.Reason = e.Interval, e.Excluded.String()
		if e.Reason != "" {
			m.Reason = strings.TrimPrefix(m.Reason+"; "+e.Reason, "; ")
		}
		return m
	case result.Bound:
		return d.Within(e.Interval[0], e.Interval[1], e.N, e.Reason)
	case result.Never:
		return d.Never(e.Reason)
	}
	return d.NotMeasurable(e.Reason)
}

// Of estimates the metric of samples (all of one metric) at confidence
// conf (e.g. 0.95).
func Of(samples []Sample, conf float64) Estimate {
	var e Estimate
	var measured, never, bound []result.Metric
	for _, s := range samples {
		m := s.Metric
		e.Name, e.Unit, e.Direction = m.Name, m.Unit, m.Direction
		switch {
		case !s.Valid:
			e.Excluded.Invalid++
		case m.State == result.Measured:
			measured = append(measured, m)
			e.Values = append(e.Values, m.Value)
		case m.State == result.Never:
			e.Excluded.Never++
			never = append(never, m)
		case m.State == result.Bound:
			e.Excluded.Bound++
			bound = append(bound, m)
		default:
			e.Excluded.NotMeasurable++
		}
	}
	e.N = len(measured)
	switch {
	case len(measured) > 0 && len(never)+len(bound) > 0:
		e.mixed(measured, never, bound)
	case len(measured) == 0:
		e.setState(never, bound)
	default:
		e.State = result.Measured
		e.measure(measured, conf)
	}
	return e
}

// mixed makes e a bound over repetitions that disagree in state: the
// range of every value and bracket, a never counting as +∞.
func (e *Estimate) mixed(measured, never, bound []result.Metric) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, m := range measured {
		lo, hi = math.Min(lo, m.Value), math.Max(hi, m.Value)
	}
	for _, b := range bound {
		lo, hi = math.Min(lo, b.Interval[0]), math.Max(hi, b.Interval[1])
	}
	var parts []string
	if len(never) > 0 {
		hi = math.Inf(1)
		parts = append(parts, fmt.Sprintf("never in %d", len(never)))
	}
	if len(bound) > 0 {
		parts = append(parts, fmt.Sprintf("only bracketed in %d", len(bound)))
	}
	vals := make([]string, len(measured))
	for i, m := range measured {
		vals[i] = result.FormatValue(m.Value, m.Unit)
	}
	parts = append(parts, fmt.Sprintf("%s in %d", strings.Join(vals, ", "), len(measured)))
	e.State, e.Interval = result.Bound, &[2]float64{lo, hi}
	e.Reason = fmt.Sprintf("the repetitions disagree in state: %s of %d", strings.Join(parts, "; "), len(measured)+len(never)+len(bound))
}

// setState says what an estimate without a measured value is; the
// repetitions that did not measure it (not measurable) are left out, as
// records.md says.
func (e *Estimate) setState(never, bound []result.Metric) {
	switch {
	case len(never) > 0 && len(bound) > 0:
		lo := math.Inf(1)
		for _, b := range bound {
			lo = math.Min(lo, b.Interval[0])
		}
		e.State, e.Interval = result.Bound, &[2]float64{lo, math.Inf(1)}
		e.Reason = fmt.Sprintf("the repetitions disagree in state: never in %d; only bracketed in %d", len(never), len(bound))
	case len(never) > 0:
		e.State, e.Reason = result.Never, never[0].Reason
	case len(bound) > 0:
		e.brackets(bound)
	default:
		e.State = result.NotMeasurable
		e.Reason = "no valid repetition measured it"
		if s := e.Excluded.String(); s != "" {
			e.Reason += " (" + s + ")"
		}
	}
}

// brackets combines the repetitions' brackets by a rule that says what
// it claims. Each bracket claims to hold the value; if every one does,
// the value is in their intersection (with R brackets each holding it at
// coverage c, all do at ≥ 1 − R·(1 − c)), so a non-empty intersection
// is the estimate. Disjoint brackets cannot all hold it: the
// repetitions disagree beyond what each claims, and the estimate is
// their hull, which holds the value if any one bracket does, with the
// disagreement said.
func (e *Estimate) brackets(bound []result.Metric) {
	lo, hi := math.Inf(-1), math.Inf(1)
	hlo, hhi := math.Inf(1), math.Inf(-1)
	for _, b := range bound {
		lo, hi = math.Max(lo, b.Interval[0]), math.Min(hi, b.Interval[1])
		hlo, hhi = math.Min(hlo, b.Interval[0]), math.Max(hhi, b.Interval[1])
	}
	e.State = result.Bound
	if lo <= hi {
		e.Interval = &[2]float64{lo, hi}
		e.Reason = fmt.Sprintf("the intersection of %d repetitions' brackets: it holds the value if every bracket does", len(bound))
		return
	}
	e.Interval = &[2]float64{hlo, hhi}
	e.Reason = fmt.Sprintf("the %d repetitions' brackets are disjoint, so not all of them hold the value: they disagree beyond what each claims; this is their hull, which holds it if any one does", len(bound))
}

// measure fills the point, median, deviation and interval of the
// measured repetitions ms by the method their unit calls for.
func (e *Estimate) measure(ms []result.Metric, conf float64) {
	xs := e.Values
	sorted := slices.Sorted(slices.Values(xs))
	med := sorted[len(sorted)/2]
	if len(sorted)%2 == 0 {
		med = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	}
	e.Median = &med
	mean, sd := meanSD(xs)
	e.Mean = &mean
	if len(xs) >= 2 {
		e.Stddev = &sd
	}
	dom, _ := result.DomainOf(e.Unit)
	switch {
	case e.Unit == result.Fraction && allCounted(ms):
		e.pooledWilson(ms, conf)
	case len(ms) == 1:
		if iv := ms[0].Interval; iv != nil {
			e.Interval, e.Method = &[2]float64{iv[0], iv[1]}, MethodOne
		}
	case dom == result.NonNegative && sorted[0] > 0:
		e.logT(xs, ms, conf, func(x float64) float64 { return x }, func(y float64) float64 { return y }, MethodLogT)
	case e.Unit == result.Percent && sorted[0] > -100:
		e.logT(xs, ms, conf, func(x float64) float64 { return 1 + x/100 }, func(y float64) float64 { return 100 * (y - 1) }, MethodLogRatioT)
	default:
		e.plainT(mean, sd, len(xs), conf, dom)
	}
	if iv := e.Interval; iv != nil && iv[0] == iv[1] {
		e.Interval, e.Method = nil, ""
		e.Reason = "no interval: the repetitions agree and carry no interval of their own"
	}
}

func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

func tQuantile(df int, conf float64) float64 {
	return stats.InvCDF(stats.TDist{V: float64(df)})(1 - (1-conf)/2)
}

// plainT is Student's t interval of the mean, within the domain.
func (e *Estimate) plainT(mean, sd float64, n int, conf float64, dom result.Domain) {
	if n < 2 {
		return
	}
	h := tQuantile(n-1, conf) * sd / math.Sqrt(float64(n))
	lo, hi := mean-h, mean+h
	e.Method = MethodT
	if lo < dom.Lo || hi > dom.Hi {
		lo, hi = dom.Clamp(lo), dom.Clamp(hi)
		e.Method = MethodTDomain
	}
	e.Interval = &[2]float64{lo, hi}
}

// logT is Student's t on log(to(x)), back through from: the point is
// the geometric mean. Each side's half-width is never below the
// repetitions' own uncertainty on that side — the mean of their
// intervals' half-widths on the same scale over √R (R independent
// repetitions) — so repetitions that happen to agree do not make a
// zero-width interval, and one open side (a p99 of 100–366 requests,
// open above) opens that side only.
func (e *Estimate) logT(xs []float64, ms []result.Metric, conf float64, to, from func(float64) float64, method string) {
	ys := make([]float64, len(xs))
	for i, x := range xs {
		ys[i] = math.Log(to(x))
	}
	my, sy := meanSD(ys)
	h := tQuantile(len(ys)-1, conf) * sy / math.Sqrt(float64(len(ys)))
	hLo, hHi := h, h
	if wLo, wHi, ok := withinHalfWidths(ms, to); ok {
		r := math.Sqrt(float64(len(ms)))
		hLo, hHi = math.Max(h, wLo/r), math.Max(h, wHi/r)
	}
	point := from(math.Exp(my))
	e.Mean, e.Method = &point, method
	e.Interval = &[2]float64{from(math.Exp(my - hLo)), from(math.Exp(my + hHi))}
}

// withinHalfWidths are the mean half-widths of the repetitions' own
// intervals on the log scale of to, below and above each value (+∞ on a
// side a repetition leaves open or reaches 0 on); false unless every
// repetition has an interval.
func withinHalfWidths(ms []result.Metric, to func(float64) float64) (lo, hi float64, ok bool) {
	for _, m := range ms {
		iv := m.Interval
		if iv == nil {
			return 0, 0, false
		}
		v := math.Log(to(m.Value))
		lo += (v - math.Log(max(to(iv[0]), 0))) // log 0 = −∞: an open side
		hi += (math.Log(to(iv[1])) - v)
	}
	n := float64(len(ms))
	return lo / n, hi / n, true
}

// allCounted: every repetition's fraction is k successes of its N
// requests (k whole). A fraction that is not — a p-value over N rounds,
// a share of time over N requests — is not a binomial count, and pooling
// it as one would claim what it is not (three p-values of 1/3 over 2
// rounds pooled to 0.5 [0.19, 0.81]).
func allCounted(ms []result.Metric) bool {
	for _, m := range ms {
		k := m.Value * float64(m.N)
		if m.N <= 0 || math.Abs(k-math.Round(k)) > 1e-6 {
			return false // not k successes of N trials: a p-value over N rounds, a share of time
		}
	}
	return true
}

// pooledWilson pools the repetitions' successes and trials; when they
// disagree beyond binomial sampling (Pearson χ² over R−1 degrees of
// freedom above 1) the effective trials shrink by that overdispersion.
func (e *Estimate) pooledWilson(ms []result.Metric, conf float64) {
	var k, n float64
	for _, m := range ms {
		k, n = k+math.Round(m.Value*float64(m.N)), n+float64(m.N)
	}
	p := k / n
	phi := 1.0
	if len(ms) > 1 && p > 0 && p < 1 {
		chi := 0.0
		for _, m := range ms {
			ni := float64(m.N)
			d := math.Round(m.Value*ni) - ni*p
			chi += d * d / (ni * p * (1 - p))
		}
		phi = math.Max(chi/float64(len(ms)-1), 1)
	}
	lo, hi := wilson(p, n/phi, conf)
	e.Mean, e.Interval, e.Method = &p, &[2]float64{lo, hi}, MethodWilson
	if phi > 1 {
		e.Method = fmt.Sprintf("%s, widened by overdispersion φ = %.2f: the repetitions disagree", MethodWilson, phi)
	}
}

// wilson is the Wilson score interval of proportion p over n trials.
func wilson(p, n, conf float64) (lo, hi float64) {
	z := stats.NormalDist{Mu: 0, Sigma: 1}.InvCDF(1 - (1-conf)/2)
	den := 1 + z*z/n
	mid := (p + z*z/(2*n)) / den
	half := z * math.Sqrt(p*(1-p)/n+z*z/(4*n*n)) / den
	// The interval holds p exactly (rounding at 0 and 1 must not leave it
	// out).
	return math.Min(math.Max(mid-half, 0), p), math.Max(math.Min(mid+half, 1), p)
}

// String is the estimate for a sentence: the point with its interval,
// or its state.
func (e Estimate) String() string { return result.Format(e.Metric()) }

// estimateJSON writes an interval's infinite side as null (a bound
// open above: "never in 2 of 3"), as result.Metric does.
type estimateJSON struct {
	plainEstimate
	Interval *[2]*float64 `json:"interval"`
}

type plainEstimate Estimate

// MarshalJSON writes e with an open interval side as null.
func (e Estimate) MarshalJSON() ([]byte, error) {
	j := estimateJSON{plainEstimate: plainEstimate(e)}
	if iv := e.Interval; iv != nil {
		j.Interval = &[2]*float64{finite(iv[0]), finite(iv[1])}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes: a null low side is −∞,
// a null high side +∞.
func (e *Estimate) UnmarshalJSON(b []byte) error {
	var j estimateJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*e = Estimate(j.plainEstimate)
	e.Interval = nil
	if j.Interval != nil {
		iv := [2]float64{math.Inf(-1), math.Inf(1)}
		for i, p := range j.Interval {
			if p != nil {
				iv[i] = *p
			}
		}
		e.Interval = &iv
	}
	return nil
}

func finite(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}
