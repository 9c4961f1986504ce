package load

import (
	"slices"
	"time"
)

// LagSummary summarises dispatch lags (actual minus intended dispatch
// time) of the dispatched arrivals.
type LagSummary struct {
	Count int
	Mean  time.Duration
	P50   time.Duration
	P90   time.Duration
	P99   time.Duration
	P999  time.Duration
	Max   time.Duration
}

// summarize computes a LagSummary over lags, skipping NotDispatched.
// Quantiles are nearest-rank on the sorted values.
func summarize(lags []time.Duration) LagSummary {
	v := make([]time.Duration, 0, len(lags))
	var sum float64
	for _, l := range lags {
		if l != NotDispatched {
			v = append(v, l)
			sum += float64(l)
		}
	}
	if len(v) == 0 {
		return LagSummary{}
	}
	slices.Sort(v)
	q := func(p float64) time.Duration {
		k := int(p*float64(len(v))+0.999999999) - 1
		return v[min(max(k, 0), len(v)-1)]
	}
	return LagSummary{Count: len(v), Mean: time.Duration(sum / float64(len(v))),
		P50: q(0.50), P90: q(0.90), P99: q(0.99), P999: q(0.999), Max: v[len(v)-1]}
}

// Summarize is summarize for callers holding their own lag slices (for
// example vegeta results in bench/load).
func Summarize(lags []time.Duration) LagSummary { return summarize(lags) }
