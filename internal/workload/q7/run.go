package q7

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/sagebench/sagebench/internal/drill"
	"github.com/sagebench/sagebench/internal/quantile"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/series"
	"github.com/sagebench/sagebench/internal/workload"
)

// q7 is Q7 ReconfigDrill.
type q7 struct{ cfg *Config }

var _ workload.Workload = (*q7)(nil)

func (q *q7) Config() workload.Config { return q.cfg }

// Plan lists the load and its reconfiguration events.
func (q *q7) Plan(seed int64) (workload.Plan, error) {
	return q.cfg.Base.Plan("q7", "reconfig", seed, q.cfg.Drill.Events)
}

// Q7's metrics.
var (
	defFailed = result.Def{Name: "failed_by_reconfig", Unit: result.Count, Direction: result.Lower}
	defSteady = result.Def{Name: "steady_p99_ms", Unit: result.Ms, Direction: result.Lower}
	defExcess = result.Def{Name: "p99_excess_worst", Unit: result.Ratio, Direction: result.Lower}
	defPeak   = result.Def{Name: "peak_ms", Unit: result.Ms, Direction: result.Lower}
	defRatio  = result.Def{Name: "p99_excess", Unit: result.Ratio, Direction: result.Lower}
	// defBackground counts the failures outside every event's window.
	defBackground = result.Def{Name: "background_failures", Unit: result.Count, Direction: result.Lower}
)

// defs are the metrics a q7.target may name.
var defs = []result.Def{defFailed, defExcess, defBackground, drill.DefLost, drill.DefAvailability}

// Run drives the load through the reconfiguration schedule.
func (q *q7) Run(ctx context.Context, env *workload.Env) (workload.Outcome, error) {
	r, err := drill.Drive(ctx, env, phaseName, q.cfg.Load, q.cfg.Drill)
	return q.outcome(r, err)
}

// phaseName is the drill's load phase.
const phaseName = "reconfig"

// Recompute computes the result from the run's records alone
// (drill.FromRecords: the requests, events.jsonl, drill.json).
func (q *q7) Recompute(rec workload.Records) (result.Result, error) {
	r, err := drill.FromRecords(rec, phaseName, q.cfg.Load, q.cfg.Drill)
	o, err := q.outcome(r, err)
	return o.Result, err
}

// outcome measures the drill r that Drive (or FromRecords) returned with err.
func (q *q7) outcome(r *drill.Run, err error) (workload.Outcome, error) {
	if np := (*drill.NoPlateauError)(nil); errors.As(err, &np) {
		return r.Aborted(defFailed, np), nil
	}
	if err != nil {
		return workload.Outcome{}, fmt.Errorf("q7: %w", err)
	}
	att, background, noRecord := r.Failures(q.cfg.Attribution.Pre, q.cfg.Attribution.Post)
	failed := defFailed.Measure(float64(len(att)+noRecord), r.Sent, "no request was sent").WithReason(
		fmt.Sprintf("failures sent from %v before an event to %v after it returned, plus %d sent with no record", q.cfg.Attribution.Pre, q.cfg.Attribution.Post, noRecord))
	bg := defBackground.Measure(float64(len(background)), r.Sent, "no request was sent").WithReason("failures outside every event's window")
	steady, ex := q.excess(r)
	worst := defExcess.NotMeasurable("no event was performed")
	events := r.EventResults()
	for i := range events {
		if x, ok := ex[events[i].Seq]; ok {
			events[i].Metrics = append(events[i].Metrics, x...)
			switch after := fmt.Sprintf("after event %d (%s)", events[i].Seq, events[i].Action); {
			case worst.State == result.Never:
			case x[1].State == result.Never:
				worst = defExcess.Never(after + ": " + x[1].Reason)
			case x[1].Measured() && (!worst.Measured() || x[1].Value > worst.Value):
				worst = defExcess.Measure(x[1].Value, 1, "").WithReason(after)
			}
		}
	}
	res := result.New(q.answer(r, failed, bg, worst), failed, bg, worst, steady)
	res.Events = events
	if all := append(att, background...); len(all) > 0 {
		res.Tables = append(res.Tables, failureTable(all))
	}
	return r.Outcome(res)
}

// answer says how many requests the reconfigurations failed and how far
// the p99 rose around them.
func (q *q7) answer(r *drill.Run, failed, bg, worst result.Metric) string {
	performed := 0
	for _, e := range r.Events {
		if e.Outcome == drill.OutcomeOK {
			performed++
		}
	}
	return fmt.Sprintf("%d of %d reconfigurations performed; %s requests failed around them and %s elsewhere (of %d sent); the windowed %s rose at most %s over steady",
		performed, len(r.Events), result.Short(failed), result.Short(bg), r.Sent, q.cfg.Drill.Recovery.Metric, result.Short(worst))
}

// maxFailureRows bounds the failure table.
const maxFailureRows = 50

func failureTable(att []drill.Attribution) result.Table {
	t := result.Table{Key: TableFailed, Title: "Failed requests", Note: "charged to the event whose window holds the intended send; background: in none",
		Columns: []string{"request", "error class", "event"}}
	for i, a := range att {
		if i == maxFailureRows {
			t.Note += fmt.Sprintf("; the first %d of %d", maxFailureRows, len(att))
			break
		}
		ev := result.Textf("%d", a.Event)
		if a.Event < 0 {
			ev = result.Text("background")
		}
		t.AddRow(result.Text(a.ID), result.Text(a.Class), ev)
	}
	return t
}

// excess compares the windows within one width of each event with the
// steady windows (those farther from every event): the steady metric,
// and per event its peak and peak ÷ steady. A window's metric counts a
// failed request as +∞ (series.Window): a peak on such a window is +∞,
// state never, and so is its ratio; a steady median on one is never.
func (q *q7) excess(r *drill.Run) (result.Metric, map[int][]result.Metric) {
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
	base := defSteady.NotMeasurable("no window away from the events had a value")
	if len(steady) > 0 {
		slices.Sort(steady)
		med := quantile.OfSorted(steady, 0.5) // nearest rank, the one definition
		base = defSteady.Measure(med, len(steady), "").WithReason("median windowed value away from every event")
		if math.IsInf(med, 1) {
			base = defSteady.Never(fmt.Sprintf("failed requests reached the %s's rank in half or more of the %d windows away from every event: the median is +∞", q.cfg.Drill.Recovery.Metric, len(steady)))
		}
	}
	out := map[int][]result.Metric{}
	for _, e := range r.Events {
		if e.ActualNS != 0 {
			out[e.Seq] = q.peak(r.Windows, func(w series.Window) bool { return near(w, e.ActualNS) }, m, base)
		}
	}
	return base, out
}

// peak is the largest metric m of the windows near an event and its
// ratio to the steady base.
func (q *q7) peak(ws []series.Window, near func(series.Window) bool, m series.Metric, base result.Metric) []result.Metric {
	peak, n := 0.0, 0
	for _, w := range ws {
		if v := m(w); near(w) && !math.IsNaN(v) {
			peak, n = max(peak, v), n+1
		}
	}
	p := defPeak.Measure(peak, n, "no window near the event had a value")
	ratio := defRatio.NotMeasurable("the steady value or the peak is missing")
	switch {
	case math.IsInf(peak, 1):
		why := fmt.Sprintf("+∞: a window within one width of the event had failed requests at its %s's rank (a failed request counts +∞)", q.cfg.Drill.Recovery.Metric)
		p = defPeak.Never(why)
		if base.Measured() {
			ratio = defRatio.Never(why)
		}
	case p.Measured() && base.Measured() && base.Value > 0:
		ratio = defRatio.Measure(peak/base.Value, n, "")
	}
	return []result.Metric{p, ratio}
}
