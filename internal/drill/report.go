package drill

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/openai"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/series"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/workload"
)

// The metrics every drill reports.
var (
	DefLost         = result.Def{Name: "lost", Unit: result.Count, Direction: result.Lower}
	DefSent         = result.Def{Name: "sent", Unit: result.Count, Direction: result.Higher}
	DefAvailability = result.Def{Name: "availability", Unit: result.Fraction, Direction: result.Higher}
	// DefRecovery is a fault's recovery: from the fault (its end, for a
	// fault with a duration) until the windowed metric was back within
	// its bound for the hold time, in the one vocabulary of
	// EventRecovery.RecoveryMetric (0 "no violation", bound [0, step],
	// censored (> X), never recovered by the end of the load).
	DefRecovery = result.Def{Name: "recovery_ms", Unit: result.Ms, Direction: result.Lower}
	// DefViolated is the time from the fault's start to the first
	// violation of the recovery rule; a bound (> the horizon) when there
	// was none before the next fault or the end.
	DefViolated = result.Def{Name: "violated_after_ms", Unit: result.Ms, Direction: result.Higher}
	// DefWorst is the worst windowed metric between the fault and its
	// recovery (or the next fault, or the end).
	DefWorst = result.Def{Name: "worst_ms", Unit: result.Ms, Direction: result.Lower}
	// DefUtilBefore and DefUtilAfter are the offered rate ÷ the capacity
	// left before and after an event, from the measured capacity and each
	// engine's measured share of it.
	DefUtilBefore = result.Def{Name: "utilisation_before", Unit: result.Ratio, Direction: result.Lower}
	DefUtilAfter  = result.Def{Name: "utilisation_after", Unit: result.Ratio, Direction: result.Lower}
	// DefCapacity is the capacity the probe measured; DefOffered the rate
	// the drill offered; DefUtilisation their ratio.
	DefCapacity    = result.Def{Name: "capacity_rps", Unit: result.ReqPerS, Direction: result.Higher}
	DefOffered     = result.Def{Name: "offered_rps", Unit: result.ReqPerS, Direction: result.Higher}
	DefUtilisation = result.Def{Name: "utilisation", Unit: result.Ratio, Direction: result.Lower}
	// DefSteady is the share of the windows before the first fault that
	// kept the recovery rule (MinSteady is required).
	DefSteady = result.Def{Name: "steady_share", Unit: result.Fraction, Direction: result.Higher}
)

// EventRecovery is the recovery from one performed fault.
type EventRecovery struct {
	Seq    int    `json:"seq"`
	Action string `json:"action"`
	Target string `json:"target"`
	series.Recovery
	// Unmeasurable says why the recovery cannot be read (the fault's end
	// did not happen); empty when it can.
	Unmeasurable string `json:"unmeasurable,omitempty"`
	// HorizonNS is when the next fault began (0: none followed; the
	// load's end, LoadEndNS, is the horizon). Censored: violated and not
	// seen back before it; CensoredAfterMs is then the censoring time
	// from the fault's end (see censor).
	HorizonNS       int64   `json:"horizon_ns,omitempty"`
	LoadEndNS       int64   `json:"load_end_ns,omitempty"`
	Censored        bool    `json:"censored,omitempty"`
	CensoredAfterMs float64 `json:"censored_after_ms,omitempty"`
	// CutFromNS is the earliest intended send of the requests the fault
	// cut (CutBy; 0: none): the fault disturbed the windows from there,
	// before its own start (a request paused in flight).
	CutFromNS int64 `json:"cut_from_ns,omitempty"`
}

// Measured reports whether the fault was violated and recovered within
// its horizon.
func (x EventRecovery) Measured() bool { return x.Verdict() == Recovered }

// Rule is the recovery rule: the metric within its bound, no failure.
func (x EventRecovery) Rule() string {
	return fmt.Sprintf("%s ≤ %s, no failure", x.MetricKey, result.FormatValue(x.BoundMs, result.Ms))
}

// RuleHeld is Rule for the hold time: what recovered means.
func (x EventRecovery) RuleHeld() string {
	return fmt.Sprintf("%s for %s", x.Rule(), result.FormatValue(x.HoldMs, result.Ms))
}

// Metrics are the fault's recovery (RecoveryMetric, from the fault's
// end), the time to its first violation (a bound (> the horizon) when
// there was none) and its worst windowed value (+∞, state never, when a
// window after it had failed requests at its quantile's rank: the
// window's quantile counts a failed request as +∞).
func (x EventRecovery) Metrics() []result.Metric {
	worst := DefWorst.NotMeasurable("no window after the event had a value")
	switch {
	case math.IsInf(x.WorstMs, 1):
		worst = DefWorst.Never(fmt.Sprintf("+∞: a window after the fault had failed requests at its %s's rank (a failed request counts +∞)", x.MetricKey))
	case !math.IsNaN(x.WorstMs):
		worst = DefWorst.Measure(x.WorstMs, max(x.Windows, 1), "")
	}
	if x.Unmeasurable != "" {
		return []result.Metric{DefRecovery.NotMeasurable(x.Unmeasurable), DefViolated.NotMeasurable(x.Unmeasurable), worst}
	}
	end := x.HorizonNS
	if end <= 0 {
		end = x.LoadEndNS
	}
	viol := DefViolated.Within(max(float64(end-x.EventNS)/1e6, 0), math.Inf(1), 1, "no violation before "+x.horizonText())
	if x.Violated {
		viol = DefViolated.Measure(x.ToViolationMs(), 1, "").WithResolution(x.ResolutionMs)
	}
	return []result.Metric{x.RecoveryMetric(DefRecovery, x.FaultEndNS), viol, worst}
}

// EventResults are the drill's events for the result: when each was
// performed, its outcome, the utilisation before and after it (when the
// capacity was measured) and, for a fault, its recovery.
func (r *Run) EventResults() []result.Event {
	var out []result.Event
	util := r.utilisations()
	for _, e := range r.Events {
		ev := result.Event{Seq: e.Seq, Action: e.Action, Target: e.Target, Outcome: e.Outcome}
		if e.Outcome == OutcomeOK && e.ActualNS > 0 {
			at := float64(e.ActualNS) / 1e9
			ev.AtS = &at
		}
		if x, ok := r.RecoveryOf(e.Seq); ok {
			ev.Metrics = x.Metrics()
			if x.FaultEndNS > x.EventNS {
				end := float64(x.FaultEndNS) / 1e9
				ev.EndS = &end
			}
		}
		ev.Metrics = append(ev.Metrics, util[e.Seq]...)
		out = append(out, ev)
	}
	return out
}

// utilisations are, per performed event, the utilisation before and after
// it: the offered rate ÷ the capacity left, following which engines the
// timeline took out (kill, pause, drain, remove), slowed down or put back.
func (r *Run) utilisations() map[int][]result.Metric {
	out := map[int][]result.Metric{}
	if r.Sizing.Capacity == nil {
		return out
	}
	lost, added := map[string]float64{}, ""
	for i, e := range r.Events {
		if e.Outcome != OutcomeOK {
			continue
		}
		before := r.utilisationMetric(DefUtilBefore, lost, added)
		added = applyToCapacity(lost, r.planned[i], added)
		out[e.Seq] = []result.Metric{before, r.utilisationMetric(DefUtilAfter, lost, added)}
	}
	return out
}

// applyToCapacity records what event e did to the capacity in lost (the
// fraction of each engine's capacity gone) and returns the id of an engine
// added with an unmeasured capacity (added, unchanged when none).
func applyToCapacity(lost map[string]float64, e Event, added string) string {
	switch {
	case e.Repair():
		delete(lost, e.Engine)
	case e.Action == Kill || e.Action == Pause || e.Action == Drain || e.Action == Remove:
		lost[e.Engine] = 1
	case e.Action == Slowdown:
		lost[e.Engine] = 1 - 1/e.Factor
	case e.Action == Add && added == "":
		return e.Engine
	}
	return added
}

func (r *Run) utilisationMetric(d result.Def, lost map[string]float64, added string) result.Metric {
	if added != "" {
		return d.NotMeasurable(fmt.Sprintf("%s was added after the capacity was measured", added))
	}
	u, ok := r.Sizing.UtilisationWith(lost)
	switch {
	case !ok:
		return d.NotMeasurable("an engine out has no measured share of the capacity (the target reported no such engine id on its answers during the probe)")
	case math.IsInf(u, 1):
		return d.NotMeasurable("no capacity left: nothing serves until the fault is repaired")
	}
	return d.Measure(u, 1, "").WithReason("offered rate ÷ (measured capacity − the measured share of the engines out)")
}

// SizingMetrics are the measured capacity (with its interval; a lower
// bound when the probe reached no plateau; as given when the user set
// it), the offered rate and their ratio; none when the load's rate was
// fixed.
func (r *Run) SizingMetrics() []result.Metric {
	c := r.Sizing.Capacity
	if c == nil {
		return nil
	}
	util := DefUtilisation.Measure(r.Sizing.Utilisation, 1, "").WithReason("offered rate ÷ measured capacity")
	var capm result.Metric
	switch {
	case c.UserSet:
		capm = DefCapacity.Measure(c.Rate, 1, "").WithReason("as set in load.capacity (not probed)")
	case !c.Saturated:
		last := 0
		if len(c.Levels) > 0 {
			last = c.Levels[len(c.Levels)-1].Clients
		}
		why := fmt.Sprintf("no plateau: the throughput still grew at %d clients, the probe's last level", last)
		capm = DefCapacity.Within(c.Rate, math.Inf(1), max(c.HoldOK, 1), why)
		util = DefUtilisation.NotMeasurable("the capacity is only a lower bound: the drill was not run")
	default:
		capm = DefCapacity.Measure(c.Rate, max(c.HoldOK, 1), "").WithInterval(c.Low, c.High).WithReason(fmt.Sprintf(
			"closed-loop probe of the mix: %d levels found the plateau, then %d clients held for %.1f s (%d %s requests); the %s throughput ÷ its share of the mix, 95 %% interval from batch means; %.1f s in all",
			len(c.Levels), c.HoldClients, c.Hold.Seconds(), c.HoldOK, r.Sizing.Bottleneck, r.Sizing.Bottleneck, c.Duration.Seconds()))
	}
	if !c.Saturated {
		return []result.Metric{capm, DefOffered.NotMeasurable("the drill was not run"), util}
	}
	return []result.Metric{capm, DefOffered.Measure(r.Sizing.Rate, 1, "").WithReason(fmt.Sprintf("%.2f × the measured capacity", r.Sizing.Utilisation)), util}
}

// Aborted is the outcome of a drill whose capacity probe reached no
// plateau (err, a NoPlateauError): the probe's phase and table, the
// primary metric not measurable, the capacity as a bound, and the run not
// comparable (exit 5) — no load was offered at a rate made up from a
// lower bound.
func (r *Run) Aborted(primary result.Def, err error) workload.Outcome {
	o := workload.Outcome{LoadMode: load.ModeOpen, Invalid: []string{err.Error()}}
	if r.ProbePhase != nil {
		o.Phases = []summary.Phase{*r.ProbePhase}
	}
	res := result.New("not answered: "+err.Error(), primary.NotMeasurable("the drill was not run: its capacity probe reached no plateau"), r.SizingMetrics()...)
	if t := r.ProbeTable(); t != nil {
		res.Tables = append(res.Tables, *t)
	}
	o.Result = res
	if b, ferr := r.file(); ferr == nil { // the probe's windows: the verdict can be recomputed
		o.Files = []record.File{{Name: FileDrill, Data: b}}
	}
	return o
}

var defTTFTP50 = result.Def{Name: "ttft_p50_ms", Unit: result.Ms, Direction: result.Lower}

// ProbeTable is the capacity probe level by level (nil: no probe).
func (r *Run) ProbeTable() *result.Table {
	c := r.Sizing.Capacity
	if c == nil || c.UserSet {
		return nil
	}
	t := result.Table{Key: TableProbe, Title: "Capacity probe", Note: "closed loop; clients doubled each level until the throughput stopped growing",
		Columns: []string{"clients", "throughput", "ok", "failed", "TTFT p50"}}
	for _, lv := range c.Levels {
		t.AddRow(result.Textf("%d", lv.Clients), result.Of(DefCapacity.Measure(lv.Throughput, max(lv.OK, 1), "")),
			result.Textf("%d", lv.OK), result.Textf("%d", lv.Failed),
			result.Of(defTTFTP50.Measure(lv.TTFTP50Ms, max(lv.OK, 1), "no chat completion ended in the level")))
	}
	return &t
}

// LostClasses are the ways a request is lost, each reported as
// lost_<class> (0 when none was): the stream was cut (truncated), the
// connection closed after the request was sent and before any answer
// (reset), no answer in time (timeout), abandoned at the drain
// (canceled), and sent with no record at all (no_record).
var LostClasses = []string{openai.ClassTruncated, openai.ClassDropped, openai.ClassReset, openai.ClassTimeout, openai.ClassCanceled, "no_record"}

// LostMetrics are what became of the requests sent: lost (no answer
// either way), lost by class (LostClasses), and availability (ok ÷ sent).
func (r *Run) LostMetrics() []result.Metric {
	a := r.Lost
	const none = "no request was sent"
	ms := []result.Metric{
		DefLost.Measure(float64(a.Lost), a.Sent, none).WithReason(fmt.Sprintf("of %d sent: ok %d, explicit errors %d", a.Sent, a.OK, a.Explicit)),
		DefSent.Measure(float64(a.Sent), a.Sent, none),
		DefAvailability.Measure(float64(a.OK)/float64(max(a.Sent, 1)), a.Sent, none),
	}
	classes := slices.Clone(LostClasses)
	for _, class := range slices.Sorted(maps.Keys(a.ByClass)) {
		if !slices.Contains(classes, class) {
			classes = append(classes, class)
		}
	}
	for _, class := range classes {
		d := result.Def{Name: "lost_" + class, Unit: result.Count, Direction: result.Lower}
		ms = append(ms, d.Measure(float64(a.ByClass[class]), a.Sent, none))
	}
	return ms
}

// Outcome is the workload outcome of the drill: its phase, notes on lost
// requests and unperformed events, the record files, and res completed
// with the drill's events (unless res has its own) and lost metrics.
func (r *Run) Outcome(res result.Result, notes ...string) (workload.Outcome, error) {
	o := workload.Outcome{Phases: []summary.Phase{r.Phase}, LoadMode: load.ModeOpen, Notes: notes}
	if r.ProbePhase != nil {
		o.Phases = append([]summary.Phase{*r.ProbePhase}, o.Phases...)
	}
	o.Notes = append(o.Notes, fmt.Sprintf("lost requests: %d of %d sent (ok %d, explicit errors %d)",
		r.Lost.Lost, r.Lost.Sent, r.Lost.OK, r.Lost.Explicit))
	if np := r.NotPerformed(); len(np) > 0 {
		o.Invalid = append(o.Invalid, "drill events did not happen as scheduled, the run is not comparable: "+strings.Join(np, "; "))
	}
	if why := r.notSteady(); why != "" {
		o.Invalid = append(o.Invalid, why)
	}
	steady := DefSteady.Measure(float64(r.Steady.Within)/float64(max(r.Steady.Windows, 1)), r.Steady.Windows, "no window before the first fault").
		WithReason(fmt.Sprintf("windows within the recovery rule before the first fault, from %.1f s to %.1f s", float64(r.Steady.FromNS)/1e9, float64(r.Steady.ToNS)/1e9))
	for _, m := range append(append(r.LostMetrics(), r.SizingMetrics()...), steady, r.boundMetric()) {
		if _, ok := res.Metric(m.Name); !ok {
			res.Metrics = append(res.Metrics, m)
		}
	}
	if t := r.ProbeTable(); t != nil {
		res.Tables = append(res.Tables, *t)
	}
	if res.Events == nil {
		res.Events = r.EventResults()
	}
	o.Result = res
	files, err := r.Files()
	o.Files = files
	return o, err
}

// windowRow is one line of windows.jsonl: the window and the events that
// happened in its first step. Its quantiles count a failed request as
// +∞ (series.Window): each is a number of ms, "+Inf" when failures reach
// its rank, or null when the window has nothing to measure
// (series.Ms); the successes' own are the …_ok_ms beside them.
type windowRow struct {
	StartNS    int64     `json:"start_ns"`
	EndNS      int64     `json:"end_ns"`
	Count      int       `json:"count"`
	OK         int       `json:"ok"`
	Errors     int       `json:"errors"`
	SLOMet     int       `json:"slo_met"`
	Throughput float64   `json:"throughput"`
	Goodput    float64   `json:"goodput"`
	ErrorRate  float64   `json:"error_rate"`
	TTFTP50    series.Ms `json:"ttft_p50_ms"`
	TTFTP99    series.Ms `json:"ttft_p99_ms"`
	E2EP50     series.Ms `json:"e2e_p50_ms"`
	E2EP99     series.Ms `json:"e2e_p99_ms"`
	TTFTP50OK  series.Ms `json:"ttft_p50_ok_ms"`
	TTFTP99OK  series.Ms `json:"ttft_p99_ok_ms"`
	E2EP50OK   series.Ms `json:"e2e_p50_ok_ms"`
	E2EP99OK   series.Ms `json:"e2e_p99_ok_ms"`
	Events     []string  `json:"events,omitempty"` // "kill llm-fast-0"
}

// rowOf is window w as a line of windows.jsonl (without its events).
func rowOf(w series.Window) windowRow {
	return windowRow{StartNS: w.StartNS, EndNS: w.EndNS, Count: w.Count, OK: w.OK, Errors: w.Errors, SLOMet: w.SLOMet,
		Throughput: w.Throughput, Goodput: w.Goodput, ErrorRate: w.ErrorRate,
		TTFTP50: series.Ms(w.TTFTP50), TTFTP99: series.Ms(w.TTFTP99), E2EP50: series.Ms(w.E2EP50), E2EP99: series.Ms(w.E2EP99),
		TTFTP50OK: series.Ms(w.TTFTP50OK), TTFTP99OK: series.Ms(w.TTFTP99OK), E2EP50OK: series.Ms(w.E2EP50OK), E2EP99OK: series.Ms(w.E2EP99OK)}
}

// Files are events.jsonl and windows.jsonl.
func (r *Run) Files() ([]record.File, error) {
	var ev bytes.Buffer
	enc := json.NewEncoder(&ev)
	for _, e := range r.Events {
		if err := enc.Encode(e); err != nil {
			return nil, err
		}
	}
	var wb bytes.Buffer
	enc = json.NewEncoder(&wb)
	step := int64(r.cfg.Series.WithDefaults().Step)
	for _, w := range r.Windows {
		row := rowOf(w)
		for _, e := range r.Events {
			if e.ActualNS > 0 && e.ActualNS >= w.StartNS && e.ActualNS < w.StartNS+step {
				row.Events = append(row.Events, e.Action+" "+e.Target)
			}
		}
		if err := enc.Encode(row); err != nil {
			return nil, err
		}
	}
	dr, err := r.file()
	if err != nil {
		return nil, err
	}
	return []record.File{{Name: FileNames[0], Data: ev.Bytes()}, {Name: FileNames[1], Data: wb.Bytes()}, {Name: FileDrill, Data: dr}}, nil
}

// FileNames are the record files a drill writes besides every run's
// (Files; a drill's workload.Spec lists them).
var FileNames = []string{"events.jsonl", "windows.jsonl", FileDrill}

// DriftMetric is a drift slope as a metric: its slope per minute with
// its 95 % confidence interval, not measurable below 3 points.
func DriftMetric(d result.Def, x series.Drift, why string) result.Metric {
	m := d.Measure(x.SlopePerMin, x.Points, why)
	switch {
	case x.Points == 0:
		return d.NotMeasurable(why)
	case x.Points < 3:
		return d.NotMeasurable(fmt.Sprintf("only %d points, a slope needs 3", x.Points))
	}
	if !math.IsNaN(x.CILow) && !math.IsNaN(x.CIHigh) && m.Measured() {
		m = m.WithInterval(x.CILow, x.CIHigh)
	}
	return m
}

// TableProbe is the key of the capacity probe's table (result.Table.Key).
const TableProbe = "capacity_probe"

// RecoveryBoundPrefix starts the name of the metric holding the recovery
// rule's bound: recovery_bound_<metric>_ms (e.g. recovery_bound_ttft_p99_ms),
// so a figure draws the bound and the series the rule watches from the
// result, not from the run's config.
const RecoveryBoundPrefix = "recovery_bound_"

// boundMetric is the recovery rule's bound as a metric of the result.
func (r *Run) boundMetric() result.Metric {
	d := result.Def{Name: RecoveryBoundPrefix + r.cfg.Recovery.Metric + "_ms", Unit: result.Ms, Direction: result.Lower}
	rule := r.cfg.Recovery
	return d.Measure(float64(rule.Bound)/float64(time.Millisecond), 1, "").
		WithReason(fmt.Sprintf("the recovery rule: %s within %v held for %v", rule.Metric, rule.Bound, rule.Hold))
}
