package aggregate

import (
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

// Interval methods: Student's t interval of the mean, and the same
// intersected with the metric's domain (the true mean lies in the
// domain, so the intersection keeps the interval's coverage).
const (
	MethodT       = "student-t"
	MethodTDomain = "student-t within the domain"
)

// Estimate is one metric over repetitions.
type Estimate struct {
	Name      string           `json:"name"`
	Unit      string           `json:"unit"`
	Direction result.Direction `json:"direction"`
	// State is measured when at least one valid repetition measured the
	// metric; otherwise never (every valid one said never), bound (every
	// valid one bracketed it; Interval is the hull of the brackets) or
	// not_measurable.
	State    result.State `json:"state"`
	N        int          `json:"n"` // repetitions in the mean
	Mean     *float64     `json:"mean"`
	Median   *float64     `json:"median"`
	Stddev   *float64     `json:"stddev"`   // sample standard deviation, from 2 values on
	Interval *[2]float64  `json:"interval"` // of the mean at the confidence level, from 2 values on
	Method   string       `json:"interval_method,omitempty"`
	Values   []float64    `json:"values"`
	Excluded Excluded     `json:"excluded"`
	Reason   string       `json:"reason,omitempty"`
}

// Metric returns e as a result metric: the mean with its interval, or
// e's state.
func (e Estimate) Metric() result.Metric {
	d := result.Def{Name: e.Name, Unit: e.Unit, Direction: e.Direction}
	switch e.State {
	case result.Measured:
		m := d.Measure(*e.Mean, e.N, "")
		m.Interval, m.Reason = e.Interval, e.Excluded.String()
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
	var xs []float64
	var never, bound []result.Metric
	for _, s := range samples {
		m := s.Metric
		e.Name, e.Unit, e.Direction = m.Name, m.Unit, m.Direction
		switch {
		case !s.Valid:
			e.Excluded.Invalid++
		case m.State == result.Measured:
			xs = append(xs, m.Value)
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
	e.Values, e.N = xs, len(xs)
	if len(xs) == 0 {
		e.setState(never, bound, len(samples))
		return e
	}
	e.State = result.Measured
	e.measure(xs, conf)
	return e
}

// setState says what an estimate without a measured value is.
func (e *Estimate) setState(never, bound []result.Metric, reps int) {
	valid := reps - e.Excluded.Invalid
	switch {
	case valid > 0 && len(never) == valid:
		e.State, e.Reason = result.Never, never[0].Reason
	case valid > 0 && len(bound) == valid:
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, b := range bound {
			lo, hi = math.Min(lo, b.Interval[0]), math.Max(hi, b.Interval[1])
		}
		e.State, e.Interval, e.Reason = result.Bound, &[2]float64{lo, hi}, "the hull of every repetition's bracket"
	default:
		e.State = result.NotMeasurable
		e.Reason = "no valid repetition measured it"
		if s := e.Excluded.String(); s != "" {
			e.Reason += " (" + s + ")"
		}
	}
}

// measure fills the mean, median, deviation and interval of xs.
func (e *Estimate) measure(xs []float64, conf float64) {
	n := float64(len(xs))
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= n
	sorted := slices.Sorted(slices.Values(xs))
	med := sorted[len(sorted)/2]
	if len(sorted)%2 == 0 {
		med = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	}
	e.Mean, e.Median = &mean, &med
	if len(xs) < 2 {
		return
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / (n - 1))
	e.Stddev = &sd
	h := stats.InvCDF(stats.TDist{V: n - 1})(1-(1-conf)/2) * sd / math.Sqrt(n)
	lo, hi := mean-h, mean+h
	e.Method = MethodT
	if dom, ok := result.DomainOf(e.Unit); ok && (lo < dom.Lo || hi > dom.Hi) {
		lo, hi = dom.Clamp(lo), dom.Clamp(hi)
		e.Method = MethodTDomain
	}
	e.Interval = &[2]float64{lo, hi}
}

// String is the estimate for a sentence: the mean with its interval, or
// its state.
func (e Estimate) String() string { return result.Format(e.Metric()) }
