package drill

import (
	"fmt"
	"math"
	"time"

	"github.com/sagebench/sagebench/internal/quantile"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/series"
)

// The one vocabulary of a fault's recovery, shared by every drill (the
// survival-analysis reading: the recovery time is the time to an event,
// observed from the fault until the horizon — the next fault or the end
// of the load — and right-censored there):
const (
	// NoViolation: the rule held in every window from the fault until
	// its horizon. The recovery is 0, reason "no violation".
	NoViolation = "no_violation"
	// Recovered: violated, then back within the rule for the hold time,
	// the whole hold observed before the horizon.
	Recovered = "recovered"
	// Censored: violated and not seen back before the next fault began;
	// the recovery is only known to exceed the last time that could have
	// been observed (state bound, (> X, ∞)).
	Censored = "censored"
	// NeverRecovered: violated and not back by the end of the load (no
	// fault followed). The state never.
	NeverRecovered = "never_recovered"
	// Unmeasurable: the fault's end did not happen.
	Unmeasurable = "unmeasurable"
)

// Verdict is what became of a fault's recovery under the one vocabulary.
func (x EventRecovery) Verdict() string {
	switch {
	case x.Unmeasurable != "":
		return Unmeasurable
	case !x.Violated:
		return NoViolation
	case x.Censored:
		return Censored
	case x.State == series.Recovered:
		return Recovered
	}
	return NeverRecovered
}

// censor applies the horizon: a recovery is observed only until the next
// fault begins (horizonNS; 0: none, the end of the load — its last
// intended send, loadEndNS — is the horizon). A violated fault whose
// compliant run of the hold time did not end by the horizon is censored
// there — never extended into the next fault's windows. The censoring
// time is the latest recovery that could have been seen whole: the
// horizon − the hold, from the fault's end (at least 0). With no fault
// after it, a compliant run that reaches its hold only in windows past
// the load's end (which hold less and less of the load) was not observed
// whole: never recovered, not recovered.
func (x *EventRecovery) censor(ws []series.Window, horizonNS, loadEndNS int64) {
	x.HorizonNS = horizonNS
	if !x.Violated || x.Unmeasurable != "" {
		return
	}
	hold := int64(x.HoldMs * 1e6)
	if horizonNS <= 0 {
		if x.State == series.Recovered && runEnd(ws, x.RecoveredNS, hold) > loadEndNS {
			x.State, x.Recovered, x.RecoveredNS, x.AfterMs = series.NeverRecovered, false, 0, 0
			x.Note = "back within the rule only in windows past the load's end: the hold was not observed whole"
		}
		return
	}
	if x.State == series.Recovered && runEnd(ws, x.RecoveredNS, hold) <= horizonNS {
		return
	}
	x.Censored = true
	x.CensoredAfterMs = max(record.Millis(time.Duration(horizonNS-hold-x.FaultEndNS)), 0)
}

// runEnd is when a compliant run starting at fromNS had lasted hold: the
// end of the first window from it that reaches that far (the last
// window's end when none does).
func runEnd(ws []series.Window, fromNS, hold int64) int64 {
	end := int64(math.MaxInt64)
	for _, w := range ws {
		if w.StartNS >= fromNS && w.EndNS-fromNS >= hold {
			return w.EndNS
		}
		end = w.EndNS
	}
	return end
}

// RecoveryMetric is the fault's recovery as metric d (unit ms or s),
// counted from originNS (the fault's end, or its start: Q5 counts from
// the kill), in the one vocabulary: 0 with the reason "no violation";
// measured to ± the window step; bound [0, step] when it is shorter than
// the step (the grid cannot tell it from 0); bound (X, ∞) when censored
// by the next fault; never when it did not recover by the end of the
// load; not measurable when the fault never ended.
func (x EventRecovery) RecoveryMetric(d result.Def, originNS int64) result.Metric {
	scale := 1.0 // ms per unit
	if d.Unit == result.Seconds {
		scale = 1000
	}
	step := x.ResolutionMs / scale
	rule := x.Rule()
	switch x.Verdict() {
	case Unmeasurable:
		return d.NotMeasurable(x.Unmeasurable)
	case NoViolation:
		return d.Measure(0, 1, "").WithReason("no violation: " + rule + " in every window until " + x.horizonText())
	case Censored:
		lo := (x.CensoredAfterMs + record.Millis(time.Duration(x.FaultEndNS-originNS))) / scale
		return d.Within(lo, math.Inf(1), 1, fmt.Sprintf("censored: not recovered (%s) before the next fault at %.2f s", x.RuleHeld(), float64(x.HorizonNS)/1e9))
	case NeverRecovered:
		return d.Never(fmt.Sprintf("never recovered: not %s for %s by the end of the load", rule, result.FormatValue(x.HoldMs, result.Ms)))
	}
	v := record.Millis(time.Duration(x.RecoveredNS-originNS)) / scale
	why := fmt.Sprintf("%s, from %s", x.RuleHeld(), x.originText(originNS))
	if v < step {
		return d.Within(0, step, 1, fmt.Sprintf("recovered within one window step (%s): %s", result.FormatValue(step, d.Unit), why))
	}
	return d.Measure(v, 1, "").WithResolution(step).WithReason(why)
}

func (x EventRecovery) horizonText() string {
	if x.HorizonNS > 0 {
		return fmt.Sprintf("the next fault at %.2f s", float64(x.HorizonNS)/1e9)
	}
	return "the end of the load"
}

func (x EventRecovery) originText(originNS int64) string {
	if originNS == x.FaultEndNS && x.FaultEndNS > x.EventNS {
		return fmt.Sprintf("the fault's end at %.2f s", float64(x.FaultEndNS)/1e9)
	}
	return fmt.Sprintf("the fault at %.2f s", float64(originNS)/1e9)
}

// SlowestRecovery is the slowest of the faults' recoveries as metric d
// (from each fault's end): never when one never recovered; a bound when
// one was censored (at least the largest of the censoring times and the
// measured recoveries) or when every recovery was shorter than the step;
// not measurable when one's fault never ended or none was performed; a
// fault with no violation counts 0.
func SlowestRecovery(d result.Def, xs []EventRecovery) result.Metric {
	if len(xs) == 0 {
		return d.NotMeasurable("no fault was performed")
	}
	var ms []result.Metric
	for _, x := range xs {
		m := x.RecoveryMetric(d, x.FaultEndNS)
		switch m.State {
		case result.NotMeasurable:
			return m
		case result.Never:
			return d.Never(fmt.Sprintf("%d %s at %.2f s: %s", x.Seq, x.Action, float64(x.EventNS)/1e9, m.Reason))
		}
		ms = append(ms, m)
	}
	lo, hi, censored, violated := 0.0, 0.0, 0, 0
	for i, m := range ms {
		if xs[i].Violated {
			violated++
		}
		switch {
		case m.State == result.Measured:
			lo, hi = max(lo, m.Value), max(hi, m.Value)
		case math.IsInf(m.Interval[1], 1):
			censored++
			lo, hi = max(lo, m.Interval[0]), math.Inf(1)
		default:
			hi = max(hi, m.Interval[1])
		}
	}
	why := fmt.Sprintf("%d of %d faults broke the rule; a fault with no violation counts 0", violated, len(xs))
	switch {
	case censored > 0:
		return d.Within(lo, hi, len(xs), fmt.Sprintf("%s; %d censored by the next fault (> %s)", why, censored, result.FormatValue(lo, d.Unit)))
	case hi > lo:
		return d.Within(lo, hi, len(xs), why+"; the slowest recovered within one window step")
	}
	step := xs[0].ResolutionMs
	if d.Unit == result.Seconds {
		step /= 1000
	}
	return d.Measure(lo, len(xs), "").WithResolution(step).WithReason(why)
}

// FailedAtRank reports whether the q-quantile of n requests of which
// failed failed is +∞ when a failure counts +∞: its nearest rank
// (quantile.Rank) falls among the failures, sorted last.
func FailedAtRank(n, failed int, q float64) bool {
	if n <= 0 || failed <= 0 {
		return false
	}
	return quantile.Rank(n, q) > n-failed
}
