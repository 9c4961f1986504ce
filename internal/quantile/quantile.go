package quantile

import (
	"math"
	"slices"
)

// Definition states the quantile definition for records and docs.
const Definition = "nearest rank (Hyndman–Fan type 1): the ⌈q·n⌉-th smallest of n values"

// Confidence is the level of every quantile interval sagebench reports.
const Confidence = 0.95

// Rank is the 1-based nearest rank of the q-quantile of n values
// (0 when n is 0).
func Rank(n int, q float64) int {
	if n <= 0 {
		return 0
	}
	// q·n is computed with a relative slack so that 0.9·10 is rank 9,
	// not 10 from the float 9.000000000000002; the slack is relative to
	// q·n and far below any fraction a q of three decimals leaves (an
	// absolute 1e-9·n was 1e-3 at n = 10⁶: rank 999,998 for ⌈999,998.001⌉).
	qn := q * float64(n)
	k := int(math.Ceil(qn - 1e-12*qn))
	return min(max(k, 1), n)
}

// Of is the q-quantile of xs (NaN when xs is empty); xs is not modified.
func Of(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return OfSorted(slices.Sorted(slices.Values(xs)), q)
}

// OfSorted is the q-quantile of the ascending sorted (NaN when empty).
func OfSorted(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	return sorted[Rank(len(sorted), q)-1]
}

// Beyond reports whether the q-quantile of n values lies beyond the
// sample: n < 1/(1−q), so that its nearest rank is the maximum and
// no order statistic bounds it from above (a p99 of fewer than 100).
func Beyond(n int, q float64) bool {
	return n > 0 && float64(n)*(1-q) < 1-1e-9
}

// Needed is the smallest sample whose q-quantile is not beyond it.
func Needed(q float64) int {
	if q >= 1 {
		return math.MaxInt
	}
	return int(math.Ceil(1/(1-q) - 1e-9))
}
