package reqset

import (
	"fmt"
	"math"
	"slices"

	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
)

// Tail is a latency quantile over every request of a selection, a failed
// request counting as +∞: it never answered, so it is slower than any
// that did. Quantiles over the successful requests only would make a
// target that fails its slow requests look fast (survivor bias).
type Tail struct {
	Q      float64 // the quantile, e.g. 0.99
	N      int     // requests
	Failed int     // of which failed (+∞)
	// Value is the nearest-rank Q-quantile: +Inf when it falls on a
	// failure, NaN when there is no request.
	Value float64
	// Floor is the largest finite latency (NaN: none): when Value is +Inf,
	// the quantile is at least this.
	Floor float64
	// Lo and Hi are the order statistics one standard error of the rank
	// either side of the quantile's (ranks nq ∓ √(nq(1−q))): how far the
	// quantile moves with the sampling of n requests.
	Lo, Hi float64
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
	t := Tail{Q: q, N: len(rs), Value: math.NaN(), Floor: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	xs := make([]float64, 0, len(rs))
	for i := range rs {
		v, ok := latency(&rs[i])
		if !ok || math.IsNaN(v) {
			t.Failed++
			v = math.Inf(1)
		} else if math.IsNaN(t.Floor) || v > t.Floor {
			t.Floor = v
		}
		xs = append(xs, v)
	}
	if len(xs) == 0 {
		return t
	}
	slices.Sort(xs)
	n := float64(len(xs))
	k := math.Ceil(q * n)
	se := math.Sqrt(n * q * (1 - q))
	at := func(rank float64) float64 { return xs[int(min(max(rank, 1), n))-1] }
	t.Value, t.Lo, t.Hi = at(k), at(math.Ceil(k-se)), at(math.Floor(k+se))
	return t
}

// Straddles reports whether bound lies between Lo and Hi: a verdict
// "quantile ≤ bound" would flip within one standard error of the rank.
func (t Tail) Straddles(bound float64) bool {
	return t.N > 0 && t.Lo <= bound && bound < t.Hi
}

// Metric is t as a metric of d: measured when finite; a bound
// [Floor, ∞) when the quantile falls on failures (more than 1 − Q of
// the requests failed); not measurable when nothing succeeded (or no
// request was sent: why).
func (t Tail) Metric(d result.Def, why string) result.Metric {
	switch {
	case t.N == 0:
		return d.NotMeasurable(why)
	case !math.IsInf(t.Value, 1):
		return d.Measure(t.Value, t.N, why)
	case math.IsNaN(t.Floor):
		return d.NotMeasurable(fmt.Sprintf("every request failed (%d of %d)", t.Failed, t.N))
	}
	return d.Within(t.Floor, math.Inf(1), t.N, fmt.Sprintf("%d of %d requests failed (%s), more than the %s the quantile allows: it is at least the slowest answer",
		t.Failed, t.N, result.FormatValue(float64(t.Failed)/float64(t.N), result.Fraction), result.FormatValue(1-t.Q, result.Fraction)))
}

// Wilson is the Wilson score interval of a proportion k of n at 95 %
// confidence (z = 1.96): unlike the normal approximation it stays inside
// [0, 1] and is honest at 0 and n successes. n = 0 gives [0, 1].
func Wilson(k, n int) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	const z = 1.959964
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
