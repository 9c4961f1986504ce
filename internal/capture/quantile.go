package capture

import (
	"math"
	"sort"

	"github.com/sagebench/sagebench/internal/quantile"
)

// HistogramQuantile estimates the q-quantile (0 ≤ q ≤ 1) of cumulative
// buckets sorted by bound and ending with +Inf, with PromQL's
// histogram_quantile semantics: linear interpolation inside the bucket
// holding the rank, the lower bound of the first bucket taken as 0 (when
// its upper bound is positive), and the highest finite bound returned when
// the rank falls into +Inf. It returns NaN without observations.
func HistogramQuantile(q float64, bs []Bucket) float64 {
	if len(bs) < 2 || math.IsNaN(q) || q < 0 || q > 1 {
		return math.NaN()
	}
	total := bs[len(bs)-1].Count
	if total <= 0 || !math.IsInf(bs[len(bs)-1].UpperBound, 1) {
		return math.NaN()
	}
	rank := q * total
	i := sort.Search(len(bs)-1, func(i int) bool { return bs[i].Count >= rank })
	if i == len(bs)-1 {
		return bs[len(bs)-2].UpperBound
	}
	if i == 0 && bs[0].UpperBound <= 0 {
		return bs[0].UpperBound
	}
	lower, below := 0.0, 0.0
	if i > 0 {
		lower, below = bs[i-1].UpperBound, bs[i-1].Count
	}
	upper, in := bs[i].UpperBound, bs[i].Count-below
	if in <= 0 {
		return upper
	}
	return lower + (upper-lower)*(rank-below)/in
}

// Stats summarises a metric's per-window values across the windows that
// were not missing.
type Stats struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
}

// Summarize computes Stats of xs (NaN and ±Inf are left out).
func Summarize(xs []float64) Stats {
	v := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return Stats{}
	}
	sort.Float64s(v)
	mean, n := 0.0, float64(len(v))
	for _, x := range v {
		mean += x / n // a sum of values near 1e308 would overflow to +Inf
	}
	mean = min(max(mean, v[0]), v[len(v)-1]) // rounding cannot leave [min, max]
	return Stats{N: len(v), Mean: mean, Median: quantileSorted(v, 0.5),
		Min: v[0], Max: v[len(v)-1], P95: quantileSorted(v, 0.95), P99: quantileSorted(v, 0.99)}
}

// quantileSorted is the q-quantile of sorted v by the one definition
// (quantile.Definition).
func quantileSorted(v []float64, q float64) float64 { return quantile.OfSorted(v, q) }
