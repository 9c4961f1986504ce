package drill

import (
	"math"
	"time"

	mstats "github.com/aclements/go-moremath/stats"

	"github.com/sagebench/sagebench/internal/series"
)

// SteadyDrift is the least-squares slope of metric (per minute) over the
// steady windows — every every-th window (disjoint ones when every =
// width ÷ step) that overlaps no fault's disturbed span (see disturbed)
// and has no failed request at its p99's rank (whatever the metric; a
// window whose metric is +∞ never counts) — with a 95 % interval
// robust to the windows' autocorrelation: the Newey–West (Bartlett
// kernel) standard error with lag ⌈1.3 √n⌉ and the fixed-b critical
// value for it (Kiefer–Vogelsang; at least Student's t, n − 2 df). Fewer than 3 windows: a
// slope with NaN bounds (DriftMetric says not measurable).
func SteadyDrift(ws []series.Window, metric string, every int, xs []EventRecovery) series.Drift {
	d := series.Drift{SlopePerMin: math.NaN(), CILow: math.NaN(), CIHigh: math.NaN()}
	m, ok := series.MetricByName(metric)
	if !ok {
		return d
	}
	spans := disturbed(xs)
	var ts, ys []float64
	for i := 0; i < len(ws); i += max(every, 1) {
		w := ws[i]
		v := m(w)
		if math.IsNaN(v) || math.IsInf(v, 1) || FailedAtRank(w.Count, w.Errors, 0.99) || overlaps(w, spans) {
			continue
		}
		ts, ys = append(ts, float64(w.StartNS)/float64(time.Minute)), append(ys, v)
	}
	d.Points = len(ts)
	if len(ts) < 3 {
		return d
	}
	slope, se, lag := neweyWest(ts, ys)
	if math.IsNaN(se) {
		return d
	}
	// the fixed-b critical value of Kiefer and Vogelsang (2005) for the
	// Bartlett kernel at b = lag ÷ n, or Student's t when that is larger
	b := float64(lag) / float64(len(ts))
	t := max(1.96+2.9694*b+0.4160*b*b-0.5324*b*b*b, mstats.InvCDF(mstats.TDist{V: float64(len(ts) - 2)})(0.975))
	d.SlopePerMin, d.CILow, d.CIHigh = slope, slope-t*se, slope+t*se
	return d
}

// disturbed are the spans the faults disturbed, [start, end) in ns: from
// each fault (or the earliest send of a request it cut: one paused in
// flight belongs to the fault, not to the steady state) until its
// recovery's hold had passed, or its end when it
// caused no violation, or its horizon when censored, or the end of the
// load when it never recovered or could not be measured.
func disturbed(xs []EventRecovery) [][2]int64 {
	var out [][2]int64
	for _, x := range xs {
		end := int64(math.MaxInt64)
		switch x.Verdict() {
		case NoViolation:
			end = x.FaultEndNS + 1
		case Recovered:
			end = x.RecoveredNS + int64(x.HoldMs*1e6)
		case Censored:
			end = x.HorizonNS
		}
		start := x.EventNS
		if x.CutFromNS > 0 && x.CutFromNS < start {
			start = x.CutFromNS // the requests it cut were sent before it
		}
		out = append(out, [2]int64{start, end})
	}
	return out
}

func overlaps(w series.Window, spans [][2]int64) bool {
	for _, s := range spans {
		if w.StartNS < s[1] && w.EndNS > s[0] {
			return true
		}
	}
	return false
}

// neweyWest is the least-squares slope of ys on xs and its Newey–West
// standard error, prewhitened by AR(1) (Bartlett weights on the filtered
// scores, lag ⌈1.3 √n⌉: the longer lag
// Lazarus, Lewis, Stock and Watson (2018) recommend, as the textbook
// ⌊4 (n/100)^(2/9)⌋ under-covers at the windows' lag-1 autocorrelation
// of 0.5–0.7).
func neweyWest(xs, ys []float64) (slope, se float64, lag int) {
	n := len(xs)
	var mx, my float64
	for i := range xs {
		mx, my = mx+xs[i], my+ys[i]
	}
	mx, my = mx/float64(n), my/float64(n)
	var sxx, sxy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	if sxx == 0 {
		return math.NaN(), math.NaN(), 0
	}
	slope = sxy / sxx
	u := make([]float64, n) // score terms (x − x̄)·residual
	for i := range xs {
		u[i] = (xs[i] - mx) * (ys[i] - my - slope*(xs[i]-mx))
	}
	// prewhitened (Andrews–Monahan): an AR(1) filter takes out most of
	// the autocorrelation, Newey–West the rest, and the filter is undone
	var num, den float64
	for i := 1; i < n; i++ {
		num, den = num+u[i]*u[i-1], den+u[i-1]*u[i-1]
	}
	rho := 0.0
	if den > 0 {
		rho = min(max(num/den, -0.97), 0.97)
	}
	v := make([]float64, 0, n)
	for i := 1; i < n; i++ {
		v = append(v, u[i]-rho*u[i-1])
	}
	lag = max(int(math.Ceil(1.3*math.Sqrt(float64(n)))), 1)
	s := 0.0
	for i := range v {
		s += v[i] * v[i]
	}
	for l := 1; l <= lag && l < len(v); l++ {
		w, c := 1-float64(l)/float64(lag+1), 0.0
		for i := l; i < len(v); i++ {
			c += v[i] * v[i-l]
		}
		s += 2 * w * c
	}
	s = s * float64(n) / float64(len(v)) / ((1 - rho) * (1 - rho))
	// the small-sample factor n/(n−2), as the OLS variance has
	return slope, math.Sqrt(max(s, 0)*float64(n)/float64(n-2)) / sxx, lag
}
