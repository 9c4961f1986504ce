package reqset

import (
	"math"

	"github.com/aclements/go-moremath/stats"

	"github.com/sagebench/sagebench/internal/quantile"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
)

// Tail is a latency quantile over every request of a selection, a failed
// request counting as +∞: it never answered, so it is slower than any
// that did. Quantiles over the successful requests only would make a
// target that fails its slow requests look fast (survivor bias). The
// quantile, its interval and its states are package quantile's (one
// definition: nearest rank; a distribution-free order-statistic
// interval at 95 %).
type Tail struct {
	quantile.Estimate
}

// TTFT is a request's time to first token (its E2E when it streamed
// none); ok is false for a failed request.
func TTFT(r *record.Request) (ms float64, ok bool) {
	if !r.OK {
		return 0, false
	}
	if r.FirstToken == 0 {
		return r.E2EMs, true
	}
	return r.TTFTMs, true
}

// E2E is a request's end-to-end latency; ok is false for a failed request.
func E2E(r *record.Request) (ms float64, ok bool) { return r.E2EMs, r.OK }

// TailOf is the q-quantile of latency over rs, failures as +∞.
func TailOf(rs []record.Request, q float64, latency func(*record.Request) (float64, bool)) Tail {
	xs := make([]float64, len(rs))
	for i := range rs {
		v, ok := latency(&rs[i])
		if !ok || math.IsNaN(v) {
			v = math.Inf(1)
		}
		xs[i] = v
	}
	return Tail{quantile.OfSample(xs, q, quantile.Confidence)}
}

// Straddles reports whether bound lies inside the quantile's confidence
// interval [Lo, Hi): a verdict "quantile ≤ bound" is not decided by
// the sample.
func (t Tail) Straddles(bound float64) bool {
	return t.N > 0 && t.Lo <= bound && bound < t.Hi
}

// Metric is t as a metric of d (see quantile.Estimate.Metric): measured
// with N, interval and coverage; a bound when the quantile falls on
// failures or beyond the sample ("max of 6"); never when failures put
// it at +∞; not measurable when no request was sent (why).
func (t Tail) Metric(d result.Def, why string) result.Metric {
	return t.Estimate.Metric(d, why)
}

// Wilson is the Wilson score interval of a proportion k of n at 95 %
// confidence (z = 1.96): unlike the normal approximation it stays inside
// [0, 1] and is honest at 0 and n successes. n = 0 gives [0, 1].
func Wilson(k, n int) (lo, hi float64) { return WilsonAt(k, n, 0.95) }

// WilsonAt is the Wilson score interval of k of n at confidence conf
// (e.g. 0.975, so that two of them make a 95 % statement).
func WilsonAt(k, n int, conf float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	z := stats.NormalDist{Mu: 0, Sigma: 1}.InvCDF(1 - (1-conf)/2)
	p, fn := float64(k)/float64(n), float64(n)
	den := 1 + z*z/fn
	mid := (p + z*z/(2*fn)) / den
	half := z * math.Sqrt(p*(1-p)/fn+z*z/(4*fn*fn)) / den
	return max(mid-half, 0), min(mid+half, 1)
}

// Attainment is the share of rs that met their SLO as a metric of d,
// with its Wilson 95 % interval; not measurable (why) when rs is empty.
func Attainment(d result.Def, rs []record.Request, why string) result.Metric {
	met := 0
	for i := range rs {
		if rs[i].SLOMet {
			met++
		}
	}
	m := d.Measure(float64(met)/float64(max(len(rs), 1)), len(rs), why)
	if m.Measured() {
		lo, hi := Wilson(met, len(rs))
		m = m.WithInterval(lo, hi)
	}
	return m
}
