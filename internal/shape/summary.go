package shape

import (
	"fmt"
	"slices"
)

// Summary is a distribution of drawn lengths: what --dry-run prints.
type Summary struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  int     `json:"p50"`
	P99  int     `json:"p99"`
	Max  int     `json:"max"`
}

// Summarize returns the summary of vals (zero for none).
func Summarize(vals []int) Summary {
	if len(vals) == 0 {
		return Summary{}
	}
	s := slices.Clone(vals)
	slices.Sort(s)
	sum := 0
	for _, v := range s {
		sum += v
	}
	at := func(q float64) int { return s[min(int(q*float64(len(s))), len(s)-1)] }
	return Summary{N: len(s), Mean: float64(sum) / float64(len(s)), P50: at(0.5), P99: at(0.99), Max: s[len(s)-1]}
}

func (s Summary) String() string {
	if s.N == 0 {
		return "—"
	}
	return fmt.Sprintf("mean %.0f, p50 %d, p99 %d", s.Mean, s.P50, s.P99)
}
