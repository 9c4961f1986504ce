package q3

import (
	"math"
	"slices"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
)

// share is one tenant's part of a phase, in req/s: what it offered, what
// it got done within its SLO (goodput), and its fair share.
type share struct {
	demand, goodput, fair float64
}

// fairShares splits what the pool got done within SLO in a phase (the
// tenants' goodput summed) max-min fairly over the tenants' offered
// rates: a tenant that asks less than an equal split gets what it asks,
// the rest is split among the others. A tenant's goodput ÷ its fair
// share is then one comparable quantity for every tenant — 1 when it got
// its fair part — whatever its SLO or its quota.
func (q *q3) fairShares(rs []record.Request, secs float64) map[string]share {
	out := map[string]share{}
	if secs <= 0 {
		return out
	}
	for i := range rs {
		s := out[rs[i].Tenant]
		s.demand += 1 / secs
		if rs[i].SLOMet {
			s.goodput += 1 / secs
		}
		out[rs[i].Tenant] = s
	}
	var names []string
	var demands []float64
	total := 0.0
	for name, s := range out {
		names = append(names, name)
		total += s.goodput
	}
	slices.Sort(names)
	for _, n := range names {
		demands = append(demands, out[n].demand)
	}
	for i, f := range MaxMin(total, demands) {
		s := out[names[i]]
		s.fair = f
		out[names[i]] = s
	}
	return out
}

// MaxMin shares capacity among demands max-min fairly (water filling):
// each gets min(demand, level), the level set so the shares sum to
// capacity (or to every demand, when capacity exceeds them).
func MaxMin(capacity float64, demands []float64) []float64 {
	out := make([]float64, len(demands))
	left, open := capacity, 0
	for _, d := range demands {
		if d > 0 {
			open++
		}
	}
	for open > 0 && left > 1e-12 {
		level := left / float64(open)
		progressed := false
		for i, d := range demands {
			if d <= 0 || out[i] >= d {
				continue
			}
			give := math.Min(level, d-out[i])
			out[i] += give
			left -= give
			if out[i] >= d {
				open--
				progressed = true
			}
		}
		if !progressed {
			break
		}
	}
	return out
}

// jainMetric is Jain's index over the tenants' goodput ÷ fair share in
// the contended phase; tenants that offered nothing take no part; not
// measurable when nothing was done within SLO (no share to compare).
func jainMetric(shares map[string]share) result.Metric {
	var xs []float64
	for _, s := range shares {
		if s.demand > 0 && s.fair > 0 {
			xs = append(xs, s.goodput/s.fair)
		}
	}
	if len(xs) == 0 {
		return defJain.NotMeasurable("no tenant got a request done within its SLO in the contended phase: there is nothing to share fairly")
	}
	return defJain.Measure(Jain(xs), len(xs), "")
}

// Jain is Jain's fairness index of xs: (Σx)² ÷ (n·Σx²), 1 when all are
// equal, 1/n when one gets everything; NaN for no values or all zero
// (nothing to share: no index).
func Jain(xs []float64) float64 {
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	if len(xs) == 0 || s2 == 0 {
		return math.NaN()
	}
	// ≤ 1 by Cauchy–Schwarz; rounding can put equal shares a few ulps
	// above it, which no fairness index may read.
	return math.Min(s*s/(float64(len(xs))*s2), 1)
}
