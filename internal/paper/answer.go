package paper

import (
	"fmt"
	"math"
	"strconv"

	"github.com/sagebench/sagebench/internal/catalog"
	"github.com/sagebench/sagebench/internal/result"
	"github.com/sagebench/sagebench/internal/workload"
)

// answerSource is the result table behind q's answer: the table its
// figure reads (the key its workload.Spec registers), or for a drill its
// events with their recovery (never the capacity probe); false when the
// result has neither.
func answerSource(q string, r *result.Result) (result.Table, bool) {
	if r == nil {
		return result.Table{}, false
	}
	spec, err := catalog.Lookup(q)
	if err != nil {
		return result.Table{}, false
	}
	if spec.Figure.Recipe == workload.FigureTimeline {
		return eventTable(r.Events), len(r.Events) > 0
	}
	if t, ok := r.Table(spec.Figure.Table); ok {
		return t, true
	}
	for _, t := range r.Tables { // a record from before tables had keys
		if t.Key != "" {
			return result.Table{}, false
		}
	}
	if len(r.Tables) == 0 {
		return result.Table{}, false
	}
	return r.Tables[0], true
}

// eventTable is a drill's events: when each happened, its outcome, its
// recovery (by the drill's recovery rule) and the worst windowed p99
// after it.
func eventTable(events []result.Event) result.Table {
	t := result.Table{Key: "events", Title: "Events and recovery",
		Note:    "recovery: from the event (a fault with a duration: from its end) until the windowed p99 was back within the recovery bound for the hold time; worst: the highest windowed p99 after the event",
		Columns: []string{"event", "at (s)", "outcome", "recovery", "worst p99"}}
	for _, e := range events {
		at := "–"
		if e.AtS != nil {
			at = strconv.FormatFloat(*e.AtS, 'f', 1, 64)
		}
		rec, worst := result.Text("–"), result.Text("–")
		for _, m := range e.Metrics {
			switch m.Name {
			case "recovery_ms", "recovery_s":
				rec = result.Of(m)
			case "worst_ms":
				worst = result.Of(m)
			}
		}
		t.AddRow(result.Textf("%d. %s %s", e.Seq+1, e.Action, e.Target), result.Text(at), result.Text(e.Outcome), rec, worst)
	}
	return t
}

// fixedCI is mean ± half-interval in fixed point: as many decimals as
// the half-interval's two significant digits need, never more than the
// mean's three significant digits (no "1.000000 ± 0.000000"); a
// fraction in percent. An asymmetric interval is written (lo–hi).
func fixedCI(mean, lo, hi float64, unit string) string {
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return result.MeanCI(mean, lo, hi, unit)
	}
	scale, suffix := 1.0, " "+unit
	switch unit {
	case result.Fraction:
		scale, suffix = 100, " %"
	case result.Ratio:
		suffix = "×"
	case result.Count, result.Index:
		suffix = ""
	case result.Percent:
		suffix = " %"
	}
	m, l, h := mean*scale, lo*scale, hi*scale
	half := (h - l) / 2
	dec := 3
	if a := math.Abs(m); a > 0 {
		dec = min(dec, max(0, 2-int(math.Floor(math.Log10(a)))))
	}
	if half > 0 {
		dec = min(dec, max(0, 1-int(math.Floor(math.Log10(half)))))
	}
	f := func(v float64) string { return result.Group(strconv.FormatFloat(v, 'f', dec, 64)) }
	if math.Abs((h-m)-(m-l)) <= 1e-6*math.Max(1, math.Abs(m)) {
		return f(m) + " ± " + f(half) + suffix
	}
	return fmt.Sprintf("%s (%s–%s)%s", f(m), f(l), f(h), suffix)
}
