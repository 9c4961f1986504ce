package quantile

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/sagebench/sagebench/internal/result"
)

// Estimate is a q-quantile of a sample with its size, its failures
// (+∞ values: requests that never answered) and its distribution-free
// interval.
type Estimate struct {
	Q      float64
	N      int // values, failures included
	Failed int // of which +∞
	// Value is the nearest-rank quantile: +Inf when it falls on a failure,
	// NaN for an empty sample.
	Value float64
	// Lo and Hi bound the true quantile at Coverage (two-sided
	// order-statistic interval); −Inf / +Inf when that side is open or
	// falls on failures.
	Lo, Hi   float64
	Coverage float64
	// Max is the largest finite value (NaN: none).
	Max float64
	// Beyond: fewer than 1/(1−Q) values (see the package doc); LowerBound
	// is then the one-sided lower confidence bound at LowerCoverage.
	Beyond        bool
	LowerBound    float64
	LowerCoverage float64
}

// OfSample estimates the q-quantile of xs at confidence conf; a +Inf or NaN
// value is a failure (+∞). xs is not modified.
func OfSample(xs []float64, q, conf float64) Estimate {
	s := make([]float64, len(xs))
	e := Estimate{Q: q, N: len(xs), Value: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1), Max: math.NaN()}
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 1) {
			x = math.Inf(1)
			e.Failed++
		} else if math.IsNaN(e.Max) || x > e.Max {
			e.Max = x
		}
		s[i] = x
	}
	if len(s) == 0 {
		e.Coverage = 1
		return e
	}
	slices.Sort(s)
	n := len(s)
	e.Value = s[Rank(n, q)-1]
	lo, hi, cov := Ranks(n, q, conf)
	if lo >= 1 {
		e.Lo = s[lo-1]
	}
	if hi <= n {
		e.Hi = s[hi-1]
	}
	e.Coverage = cov
	e.Beyond = Beyond(n, q)
	l, lcov := LowerRank(n, q, conf)
	e.LowerBound, e.LowerCoverage = math.Inf(-1), lcov
	if l >= 1 {
		e.LowerBound = s[l-1]
	}
	return e
}

// Metric is e as a metric of d (a latency or other non-negative
// quantity), never claiming more than the sample holds:
//   - no value: not measurable (why);
//   - every value failed, or so many that even the interval's low end is
//     a failure: never ("the quantile is +∞");
//   - the quantile falls on failures: a bound [Lo, ∞);
//   - the rank is beyond the sample: a bound [LowerBound, ∞), "max of n";
//   - otherwise measured, with its interval, N and coverage.
func (e Estimate) Metric(d result.Def, why string) result.Metric {
	dom, _ := result.DomainOf(d.Unit)
	clamp := func(v float64) float64 { return math.Max(v, dom.Lo) }
	pq := label(e.Q)
	switch {
	case e.N == 0:
		return d.NotMeasurable(why)
	case e.Failed == e.N:
		return never(d, e.N, fmt.Sprintf("every request of %d failed: the %s is +∞", e.N, pq))
	case math.IsInf(e.Value, 1) && math.IsInf(e.Lo, 1):
		return never(d, e.N, fmt.Sprintf("%d of %d requests failed, more than the %s allows even at the interval's low end: the %s is +∞",
			e.Failed, e.N, result.FormatValue(1-e.Q, result.Fraction), pq))
	case math.IsInf(e.Value, 1):
		m := d.Within(clamp(e.Lo), math.Inf(1), e.N, fmt.Sprintf("%d of %d requests failed, more than the %s the %s allows (failures count as +∞)",
			e.Failed, e.N, result.FormatValue(1-e.Q, result.Fraction), pq))
		return m.WithCoverage(e.Coverage)
	case e.Beyond:
		m := d.Within(clamp(e.LowerBound), math.Inf(1), e.N, fmt.Sprintf("max of %d is %s; a %s needs ≥ %d values, so only its lower bound is known",
			e.N, result.FormatValue(e.Max, d.Unit), pq, Needed(e.Q)))
		return m.WithCoverage(e.LowerCoverage)
	}
	m := d.Measure(e.Value, e.N, why).WithInterval(clamp(e.Lo), e.Hi).WithCoverage(e.Coverage)
	if e.Failed > 0 {
		m = m.WithReason(fmt.Sprintf("%d of %d failed, counted as +∞", e.Failed, e.N))
	}
	return m
}

// label is "p99", "p50", "p99.9".
func label(q float64) string {
	return "p" + strconv.FormatFloat(math.Round(q*1e4)/100, 'f', -1, 64)
}

func never(d result.Def, n int, why string) result.Metric {
	m := d.Never(why)
	m.N = n
	return m
}
