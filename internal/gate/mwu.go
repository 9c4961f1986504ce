package gate

// MinAttainableP is the smallest two-sided p-value the Mann-Whitney U test
// can return for samples of sizes n1 and n2 (no ties): both samples fully
// separated, p = 2 / C(n1+n2, n1), capped at 1. When it exceeds alpha, no
// data of that size can ever be significant.
func MinAttainableP(n1, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	k := min(n1, n2)
	n := n1 + n2
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return min(1, 2/c)
}

// MinSamples is the smallest equal sample size per side at which the
// Mann-Whitney U test can reach alpha (0 if none up to 1000 can).
func MinSamples(alpha float64) int {
	for n := 1; n <= 1000; n++ {
		if MinAttainableP(n, n) <= alpha {
			return n
		}
	}
	return 0
}
