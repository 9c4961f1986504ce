package series

import (
	"github.com/sagebench/sagebench/internal/record"
	"math"
	"time"
)

// Metric picks the value of a window a rule looks at.
type Metric func(Window) float64

// Metrics by name, for configs and records.
var metrics = map[string]Metric{
	"ttft_p99": func(w Window) float64 { return w.TTFTP99 },
	"e2e_p99":  func(w Window) float64 { return w.E2EP99 },
	"ttft_p50": func(w Window) float64 { return w.TTFTP50 },
	"e2e_p50":  func(w Window) float64 { return w.E2EP50 },
}

// MetricByName returns the metric called name (ttft_p99, e2e_p99,
// ttft_p50, e2e_p50).
func MetricByName(name string) (Metric, bool) {
	m, ok := metrics[name]
	return m, ok
}

// Recovery is the outcome of one event (RecoveryAfter) or fault (Recover).
type Recovery struct {
	EventNS   int64 `json:"event_ns"`
	Recovered bool  `json:"recovered"`
	// AfterMs: RecoveryAfter, event → the end of the first window of the
	// compliant run; Recover, the fault's end → the start of that window.
	AfterMs   float64 `json:"after_ms"`
	WorstMs   float64 `json:"worst_ms"` // the metric's worst value between the event and recovery (or the end; Recover: the horizon); +Inf: failures at its rank
	Windows   int     `json:"windows"`  // windows looked at
	BoundMs   float64 `json:"bound_ms"` // the bound the metric had to meet
	HoldMs    float64 `json:"hold_ms"`  // how long it had to stay within it
	MetricKey string  `json:"metric"`   // e.g. ttft_p99
	Note      string  `json:"note,omitempty"`

	// Set by Recover only.
	State        string  `json:"state,omitempty"`         // NeverViolated, Recovered or NeverRecovered
	FaultEndNS   int64   `json:"fault_end_ns,omitempty"`  // the fault's end (its start when instantaneous)
	Violated     bool    `json:"violated,omitempty"`      // the metric broke the rule after the fault
	ViolatedNS   int64   `json:"violated_ns,omitempty"`   // when it first did
	RecoveredNS  int64   `json:"recovered_ns,omitempty"`  // start of the first window of the compliant run
	ResolutionMs float64 `json:"resolution_ms,omitempty"` // the window step: times are exact to ± this
}

// RecoveryAfter measures recovery from an event at eventNS: windows that
// start at or after the event are scanned for the first run of compliant
// windows (metric ≤ boundMs, or no requests and nothing failed) lasting
// hold. A window with errors is never compliant.
//
// It cannot tell an event that did no harm from one the system recovered
// from, and its times are never shorter than a window width: the drills
// use Recover, which can.
func RecoveryAfter(ws []Window, eventNS int64, name string, boundMs float64, hold time.Duration) Recovery {
	r := Recovery{EventNS: eventNS, BoundMs: boundMs, HoldMs: record.Millis(hold), MetricKey: name, WorstMs: math.NaN()}
	m, ok := MetricByName(name)
	if !ok {
		r.Note = "unknown metric " + name
		return r
	}
	runStart := -1
	for i, w := range ws {
		if w.StartNS < eventNS {
			continue
		}
		r.Windows++
		v := m(w)
		if !math.IsNaN(v) && (math.IsNaN(r.WorstMs) || v > r.WorstMs) {
			r.WorstMs = v
		}
		if !compliant(w, v, boundMs) {
			runStart = -1
			continue
		}
		if runStart < 0 {
			runStart = i
		}
		if time.Duration(w.EndNS-ws[runStart].StartNS) >= hold {
			r.Recovered = true
			r.AfterMs = max(record.Millis(time.Duration(ws[runStart].EndNS-eventNS)), 0)
			return r
		}
	}
	r.Note = "never back within the bound for the hold time before the run ended"
	return r
}

func compliant(w Window, v, bound float64) bool {
	if w.Errors > 0 {
		return false
	}
	if w.Count == 0 {
		return true
	}
	return !math.IsNaN(v) && v <= bound
}

// Drift is the least-squares slope of a metric over time.
type Drift struct {
	SlopePerMin float64 `json:"slope_per_min"` // metric units per minute
	CILow       float64 `json:"ci_low"`        // 95 % confidence interval of the slope
	CIHigh      float64 `json:"ci_high"`
	Points      int     `json:"points"`
}

// DriftOf fits metric name against window start time over the windows
// that have a finite value (a window whose failures reach the metric's
// rank, +∞, is no point of a trend), using every step-th window (non-overlapping windows
// when step = width/Step), and returns the slope with a 95 % confidence
// interval (normal approximation; NaN with fewer than 3 points).
func DriftOf(ws []Window, name string, every int) Drift {
	m, ok := MetricByName(name)
	d := Drift{SlopePerMin: math.NaN(), CILow: math.NaN(), CIHigh: math.NaN()}
	if !ok {
		return d
	}
	var xs, ys []float64
	for i := 0; i < len(ws); i += max(every, 1) {
		if v := m(ws[i]); !math.IsNaN(v) && !math.IsInf(v, 0) { // +Inf: failures at the rank, not a steady point
			xs, ys = append(xs, float64(ws[i].StartNS)/float64(time.Minute)), append(ys, v)
		}
	}
	d.Points = len(xs)
	if len(xs) < 3 {
		return d
	}
	slope, se := fit(xs, ys)
	d.SlopePerMin, d.CILow, d.CIHigh = slope, slope-1.96*se, slope+1.96*se
	return d
}

// fit returns the least-squares slope of ys on xs and its standard error.
func fit(xs, ys []float64) (slope, se float64) {
	n := float64(len(xs))
	var mx, my float64
	for i := range xs {
		mx, my = mx+xs[i], my+ys[i]
	}
	mx, my = mx/n, my/n
	var sxx, sxy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	if sxx == 0 {
		return math.NaN(), math.NaN()
	}
	slope = sxy / sxx
	var sse float64
	for i := range xs {
		e := ys[i] - (my + slope*(xs[i]-mx))
		sse += e * e
	}
	return slope, math.Sqrt(sse / (n - 2) / sxx)
}

// DriftOfPoints fits ys against xs (minutes) and returns the slope per
// minute with its 95 % confidence interval (NaN with fewer than 3 points),
// for samples that are not windows (RSS, open files).
func DriftOfPoints(xs, ys []float64) Drift {
	d := Drift{SlopePerMin: math.NaN(), CILow: math.NaN(), CIHigh: math.NaN(), Points: min(len(xs), len(ys))}
	if d.Points < 3 {
		return d
	}
	slope, se := fit(xs[:d.Points], ys[:d.Points])
	d.SlopePerMin, d.CILow, d.CIHigh = slope, slope-1.96*se, slope+1.96*se
	return d
}
