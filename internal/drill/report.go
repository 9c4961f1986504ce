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
	// DefRecovery is an event's recovery: the time from the event until
	// the windowed metric was back within its bound for the hold time.
	DefRecovery = result.Def{Name: "recovery_ms", Unit: result.Ms, Direction: result.Lower}
	// DefWorst is the worst windowed metric between the event and its
	// recovery (or the end).
	DefWorst = result.Def{Name: "worst_ms", Unit: result.Ms, Direction: result.Lower}
)

// EventRecovery is the recovery after one event; AfterMs is absent when
// the metric never came back within the bound for the hold time.
type EventRecovery struct {
	Seq       int      `json:"seq"`
	Action    string   `json:"action"`
	Target    string   `json:"target"`
	Recovered bool     `json:"recovered"`
	AfterMs   *float64 `json:"after_ms"`
	WorstMs   *float64 `json:"worst_ms"`
	BoundMs   float64  `json:"bound_ms"`
	HoldMs    float64  `json:"hold_ms"`
	Metric    string   `json:"metric"`
	Note      string   `json:"note,omitempty"`
}

func newEventRecovery(e Result, r series.Recovery) EventRecovery {
	x := EventRecovery{Seq: e.Seq, Action: e.Action, Target: e.Target, Recovered: r.Recovered,
		WorstMs: record.F(r.WorstMs), BoundMs: r.BoundMs, HoldMs: r.HoldMs, Metric: r.MetricKey, Note: r.Note}
	if r.Recovered {
		x.AfterMs = record.F(r.AfterMs)
	}
	return x
}

// Metrics are the event's recovery (measured with the window step as its
// resolution, or never) and its worst windowed value.
func (x EventRecovery) Metrics(step time.Duration) []result.Metric {
	rec := DefRecovery.Never(fmt.Sprintf("%s never back within %.0f ms for %.0f ms by the end of the run", x.Metric, x.BoundMs, x.HoldMs))
	if x.Recovered && x.AfterMs != nil {
		rec = DefRecovery.Measure(*x.AfterMs, 1, "").WithResolution(float64(step) / float64(time.Millisecond)).
			WithReason(fmt.Sprintf("%s back within %.0f ms for %.0f ms", x.Metric, x.BoundMs, x.HoldMs))
	}
	worst := DefWorst.NotMeasurable("no window after the event had a value")
	if x.WorstMs != nil {
		worst = DefWorst.Measure(*x.WorstMs, 1, "")
	}
	return []result.Metric{rec, worst}
}

// EventResults are the drill's events for the result: when each was
// performed, its outcome and, for a performed one, its recovery.
func (r *Run) EventResults() []result.Event {
	step := r.cfg.Series.WithDefaults().Step
	var out []result.Event
	for _, e := range r.Events {
		ev := result.Event{Seq: e.Seq, Action: e.Action, Target: e.Target, Outcome: e.Outcome}
		if e.Outcome == OutcomeOK && e.ActualNS > 0 {
			at := float64(e.ActualNS) / 1e9
			ev.AtS = &at
		}
		if x, ok := r.RecoveryOf(e.Seq); ok {
			ev.Metrics = x.Metrics(step)
		}
		out = append(out, ev)
	}
	return out
}

// LostMetrics are what became of the requests sent: lost (no answer
// either way), each lost class, and availability (ok ÷ sent).
func (r *Run) LostMetrics() []result.Metric {
	a := r.Lost
	const none = "no request was sent"
	ms := []result.Metric{
		DefLost.Measure(float64(a.Lost), a.Sent, none).WithReason(fmt.Sprintf("of %d sent: ok %d, explicit errors %d", a.Sent, a.OK, a.Explicit)),
		DefSent.Measure(float64(a.Sent), a.Sent, none),
		DefAvailability.Measure(float64(a.OK)/float64(max(a.Sent, 1)), a.Sent, none),
	}
	for _, class := range slices.Sorted(maps.Keys(a.ByClass)) {
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
	o.Notes = append(o.Notes, fmt.Sprintf("lost requests: %d of %d sent (ok %d, explicit errors %d)",
		r.Lost.Lost, r.Lost.Sent, r.Lost.OK, r.Lost.Explicit))
	if np := r.NotPerformed(); len(np) > 0 {
		o.Invalid = append(o.Invalid, "drill events did not happen as scheduled, the run is not comparable: "+strings.Join(np, "; "))
	}
	for _, m := range r.LostMetrics() {
		if _, ok := res.Metric(m.Name); !ok {
			res.Metrics = append(res.Metrics, m)
		}
	}
	if res.Events == nil {
		res.Events = r.EventResults()
	}
	o.Result = res
	files, err := r.Files()
	o.Files = files
	return o, err
}

// windowRow is one line of windows.jsonl: the window (percentiles null
// when it has no samples) and the events that happened in its first step.
type windowRow struct {
	StartNS    int64    `json:"start_ns"`
	EndNS      int64    `json:"end_ns"`
	Count      int      `json:"count"`
	OK         int      `json:"ok"`
	Errors     int      `json:"errors"`
	SLOMet     int      `json:"slo_met"`
	Throughput float64  `json:"throughput"`
	Goodput    float64  `json:"goodput"`
	ErrorRate  float64  `json:"error_rate"`
	TTFTP50    *float64 `json:"ttft_p50_ms"`
	TTFTP99    *float64 `json:"ttft_p99_ms"`
	E2EP50     *float64 `json:"e2e_p50_ms"`
	E2EP99     *float64 `json:"e2e_p99_ms"`
	Events     []string `json:"events,omitempty"` // "kill llm-fast-0"
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
		row := windowRow{StartNS: w.StartNS, EndNS: w.EndNS, Count: w.Count, OK: w.OK, Errors: w.Errors, SLOMet: w.SLOMet,
			Throughput: w.Throughput, Goodput: w.Goodput, ErrorRate: w.ErrorRate,
			TTFTP50: record.F(w.TTFTP50), TTFTP99: record.F(w.TTFTP99), E2EP50: record.F(w.E2EP50), E2EP99: record.F(w.E2EP99)}
		for _, e := range r.Events {
			if e.ActualNS > 0 && e.ActualNS >= w.StartNS && e.ActualNS < w.StartNS+step {
				row.Events = append(row.Events, e.Action+" "+e.Target)
			}
		}
		if err := enc.Encode(row); err != nil {
			return nil, err
		}
	}
	return []record.File{{Name: "events.jsonl", Data: ev.Bytes()}, {Name: "windows.jsonl", Data: wb.Bytes()}}, nil
}

// Availability is ok ÷ sent (1 when nothing was sent).
func (r *Run) Availability() float64 {
	if r.Lost.Sent == 0 {
		return 1
	}
	return float64(r.Lost.OK) / float64(r.Lost.Sent)
}

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
