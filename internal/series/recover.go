package series

import (
	"fmt"
	"math"
	"time"

	"github.com/sagebench/sagebench/internal/record"
)

// The three states of a fault's recovery.
const (
	// NeverViolated: the metric stayed within its bound (and no request
	// failed) in every window from the fault until its horizon.
	NeverViolated = "never_violated"
	// Recovered: the metric broke its bound after the fault and was back
	// within it for the hold time, starting at or after the fault's end.
	Recovered = "recovered"
	// NeverRecovered: it broke its bound and was not back for the hold
	// time by the end of the series.
	NeverRecovered = "never_recovered"
)

// Rule is what "within the SLO" means for a recovery: the windowed
// metric (ttft_p99, e2e_p99, ttft_p50, e2e_p50) at most BoundMs and no
// failed request, for Hold (at least one window width: a shorter hold is
// raised to the width).
type Rule struct {
	Metric  string
	BoundMs float64
	Hold    time.Duration
}

// Fault is when a fault was on, in ns since the run's start: from StartNS
// to EndNS (EndNS ≤ StartNS: an instantaneous fault, such as a kill).
// HorizonNS, when > StartNS, is when the next fault began: a violation
// that begins after it is that fault's, not this one's.
type Fault struct {
	StartNS, EndNS, HorizonNS int64
}

// end is the fault's end (its start for an instantaneous fault).
func (f Fault) end() int64 { return max(f.EndNS, f.StartNS) }

// Recover reads the recovery from fault f off windows ws computed with
// cfg. It scans the windows that hold requests intended at or after the
// fault's start:
//
//   - the first non-compliant window marks the violation, at the start of
//     the step that entered the window (its end − Step), never before the
//     fault; one beginning at or after the horizon is not this fault's;
//   - after a violation, the first window starting at or after the
//     fault's end from which the windows stay compliant for the hold time
//     marks the recovery: AfterMs is its start − the fault's end.
//
// Both times lie on the window grid: they are exact to ± Step
// (ResolutionMs). A compliant window is one whose metric is within the
// bound and that has no failed request (or has no request at all). The
// worst (WorstMs) is the metric's largest value from the fault until
// its recovery, or until its horizon when it did not recover: +Inf when
// a window's failures reached the metric's rank (a failed request counts
// +∞).
func Recover(ws []Window, cfg Config, f Fault, rule Rule) Recovery {
	return recoverIn(ws, ws, cfg, f, rule)
}

// RecoverRequests is Recover over the records reqs, with one refinement:
// the violation is looked for only among the requests that ended while
// the fault could have caused it — at or after its start, and before its
// horizon — so that a request a previous fault failed before this one
// began, or one in flight when the next fault struck, is not charged to
// it. The recovery is read off all the requests.
func RecoverRequests(reqs []record.Request, cfg Config, f Fault, rule Rule) (Recovery, error) {
	all, err := Compute(reqs, cfg)
	if err != nil {
		return Recovery{}, err
	}
	return RecoverRequestsIn(all, reqs, cfg, f, rule)
}

// RecoverRequestsIn is RecoverRequests with the windows of all of reqs
// already computed (Compute(reqs, cfg)): a run with several faults
// computes them once.
func RecoverRequestsIn(all []Window, reqs []record.Request, cfg Config, f Fault, rule Rule) (Recovery, error) {
	var mine []record.Request
	for i := range reqs {
		if e := reqs[i].EndNS; e >= f.StartNS && (f.HorizonNS <= f.StartNS || e < f.HorizonNS) {
			mine = append(mine, reqs[i])
		}
	}
	clean, err := Compute(mine, cfg)
	if err != nil {
		return Recovery{}, err
	}
	return recoverIn(all, clean, cfg, f, rule), nil
}

// recoverIn is Recover looking for the violation in clean and for the
// recovery in ws (windows of the same grid).
func recoverIn(ws, clean []Window, cfg Config, f Fault, rule Rule) Recovery {
	cfg = cfg.WithDefaults()
	hold := max(rule.Hold, cfg.Width)
	r := Recovery{EventNS: f.StartNS, FaultEndNS: f.end(), BoundMs: rule.BoundMs, HoldMs: record.Millis(hold), MetricKey: rule.Metric,
		WorstMs: math.NaN(), ResolutionMs: record.Millis(cfg.Step)}
	m, ok := MetricByName(rule.Metric)
	if !ok {
		r.Note = "unknown metric " + rule.Metric
		return r
	}
	step := int64(cfg.Step)
	runStart := -1
	for i, w := range ws {
		if !r.Violated {
			if i >= len(clean) {
				break // no request the fault could have failed is left
			}
			w = clean[i]
		}
		if w.EndNS <= f.StartNS {
			continue // holds nothing intended from the fault on
		}
		entered := max(w.EndNS-step, f.StartNS) // when the newest requests of w were intended
		if !r.Violated && f.HorizonNS > f.StartNS && entered >= f.HorizonNS {
			break // the next fault's
		}
		r.Windows++
		v := m(w)
		if mine := f.HorizonNS <= f.StartNS || entered < f.HorizonNS; mine && !math.IsNaN(v) && (math.IsNaN(r.WorstMs) || v > r.WorstMs) {
			r.WorstMs = v // +Inf when failures reached the metric's rank
		}
		if !compliant(w, v, rule.BoundMs) {
			runStart = -1
			if !r.Violated {
				r.Violated, r.ViolatedNS = true, entered
			}
			continue
		}
		if !r.Violated || w.StartNS < r.FaultEndNS {
			continue
		}
		if runStart < 0 {
			runStart = i
		}
		if w.EndNS-ws[runStart].StartNS >= int64(hold) {
			r.State, r.Recovered = Recovered, true
			r.RecoveredNS = ws[runStart].StartNS
			r.AfterMs = record.Millis(time.Duration(r.RecoveredNS - r.FaultEndNS))
			return r
		}
	}
	r.State = NeverViolated
	if r.Violated {
		r.State = NeverRecovered
		r.Note = fmt.Sprintf("never back within %s for %s by the end of the series", msText(rule.BoundMs), hold)
	}
	return r
}

// Within reports whether window w keeps rule: its metric within the
// bound and no failed request (a window with no request keeps it).
func Within(w Window, rule Rule) bool {
	m, ok := MetricByName(rule.Metric)
	return ok && compliant(w, m(w), rule.BoundMs)
}

// ToViolationMs is the time from the fault's start to the violation (NaN
// when there was none).
func (r Recovery) ToViolationMs() float64 {
	if !r.Violated {
		return math.NaN()
	}
	return record.Millis(time.Duration(r.ViolatedNS - r.EventNS))
}

func msText(v float64) string { return fmt.Sprintf("%g ms", v) }
