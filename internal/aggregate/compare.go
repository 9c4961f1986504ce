package aggregate

import (
	"golang.org/x/perf/benchmath"
)

// PValue is the two-sided Mann-Whitney U test's p-value for samples a
// and b (e.g. one value per round of two policies); ok is false when
// either has fewer than two values, where no test can say anything.
func PValue(a, b []float64) (p float64, ok bool) {
	if len(a) < 2 || len(b) < 2 {
		return 1, false
	}
	sa := benchmath.NewSample(a, &benchmath.DefaultThresholds)
	sb := benchmath.NewSample(b, &benchmath.DefaultThresholds)
	return benchmath.AssumeNothing.Compare(sa, sb).P, true
}
