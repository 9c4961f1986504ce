package quantile

import "math"

// binomCDF returns F with F[k] = P(B ≤ k) for B ~ Binomial(n, q),
// k = 0..n, computed in log space so that large n neither overflows
// nor underflows.
func binomCDF(n int, q float64) []float64 {
	f := make([]float64, n+1)
	switch {
	case q <= 0:
		for k := range f {
			f[k] = 1
		}
		return f
	case q >= 1:
		f[n] = 1
		return f
	}
	lq, l1q := math.Log(q), math.Log1p(-q)
	ln, _ := math.Lgamma(float64(n) + 1)
	acc := 0.0
	for k := 0; k <= n; k++ {
		lk, _ := math.Lgamma(float64(k) + 1)
		lnk, _ := math.Lgamma(float64(n-k) + 1)
		acc += math.Exp(ln - lk - lnk + float64(k)*lq + float64(n-k)*l1q)
		f[k] = math.Min(acc, 1)
	}
	return f
}

// cdf is F(k) with F(−1) = 0 and F(k ≥ n) = 1.
func cdf(f []float64, k int) float64 {
	switch {
	case k < 0:
		return 0
	case k >= len(f)-1:
		return 1
	}
	return f[k]
}

// Ranks are the 1-based ranks [lo, hi] of the two-sided
// order-statistic interval for the q-quantile of n values at
// confidence ≥ conf, and its exact coverage: lo = 0 means the interval
// is open below, hi = n+1 open above. Each tail's miss probability is
// at most (1 − conf)/2.
func Ranks(n int, q, conf float64) (lo, hi int, coverage float64) {
	if n <= 0 {
		return 0, 1, 1
	}
	f := binomCDF(n, q)
	tail := (1 - conf) / 2
	// lo: the largest rank with P(B < lo) ≤ tail (rank 0: open).
	for lo = 0; lo < n && cdf(f, lo) <= tail; lo++ {
	}
	// hi: the smallest rank with P(B ≥ hi) ≤ tail (rank n+1: open).
	for hi = n + 1; hi > 1 && 1-cdf(f, hi-2) <= tail; hi-- {
	}
	lo = min(lo, Rank(n, q))
	hi = max(hi, Rank(n, q))
	return lo, hi, cdf(f, hi-1) - cdf(f, lo-1)
}

// LowerRank is the 1-based rank of the one-sided lower confidence
// bound X(l) ≤ ξ_q at confidence ≥ conf, and its exact coverage; 0
// when no order statistic is low enough (the bound is the domain's
// floor).
func LowerRank(n int, q, conf float64) (l int, coverage float64) {
	if n <= 0 {
		return 0, 1
	}
	f := binomCDF(n, q)
	// P(X(l) ≤ ξ) = P(B ≥ l) = 1 − F(l−1), falling in l.
	for l = n; l > 0 && 1-cdf(f, l-1) < conf; l-- {
	}
	return l, 1 - cdf(f, l-1)
}
