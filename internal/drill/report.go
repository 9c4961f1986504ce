package drill

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/record"
	"github.com/sagebench/sagebench/internal/series"
	"github.com/sagebench/sagebench/internal/summary"
	"github.com/sagebench/sagebench/internal/workload"
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
		WorstMs: finite(r.WorstMs), BoundMs: r.BoundMs, HoldMs: r.HoldMs, Metric: r.MetricKey, Note: r.Note}
	if r.Recovered {
		x.AfterMs = finite(r.AfterMs)
	}
	return x
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Report is a drill's part of run.json.
type Report struct {
	Events       []Result        `json:"events"`
	Recovery     []EventRecovery `json:"recovery"`
	Lost         Accounting      `json:"lost"`
	NotPerformed []string        `json:"not_performed,omitempty"`
	// Comparable is false when an event was not performed: the run did
	// not undergo the drill it claims.
	Comparable bool          `json:"comparable"`
	Series     series.Config `json:"series"`
	Rule       Recovery      `json:"recovery_rule"`
	Details    any           `json:"details,omitempty"` // the Q's own measurements
}

// Report returns the drill's report with the Q's details.
func (r *Run) Report(details any) Report {
	np := r.NotPerformed()
	return Report{Events: r.Events, Recovery: r.Recovery, Lost: r.Lost, NotPerformed: np, Comparable: len(np) == 0,
		Series: r.cfg.Series.WithDefaults(), Rule: r.cfg.Recovery, Details: details}
}

// Outcome is the workload outcome of the drill: its phase, the extra
// metrics (with sent, lost and availability added), notes on lost
// requests and unperformed events, the report and the record files.
func (r *Run) Outcome(extra map[string]float64, details any, notes ...string) (workload.Outcome, error) {
	if extra == nil {
		extra = map[string]float64{}
	}
	extra["sent"], extra["lost"] = float64(r.Lost.Sent), float64(r.Lost.Lost)
	extra["availability"] = r.Availability()
	o := workload.Outcome{Phases: []summary.Phase{r.Phase}, LoadMode: load.ModeOpen, Extra: extra, Notes: notes}
	o.Notes = append(o.Notes, fmt.Sprintf("lost requests: %d of %d sent (ok %d, explicit errors %d)",
		r.Lost.Lost, r.Lost.Sent, r.Lost.OK, r.Lost.Explicit))
	o.Notes = append(o.Notes, r.recoveryNotes()...)
	rep := r.Report(details)
	if !rep.Comparable {
		o.Invalid = append(o.Invalid, "drill events did not happen as scheduled, the run is not comparable: "+strings.Join(rep.NotPerformed, "; "))
	}
	o.Drill = rep
	files, err := r.Files()
	o.Files = files
	return o, err
}

// Availability is ok ÷ sent (1 when nothing was sent).
func (r *Run) Availability() float64 {
	if r.Lost.Sent == 0 {
		return 1
	}
	return float64(r.Lost.OK) / float64(r.Lost.Sent)
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
			TTFTP50: finite(w.TTFTP50), TTFTP99: finite(w.TTFTP99), E2EP50: finite(w.E2EP50), E2EP99: finite(w.E2EP99)}
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

// recoveryNotes says, per performed event, when the metric was back.
func (r *Run) recoveryNotes() []string {
	var out []string
	for _, x := range r.Recovery {
		at := 0.0
		for _, e := range r.Events {
			if e.Seq == x.Seq {
				at = float64(e.ActualNS) / 1e9
			}
		}
		msg := "never back within the bound for the hold time"
		if x.Recovered && x.AfterMs != nil {
			msg = fmt.Sprintf("back within %.0f ms after %.2f s", x.BoundMs, *x.AfterMs/1000)
		}
		out = append(out, fmt.Sprintf("event %s %s at %.1f s: %s %s", x.Action, x.Target, at, x.Metric, msg))
	}
	return out
}
