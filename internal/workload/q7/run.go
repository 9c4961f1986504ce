package q7

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/sagebench/sagebench/internal/drill"
	"github.com/sagebench/sagebench/internal/load"
	"github.com/sagebench/sagebench/internal/series"
	"github.com/sagebench/sagebench/internal/workload"
)

// q7 is Q7 ReconfigDrill.
type q7 struct{ cfg *Config }

var _ workload.Workload = (*q7)(nil)

func (q *q7) Config() workload.Config { return q.cfg }

// Plan lists the load and its reconfiguration events.
func (q *q7) Plan(seed int64) (workload.Plan, error) {
	s, err := load.NewSchedule(q.cfg.Load.Schedule, seed)
	if err != nil {
		return workload.Plan{}, fmt.Errorf("q7.load.%w", err)
	}
	p := workload.Plan{Phases: []workload.PlannedPhase{{Name: "reconfig", Process: q.cfg.Load.Schedule.Process,
		Requests: s.Len(), Rate: s.Rate(), Span: s.Span(), Mix: q.cfg.Load.Mix(seed, s.Len()),
		Tokens: q.cfg.Load.Tokens(seed, s)}}}
	for _, e := range drill.Expand(q.cfg.Drill.Events) {
		p.Notes = append(p.Notes, "event: "+e.String())
	}
	return p, nil
}

// Run drives the load through the reconfiguration schedule.
func (q *q7) Run(ctx context.Context, env *workload.Env) (workload.Outcome, error) {
	r, err := drill.Drive(ctx, env, "reconfig", q.cfg.Load, q.cfg.Drill)
	if err != nil {
		return workload.Outcome{}, fmt.Errorf("q7: %w", err)
	}
	att := r.Attribute()
	d := details{Failures: att}
	extra := map[string]float64{"failed_by_reconfig": float64(len(att))}
	steady, ex := q.excess(r)
	d.SteadyMs, d.Excess = drill.Finite(steady, 0), ex
	worst := 0.0
	for _, x := range d.Excess {
		worst = max(worst, x.Ratio)
	}
	extra["p99_excess_worst"] = worst
	var notes []string
	for _, a := range att {
		notes = append(notes, fmt.Sprintf("failed request %s (%s) attributed to event %d", a.ID, a.Class, a.Event))
	}
	return r.Outcome(extra, d, notes...)
}

type details struct {
	Failures []drill.Attribution `json:"failures"`
	SteadyMs float64             `json:"steady_p99_ms"` // median windowed metric away from events
	Excess   []excess            `json:"p99_excess"`
}

// excess is the worst windowed metric around one event over the steady value.
type excess struct {
	Seq    int     `json:"seq"`
	Action string  `json:"action"`
	PeakMs float64 `json:"peak_ms"`
	Ratio  float64 `json:"ratio"` // peak ÷ steady
}

// excess compares the windows within one width of each event with the
// steady windows (those farther from every event).
func (q *q7) excess(r *drill.Run) (float64, []excess) {
	m, _ := series.MetricByName(q.cfg.Drill.Recovery.Metric)
	width := int64(q.cfg.Drill.Series.WithDefaults().Width)
	near := func(w series.Window, at int64) bool { return w.EndNS > at-width && w.StartNS < at+width }
	var steady []float64
	for _, w := range r.Windows {
		quiet := true
		for _, e := range r.Events {
			quiet = quiet && (e.ActualNS == 0 || !near(w, e.ActualNS))
		}
		if v := m(w); quiet && !math.IsNaN(v) {
			steady = append(steady, v)
		}
	}
	base := math.NaN()
	if len(steady) > 0 {
		slices.Sort(steady)
		base = steady[len(steady)/2]
	}
	var out []excess
	for _, e := range r.Events {
		if e.ActualNS == 0 {
			continue
		}
		peak := 0.0
		for _, w := range r.Windows {
			if v := m(w); near(w, e.ActualNS) && !math.IsNaN(v) {
				peak = max(peak, v)
			}
		}
		out = append(out, excess{Seq: e.Seq, Action: e.Action, PeakMs: peak, Ratio: drill.Finite(peak/base, 0)})
	}
	return base, out
}
